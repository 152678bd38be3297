// Optimizer: subquery_decorrelation (see decorrelate.h).
//
// A conjunct `[NOT] EXISTS (S)` or `x [NOT] IN (S)` of a filter over input I becomes
// SemiJoin / AntiJoin(I, R) where R is S's rows computed once:
//
//   - S reads no column of I's row: R is S itself, unchanged.
//   - Otherwise S must be [Distinct | Sort | Project]* over [Filter over] a source that
//     reads nothing of I. The filter's conjuncts (and the seeks a table scan absorbed)
//     split into those that read I — each must be an equality between an expression of
//     I's row and one of the source row, which goes to the join's condition — and the
//     rest, which stay on the source. Anything else leaves the subquery as it is.
//
// The join condition is evaluated in S's own frame (level 0: the source row, level 1:
// I's row, further levels: the outer rows), so the moved conjuncts need no rewriting.
// NOT IN keeps SQL's NULL semantics: a left row is dropped when some row of S for it has
// `x IS NULL OR value IS NULL OR x = value`, so an empty S keeps every row (even x NULL)
// and a NULL value in S drops every row.
#include "optimizer/decorrelate.h"

#include <set>

#include "optimizer/optimizer.h"
#include "planner/type_coercion.h"
#include "catalog/catalog.h"
#include "common/strings.h"
#include "types/logical_type.h"

namespace quereus {


namespace {

// Evaluates the same for the same row: no subquery, only deterministic functions.
bool plain(const ScalarExpr& e) {
  if (is_subquery(e.kind)) return false;
  if (e.kind == ScalarKind::kFunction && !(static_cast<const FunctionScalar&>(e).fn->flags & kDeterministic)) return false;
  for (const ScalarPtr* o : e.operands())
    if (!plain(**o)) return false;
  return true;
}

// An equality the hash path may key on: BINARY, not by elapsed time, no JSON.
bool hashable(const Collation* coll, bool duration_order, const ScalarExpr& a, const ScalarExpr& b) {
  if (coll && coll != &Collation::binary()) return false;
  return !duration_order && a.type != QRS_LT_JSON && b.type != QRS_LT_JSON;
}

// The predicate a seek the module absorbed stands for (optimizer.cc as_pushable, undone):
// `column op value` under the column's collation, or `column IN (list)`.
ScalarPtr pushed_predicate(const TableScanNode& scan, const PushedFilter& pf) {
  if (pf.column < 0 || pf.column >= static_cast<int>(scan.columns.size())) return nullptr;
  if (pf.in_subquery) return pf.in_subquery;  // `column IN (select …)` as it was written
  if (pf.op == QRS_OP_FORM) return pf.form_source;  // an access form's conjunct, as written
  const Attribute& a = scan.columns[pf.column];
  auto col = std::make_shared<ColumnScalar>(0, pf.column, a.id);
  col->type = a.type;
  col->set_collation(a.collation, a.collation_source);
  if (pf.op == QRS_OP_IN) {
    auto in = std::make_shared<InListScalar>();
    in->operand = col;
    in->list = pf.in_list;
    in->collation = a.collation;
    in->duration_order = a.type == QRS_LT_TIMESPAN;
    for (const auto& x : pf.in_list) in->duration_order = in->duration_order || x->type == QRS_LT_TIMESPAN;
    in->type = QRS_LT_BOOLEAN;
    return in;
  }
  ast::BinaryOp op;
  switch (pf.op) {
    case QRS_OP_EQ: op = ast::BinaryOp::kEq; break;
    case QRS_OP_LT: op = ast::BinaryOp::kLt; break;
    case QRS_OP_LE: op = ast::BinaryOp::kLe; break;
    case QRS_OP_GT: op = ast::BinaryOp::kGt; break;
    case QRS_OP_GE: op = ast::BinaryOp::kGe; break;
    default: return nullptr;
  }
  if (!pf.value) return nullptr;
  auto b = std::make_shared<BinaryScalar>(op, col, pf.value);
  b->type = QRS_LT_BOOLEAN;
  b->compare_collation = a.collation ? a.collation : &Collation::binary();
  return b;
}

// The estimated cost of one run of a plan: its scan's access cost under the operators that
// do not multiply rows, the row estimate otherwise.
double run_cost(const RelNode& n) {
  switch (n.kind) {
    case RelKind::kTableScan: {
      const auto& scan = static_cast<const TableScanNode&>(n);
      return scan.planned ? std::max(scan.plan.cost, 1.0) : estimate_rows(n);
    }
    case RelKind::kFilter: return run_cost(*static_cast<const FilterNode&>(n).input);
    case RelKind::kProject: return run_cost(*static_cast<const ProjectNode&>(n).input);
    case RelKind::kDistinct: return run_cost(*static_cast<const DistinctNode&>(n).input);
    case RelKind::kSort: return run_cost(*static_cast<const SortNode&>(n).input);
    case RelKind::kLimit: return run_cost(*static_cast<const LimitNode&>(n).input);
    case RelKind::kAggregate: return run_cost(*static_cast<const AggregateNode&>(n).input);
    default: return std::max(estimate_rows(n), 1.0);
  }
}

// One conjunct recognized: the join it becomes (left side and columns still to be set).
struct SemiJoinSpec {
  ScalarPtr conjunct;  // the filter conjunct it replaces
  double probe_cost = 0;  // a correlated subquery: one run of it as planned (0: uncorrelated)
  bool anti = false;
  RelPtr right;
  ScalarPtr probe;  // IN: the operand, evaluated over the left row
  std::vector<ScalarPtr> on;
  std::vector<SemiJoinNode::Key> equi;
  int null_aware_key = -1;
};

class Decorrelator {
 public:
  Decorrelator(const DecorrelationOptions& options, const RelNode& input)
      : options_(options), input_(input), lw_(static_cast<int>(input.columns.size())) {}

  // Recognizes `[NOT]* [NOT] EXISTS (S)` / `[NOT]* x [NOT] IN (S)`.
  bool recognize(const ScalarPtr& conjunct, SemiJoinSpec* spec) {
    const ScalarExpr* e = conjunct.get();
    bool negate = false;
    while (e->kind == ScalarKind::kUnary && static_cast<const UnaryScalar*>(e)->op == ast::UnaryOp::kNot) {
      negate = !negate;
      e = static_cast<const UnaryScalar*>(e)->operand.get();
    }
    if (e->kind != ScalarKind::kExists && e->kind != ScalarKind::kInSubquery) return false;
    const auto& sq = static_cast<const SubqueryScalar&>(*e);
    if (!sq.plan || (sq.kind == ScalarKind::kInSubquery && (!sq.operand || sq.plan->columns.empty()))) return false;
    // NOT (x IN S) is x NOT IN S: both are NULL exactly when the other is, and a filter
    // keeps neither.
    spec->anti = sq.negated != negate;
    FrameRefs refs;
    collect_reads(*sq.plan, 0, refs);
    if (refs.unknown) return false;
    // A subquery that reads an outer row runs once per row; one with a non-deterministic
    // function must keep doing so, and so must an uncorrelated one whose rows may differ
    // evaluation to evaluation (it counts as correlated: planner.cc bind_subquery).
    if ((refs.nondeterministic && refs.frames.upper_bound(0) != refs.frames.end()) || refs.volatile_call || refs.per_row)
      return false;
    spec->conjunct = conjunct;
    // An uncorrelated EXISTS stays a predicate: the filter evaluates it once per open, as
    // a gate (runtime FilterOp), where a semi join would re-run it per row.
    if (!refs.reads(1) && sq.kind == ScalarKind::kExists) return false;
    if (!refs.reads(1)) return !seekable_membership(sq, spec->anti) && uncorrelated(sq, spec);
    spec->probe_cost = run_cost(*sq.plan);
    return correlated(sq, spec);
  }

  // `conjunct` is an uncorrelated `column IN (S)` the input scan seeks by.
  bool seeks(const ScalarPtr& conjunct) const {
    if (conjunct->kind != ScalarKind::kInSubquery) return false;
    const auto& sq = static_cast<const SubqueryScalar&>(*conjunct);
    if (!sq.plan) return false;
    FrameRefs refs;
    collect_reads(*sq.plan, 0, refs);
    return !refs.unknown && !refs.reads(1) && !refs.nondeterministic && seekable_membership(sq, sq.negated);
  }

 private:
  // `column IN (S)` over a table scan whose primary key or an index leads with the column:
  // S's members become the scan's IN seek (optimizer.cc as_pushable), which visits only
  // the rows they name, where the semi join would read the whole table.
  bool seekable_membership(const SubqueryScalar& sq, bool anti) const {
    if (anti || sq.kind != ScalarKind::kInSubquery || input_.kind != RelKind::kTableScan) return false;
    const auto* col = sq.operand && sq.operand->kind == ScalarKind::kColumn
                          ? static_cast<const ColumnScalar*>(sq.operand.get())
                          : nullptr;
    if (!col || col->level != 0 || sq.probe_cast != QRS_LT_ANY || sq.duration_order) return false;
    const TableSchema& t = static_cast<const TableScanNode&>(input_).table->schema;
    if (!t.primary_key.empty() && t.primary_key[0].column == col->slot) return true;
    for (const IndexSchema& ix : t.indexes)
      if (!ix.where && !ix.columns.empty() && ix.columns[0].column == col->slot) return true;
    return false;
  }


  // S reads nothing of the filter's row: it is the right side as it stands.
  bool uncorrelated(const SubqueryScalar& sq, SemiJoinSpec* spec) {
    // Plans are owned by their statement and not modified here; the join only reads it.
    spec->right = std::const_pointer_cast<RelNode>(sq.plan);
    if (sq.kind == ScalarKind::kInSubquery) {
      const Attribute& a = sq.plan->columns[0];
      auto value = std::make_shared<ColumnScalar>(0, 0, a.id);
      value->type = a.type;
      value->set_collation(a.collation, a.collation_source);
      membership(sq, value, spec);
    }
    return true;
  }

  bool correlated(const SubqueryScalar& sq, SemiJoinSpec* spec) {
    const bool in = sq.kind == ScalarKind::kInSubquery;
    // Peel what does not change which rows exist or which values are members.
    RelPtr cur = std::const_pointer_cast<RelNode>(sq.plan);
    ScalarPtr value;  // IN: the member value over `cur`'s row (null: its first column)
    for (;;) {
      if (cur->kind == RelKind::kDistinct) {
        cur = static_cast<const DistinctNode&>(*cur).input;
      } else if (cur->kind == RelKind::kSort) {
        cur = static_cast<const SortNode&>(*cur).input;
      } else if (cur->kind == RelKind::kProject) {
        const auto& p = static_cast<const ProjectNode&>(*cur);
        if (in) {
          int slot = 0;
          if (value) {
            if (value->kind != ScalarKind::kColumn) return false;
            const auto& c = static_cast<const ColumnScalar&>(*value);
            if (c.level != 0) return false;
            slot = c.slot;
          }
          if (slot < 0 || slot >= static_cast<int>(p.exprs.size())) return false;
          value = p.exprs[slot];
        }
        cur = p.input;
      } else {
        break;
      }
    }
    RelPtr source = cur;
    std::vector<ScalarPtr> conjuncts;
    if (cur->kind == RelKind::kFilter) {
      const auto& f = static_cast<const FilterNode&>(*cur);
      split_conjuncts(f.predicate, conjuncts);
      source = f.input;
    }
    // A table scan is planned afresh without the seeks it absorbed (they may be the
    // correlation); other sources must read nothing of the filter's row.
    std::shared_ptr<TableScanNode> fresh;
    if (source->kind == RelKind::kTableScan) {
      const auto& scan = static_cast<const TableScanNode&>(*source);
      for (size_t i = 0; i < scan.filters.size(); ++i) {
        // Filters the module left to the residual are in the filter's predicate already.
        if (!scan.planned || i >= scan.plan.handled.size() || !scan.plan.handled[i]) continue;
        ScalarPtr c = pushed_predicate(scan, scan.filters[i]);
        if (!c) return false;
        conjuncts.push_back(c);
      }
      fresh = std::make_shared<TableScanNode>(scan);
      fresh->filters.clear();
      fresh->ordering.clear();
      fresh->plan = PlanResult{};
      fresh->planned = false;
    } else {
      FrameRefs r;
      collect_reads(*source, 0, r);
      if (r.unknown || r.reads(1)) return false;
    }
    if (in && !value) {
      const Attribute& a = cur->columns[0];
      auto c = std::make_shared<ColumnScalar>(0, 0, a.id);
      c->type = a.type;
      c->set_collation(a.collation, a.collation_source);
      value = c;
    }
    // Split: correlation equalities go to the join, the rest stays on the source.
    std::vector<ScalarPtr> inner;
    for (const auto& c : conjuncts) {
      FrameRefs r = frames_of(c);
      if (!r.reads(1)) {
        inner.push_back(c);
        continue;
      }
      if (c->kind != ScalarKind::kBinary) return false;
      const auto& b = static_cast<const BinaryScalar&>(*c);
      if (b.op != ast::BinaryOp::kEq && b.op != ast::BinaryOp::kEqEq) return false;
      auto outer_side = [](const ScalarPtr& s) { return !frames_of(s).reads(0) && plain(*s); };
      auto inner_side = [](const ScalarPtr& s) { return !frames_of(s).reads(1) && plain(*s); };
      const ScalarPtr* outer = nullptr;
      const ScalarPtr* own = nullptr;
      if (outer_side(b.left) && inner_side(b.right)) {
        outer = &b.left;
        own = &b.right;
      } else if (outer_side(b.right) && inner_side(b.left)) {
        outer = &b.right;
        own = &b.left;
      } else {
        return false;
      }
      spec->on.push_back(c);
      if (options_.hash_keys && hashable(b.compare_collation, b.duration_order, **outer, **own))
        spec->equi.push_back({*outer, *own});
    }
    if (in) membership(sq, value, spec);
    // Everything is known to be safe: build the right side.
    if (fresh) {
      spec->right = options_.rewrite(filter_over(fresh, inner));
      // The moved conjuncts read the source's row layout, which the rewrite must keep.
      if (spec->right->columns.size() != fresh->columns.size()) return false;
    } else {
      spec->right = filter_over(source, inner);
    }
    return true;
  }

  // The membership test of `x IN (S)` whose member is `value` (over the right row): the
  // IN's comparison, with its plan-time conversions, collation and duration order.
  void membership(const SubqueryScalar& sq, const ScalarPtr& value, SemiJoinSpec* spec) {
    spec->probe = sq.operand;
    // Left slot lw_ holds the probe; it shows as its operand's column when it is one.
    const auto* col = sq.operand->kind == ScalarKind::kColumn ? static_cast<const ColumnScalar*>(sq.operand.get()) : nullptr;
    int attr = col && col->level == 0 ? col->attr_id : 0;
    auto probe = std::make_shared<ColumnScalar>(1, lw_, attr);
    probe->type = sq.operand->type;
    probe->set_collation(sq.operand->collation, sq.operand->collation_source());
    ScalarPtr x = with_cast(probe, sq.probe_cast);
    ScalarPtr y = with_cast(value, sq.value_cast);
    const Collation* coll = sq.collation ? sq.collation : &Collation::binary();
    auto eq = std::make_shared<BinaryScalar>(ast::BinaryOp::kEq, x, y);
    eq->type = QRS_LT_BOOLEAN;
    eq->compare_collation = coll;
    eq->duration_order = sq.duration_order;
    ScalarPtr test = eq;
    if (spec->anti) {
      // NOT IN drops the row when the comparison is true or unknown.
      auto x_null = std::make_shared<IsNullScalar>(x, false);
      auto y_null = std::make_shared<IsNullScalar>(y, false);
      x_null->type = y_null->type = QRS_LT_BOOLEAN;
      auto either = std::make_shared<BinaryScalar>(ast::BinaryOp::kOr, x_null, y_null);
      either->type = QRS_LT_BOOLEAN;
      auto any = std::make_shared<BinaryScalar>(ast::BinaryOp::kOr, either, eq);
      any->type = QRS_LT_BOOLEAN;
      test = any;
    }
    spec->on.push_back(test);
    FrameRefs vr = frames_of(value);
    if (options_.hash_keys && !vr.reads(1) && plain(*value) && hashable(coll, sq.duration_order, *x, *y)) {
      if (spec->anti) spec->null_aware_key = static_cast<int>(spec->equi.size());
      spec->equi.push_back({x, y});
    }
  }

  const DecorrelationOptions& options_;
  const RelNode& input_;
  int lw_;
};

bool has_subquery(const ScalarExpr& e) {
  if (is_subquery(e.kind)) return true;
  for (const ScalarPtr* o : e.operands())
    if (has_subquery(**o)) return true;
  return false;
}

}  // namespace

RelPtr decorrelate_subqueries(const RelPtr& filter, const DecorrelationOptions& options) {
  const auto& f = static_cast<const FilterNode&>(*filter);
  std::vector<ScalarPtr> conjuncts;
  split_conjuncts(f.predicate, conjuncts);
  Decorrelator d(options, *f.input);
  std::vector<SemiJoinSpec> joins;
  std::vector<ScalarPtr> below, above;
  for (const auto& c : conjuncts) {
    SemiJoinSpec spec;
    if (d.recognize(c, &spec)) {
      joins.push_back(std::move(spec));
    } else {
      // Cheap conjuncts filter before the joins, and so does an IN the scan seeks by;
      // other subqueries run on what is left.
      (has_subquery(*c) && !d.seeks(c) ? above : below).push_back(c);
    }
  }
  if (joins.empty()) return nullptr;
  RelPtr node = options.rewrite(filter_over(f.input, below));
  // A correlated subquery stays one when probing it per left row is cheaper than reading
  // its source once: a handful of left rows against a keyed lookup each.
  const double left_rows = estimate_rows(*node);
  std::vector<SemiJoinSpec> kept;
  for (auto& spec : joins) {
    if (spec.probe_cost > 0) {
      const double build = run_cost(*spec.right);
      const double joined = spec.equi.empty() ? left_rows * build : build + left_rows;
      if (left_rows * spec.probe_cost < joined) {
        above.push_back(spec.conjunct);
        continue;
      }
    }
    kept.push_back(std::move(spec));
  }
  for (auto& spec : kept) {
    auto j = std::make_shared<SemiJoinNode>();
    j->anti = spec.anti;
    j->columns = node->columns;
    j->keys = node->keys;
    j->left = node;
    j->right = spec.right;
    if (spec.probe) j->probes.push_back(spec.probe);
    if (!spec.on.empty()) j->on = conjoin(spec.on);
    j->equi = std::move(spec.equi);
    j->null_aware_key = spec.null_aware_key;
    // Its right side reads no outer row at all: build it once per execution. The build
    // hashes each right row on the equi keys' right sides, evaluated over the right row with
    // the query's outer rows beyond it — a key reading an outer row (`where a1.c0 = a0.c4`
    // two levels down, its right side `a0.c4`) makes the build differ per outer row.
    FrameRefs r;
    collect_reads(*j->right, 1, r);
    for (const auto& k : j->equi) collect_reads(k.right, 1, r);
    j->right_constant = !r.unknown && r.frames.empty();
    node = j;
  }
  // With no semi join built, a subquery kept per row still filters the side of a join it
  // reads alone (difftest seed 554168084: an IN correlated to a LEFT JOIN's preserved side,
  // cheaper probed than joined, ran above two LEFT JOINs, once per joined row).
  node = kept.empty() ? filter_sunk(node, above) : filter_over(node, above);
  return node;
}

}  // namespace quereus
