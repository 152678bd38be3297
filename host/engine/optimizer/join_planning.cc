// Optimizer: join planning (see optimizer.h). predicate_pushdown moves conjuncts down
// through joins and plain-column projections; join_ordering rebuilds a region of inner
// joins in the order its estimated cardinalities suggest; each join then gets its
// algorithm: a hash join (build side by estimated size), an index_nested_loop join (the
// inner table re-opened per outer row with the join equality in its access plan), or a
// plain nested loop.
//
// Row layouts: a join's row is its left columns, then its right columns, then its
// existence flags. Moving a predicate to another node rewrites its column slots
// (remap()); a predicate that cannot be rewritten stays where it was.
#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <numeric>

#include "optimizer/optimizer.h"
#include "optimizer/decorrelate.h"
#include "catalog/catalog.h"
#include "planner/scalar_rewrite.h"

namespace quereus {

namespace {

using K = ast::JoinKind;

// A join keeps the order (and hash build side) the query wrote unless the change saves
// at least this many estimated row operations and halves the cost: small joins gain
// nothing from it, and their natural row order stays put.
constexpr double kMinSaving = 10000;
// The fraction of rows a residual filter (or an extra join condition) is assumed to keep.
constexpr double kFilterSelectivity = 0.25;

// ---------------------------------------------------------------- expressions

struct ExprInfo {
  std::vector<int> slots;  // level-0 columns read
  bool movable = true;     // deterministic, and no correlated subquery (its plan reads the row by slot)
};

void analyze(const ScalarExpr& e, ExprInfo& info) {
  switch (e.kind) {
    case ScalarKind::kColumn: {
      auto& c = static_cast<const ColumnScalar&>(e);
      if (c.level == 0) info.slots.push_back(c.slot);
      return;
    }
    case ScalarKind::kFunction:
      if (!(static_cast<const FunctionScalar&>(e).fn->flags & kDeterministic)) info.movable = false;
      break;
    case ScalarKind::kInSubquery:
    case ScalarKind::kExists:
    case ScalarKind::kSubquery:
      if (static_cast<const SubqueryScalar&>(e).correlated) info.movable = false;
      break;
    default: break;
  }
  for (const ScalarPtr* o : e.operands()) analyze(**o, info);
}

ExprInfo analyze(const ScalarPtr& e) {
  ExprInfo info;
  analyze(*e, info);
  return info;
}

// `e` for another row layout: a level-0 column at slot s reads map[s] (negative: not in
// the new row) and a reference to an enclosing query's row moves `shift` levels out.
// Unchanged subtrees are shared. Null when `e` cannot be rewritten: a column outside the
// new row, a correlated subquery, or a class rewrite_columns does not copy.
ScalarPtr remap(const ScalarPtr& e, const std::vector<int>& map, int shift) {
  return rewrite_columns(e, [&](const ColumnScalar& c, const ScalarPtr& self) -> ScalarPtr {
    if (c.level == 0) {
      if (c.slot < 0 || c.slot >= static_cast<int>(map.size()) || map[c.slot] < 0) return nullptr;
      if (map[c.slot] == c.slot) return self;
      auto n = copy_column(c);
      n->slot = map[c.slot];
      return n;
    }
    if (!shift) return self;
    auto n = copy_column(c);
    n->level += shift;
    return n;
  });
}

// Slot map of a row of `width` columns moved by `delta` (out-of-range slots are dropped).
std::vector<int> shifted(int width, int from, int count, int delta) {
  std::vector<int> map(width, -1);
  for (int i = from; i < from + count && i < width; ++i) map[i] = i + delta;
  return map;
}

const ColumnScalar* local_column(const ScalarExpr& e) {
  if (e.kind != ScalarKind::kColumn) return nullptr;
  auto& c = static_cast<const ColumnScalar&>(e);
  return c.level == 0 ? &c : nullptr;
}

// `a = b` between two columns of this row, compared as plain equality.
const BinaryScalar* column_equality(const ScalarExpr& e) {
  if (e.kind != ScalarKind::kBinary) return nullptr;
  auto& b = static_cast<const BinaryScalar&>(e);
  if (b.op != ast::BinaryOp::kEq && b.op != ast::BinaryOp::kEqEq) return nullptr;
  if (b.duration_order) return nullptr;  // durations equal by elapsed time, not by key bytes
  if (!local_column(*b.left) || !local_column(*b.right)) return nullptr;
  return &b;
}

bool numeric(qrs_logical_type t) { return t == QRS_LT_INTEGER || t == QRS_LT_REAL; }

// ---------------------------------------------------------------- estimates

}  // namespace

double estimate_rows(const RelNode& n) {
  switch (n.kind) {
    case RelKind::kTableScan: {
      auto& s = static_cast<const TableScanNode&>(n);
      if (s.planned) return std::max(s.plan.rows, 1.0);
      if (s.table->row_count) return std::max(static_cast<double>(*s.table->row_count), 1.0);
      return 1000;
    }
    case RelKind::kValues: return std::max<double>(static_cast<const ValuesNode&>(n).rows.size(), 1);
    case RelKind::kSingleRow: return 1;
    // A recursive CTE's working table holds one iteration's new rows: few, typically
    // (a walk down a chain or a tree level), and the join reading it runs once per
    // iteration — so it drives the join and the other side is sought by index (SQLite
    // estimates its recursive table the same way).
    case RelKind::kWorkingTable: return 1;
    case RelKind::kFilter:
      return std::max(1.0, estimate_rows(*static_cast<const FilterNode&>(n).input) * kFilterSelectivity);
    case RelKind::kProject: return estimate_rows(*static_cast<const ProjectNode&>(n).input);
    case RelKind::kSort: return estimate_rows(*static_cast<const SortNode&>(n).input);
    case RelKind::kCache: return estimate_rows(*static_cast<const CacheNode&>(n).input);
    case RelKind::kWindow: return estimate_rows(*static_cast<const WindowNode&>(n).input);
    case RelKind::kDistinct: return std::max(1.0, estimate_rows(*static_cast<const DistinctNode&>(n).input) * 0.5);
    case RelKind::kAggregate: {
      auto& a = static_cast<const AggregateNode&>(n);
      return a.group_by.empty() ? 1 : std::max(1.0, estimate_rows(*a.input) * 0.1);
    }
    case RelKind::kLimit: {
      auto& l = static_cast<const LimitNode&>(n);
      double in = estimate_rows(*l.input);
      if (l.limit && l.limit->kind == ScalarKind::kLiteral) {
        const Value& v = static_cast<const LiteralScalar&>(*l.limit).value;
        if (v.type() == ValueType::kInteger && v.as_int() >= 0) in = std::min(in, static_cast<double>(v.as_int()));
      }
      return std::max(in, 1.0);
    }
    case RelKind::kSemiJoin:
      return std::max(1.0, estimate_rows(*static_cast<const SemiJoinNode&>(n).left) * 0.5);
    case RelKind::kSetOp: {
      auto& s = static_cast<const SetOpNode&>(n);
      return estimate_rows(*s.left) + estimate_rows(*s.right);
    }
    case RelKind::kJoin: {
      auto& j = static_cast<const JoinNode&>(n);
      double l = estimate_rows(*j.left), r = estimate_rows(*j.right);
      double rows = !j.equi_keys.empty() || j.index_lookup ? std::max(l, r) : j.on ? l * r * kFilterSelectivity : l * r;
      switch (j.join) {
        case K::kLeft: return std::max(rows, l);
        case K::kRight: return std::max(rows, r);
        case K::kFull: return std::max(rows, l + r);
        default: return std::max(rows, 1.0);
      }
    }
    default: return 1000;
  }
}

namespace {

// The side an index_nested_loop join can re-open per outer row: a table scan, possibly
// under the residual filter of its pushed predicates and a projection (as a view or a
// subquery in FROM plans it).
struct LookupSide {
  ProjectNode* project = nullptr;
  FilterNode* residual = nullptr;
  TableScanNode* scan = nullptr;
  // The scan column behind the side's output column `col`; -1 when it is computed.
  int scan_column(int col) const {
    if (!project) return col;
    if (col < 0 || col >= static_cast<int>(project->exprs.size())) return -1;
    const ColumnScalar* c = local_column(*project->exprs[col]);
    return c ? c->slot : -1;
  }
};

LookupSide lookup_side(RelNode& n) {
  LookupSide side;
  RelNode* s = &n;
  if (s->kind == RelKind::kProject) {
    side.project = static_cast<ProjectNode*>(s);
    s = side.project->input.get();
  }
  if (s->kind == RelKind::kFilter) {
    side.residual = static_cast<FilterNode*>(s);
    s = side.residual->input.get();
  }
  if (s->kind == RelKind::kTableScan) side.scan = static_cast<TableScanNode*>(s);
  return side;
}

// The scan's access plan with an equality on `column` added, its value known only at run
// time. `ok` when the module answers the equality itself (a seek) without giving up any
// pushed filter it handled before or the ordering it provided.
struct SeekProbe {
  bool ok = false;
  PlanResult plan;
  // Through a secondary index (TableScanNode::index …), or the table itself (-1).
  int index = -1;
  std::vector<int> index_filters;
  PlanResult index_plan;
};

// The scan with one more equality on `column` (its value bound per outer row), planned
// as plan_access plans it — the table's own key or one of its secondary indexes.
SeekProbe probe_seek(const TableScanNode& scan, int column) {
  SeekProbe probe;
  if (!scan.planned) return probe;
  TableScanNode trial = scan;
  PushedFilter eq;
  eq.column = column;
  eq.op = QRS_OP_EQ;
  trial.filters.push_back(std::move(eq));
  trial.index = -1;
  trial.index_filters.clear();
  try {
    trial.plan = scan.table->table->best_access_plan(access_request(trial));
    trial.plan.handled.resize(trial.filters.size(), false);
    consider_indexes(trial);
  } catch (const std::exception&) {
    return probe;  // a module that cannot plan the shape: no seek
  }
  if (!trial.plan.handled.back()) return probe;
  for (size_t i = 0; i < scan.filters.size() && i < scan.plan.handled.size(); ++i)
    if (scan.plan.handled[i] && !trial.plan.handled[i]) return probe;
  if (!scan.ordering.empty() && trial.plan.provides_ordering != scan.plan.provides_ordering) return probe;
  probe.ok = true;
  probe.plan = std::move(trial.plan);
  probe.index = trial.index;
  probe.index_filters = std::move(trial.index_filters);
  probe.index_plan = std::move(trial.index_plan);
  return probe;
}

// ---------------------------------------------------------------- inner-join regions

// One input of a region of inner joins, at `offset` in the region's row.
struct Relation {
  RelPtr node;
  int offset = 0;
  int width = 0;
  double rows = 1;
  std::vector<ScalarPtr> local;  // conjuncts over this relation's own row
  // Conjuncts that read this relation alone but cannot be rewritten for its row (a
  // correlated subquery reads the region's row by slot): kept over the region's layout.
  std::vector<ScalarPtr> in_region_layout;
};

// A conjunct over the region's row that reads more than one relation (or none).
struct JoinPredicate {
  ScalarPtr expr;
  uint64_t relations = 0;  // bit i: reads relation i
  // For `a = b` between two relations: each side's relation and column in it.
  int eq_rel[2] = {-1, -1};
  int eq_col[2] = {-1, -1};
  bool placed = false;
};

uint64_t bit(int i) { return uint64_t{1} << i; }

// join_ordering's cost model over left-deep orders: each relation is read once (or
// sought per outer row), each join costs its hash build and probes (or its lookups, or
// the pairs of a nested loop) plus the rows it produces.
class OrderCost {
 public:
  // `hashing`, `lookups`: hash_join and index_nested_loop are enabled.
  OrderCost(const std::vector<Relation>& rels, const std::vector<JoinPredicate>& preds, bool hashing, bool lookups)
      : rels_(rels), preds_(preds), hashing_(hashing), lookups_(lookups) {}

  struct Step {
    double cost = 0;
    double rows = 0;
    bool connected = false;  // an equality joins the relation to those before it
  };

  Step step(uint64_t have, double rows, int r) {
    const Relation& rel = rels_[r];
    std::vector<int> eq_cols;
    bool other = false;
    for (const JoinPredicate& p : preds_) {
      if (!(p.relations & bit(r)) || (p.relations & ~(have | bit(r)))) continue;
      int side = p.eq_rel[0] == r ? 0 : p.eq_rel[1] == r ? 1 : -1;
      if (side >= 0 && p.eq_rel[1 - side] >= 0 && (have & bit(p.eq_rel[1 - side]))) {
        eq_cols.push_back(p.eq_col[side]);
      } else {
        other = true;
      }
    }
    Step s;
    if (!eq_cols.empty()) {
      s.connected = true;
      s.cost = hashing_ ? rows + rel.rows : rows * rel.rows;  // hash one side, probe with the other
      if (lookups_)
        for (int col : eq_cols) s.cost = std::min(s.cost, rows * seek_cost(r, col));
      std::sort(eq_cols.begin(), eq_cols.end());
      bool covered = false;  // each outer row meets at most one row of the relation
      for (auto key : rel.node->keys) {
        std::sort(key.begin(), key.end());
        if (std::includes(eq_cols.begin(), eq_cols.end(), key.begin(), key.end())) covered = true;
      }
      s.rows = covered ? rows : std::max(rows, rel.rows);
    } else {
      s.cost = rows * rel.rows;
      s.rows = rows * rel.rows;
    }
    if (other) s.rows = std::max(1.0, s.rows * kFilterSelectivity);
    s.cost += s.rows;
    return s;
  }

  double cost(const std::vector<int>& order) {
    uint64_t have = bit(order[0]);
    double rows = rels_[order[0]].rows, total = rows;
    for (size_t k = 1; k < order.size(); ++k) {
      Step s = step(have, rows, order[k]);
      total += s.cost;
      rows = s.rows;
      have |= bit(order[k]);
    }
    return total;
  }

  // Greedy from each start: repeatedly add the relation joined by an equality (a cross
  // product only when none is) that yields the fewest rows. The cheapest tour wins.
  std::vector<int> best_order() {
    const int n = static_cast<int>(rels_.size());
    std::vector<int> best;
    double best_cost = std::numeric_limits<double>::infinity();
    for (int start = 0; start < n; ++start) {
      std::vector<int> order{start};
      uint64_t have = bit(start);
      double rows = rels_[start].rows;
      while (static_cast<int>(order.size()) < n) {
        int pick = -1;
        Step pick_step;
        for (int r = 0; r < n; ++r) {
          if (have & bit(r)) continue;
          Step s = step(have, rows, r);
          bool better = pick < 0 || (s.connected && !pick_step.connected) ||
                        (s.connected == pick_step.connected &&
                         (s.rows < pick_step.rows || (s.rows == pick_step.rows && s.cost < pick_step.cost)));
          if (better) {
            pick = r;
            pick_step = s;
          }
        }
        order.push_back(pick);
        have |= bit(pick);
        rows = pick_step.rows;
      }
      double c = cost(order);
      if (c < best_cost) {
        best_cost = c;
        best = order;
      }
    }
    return best;
  }

 private:
  // One lookup of relation r by an equality on its column `col`; infinite without a seek.
  double seek_cost(int r, int col) {
    auto key = std::make_pair(r, col);
    auto it = seek_costs_.find(key);
    if (it != seek_costs_.end()) return it->second;
    double c = std::numeric_limits<double>::infinity();
    LookupSide side = lookup_side(*rels_[r].node);
    int scan_col = side.scan_column(col);
    if (side.scan && scan_col >= 0) {
      SeekProbe p = probe_seek(*side.scan, scan_col);
      if (p.ok) c = std::max(p.plan.cost, 1.0);
    }
    seek_costs_[key] = c;
    return c;
  }

  const std::vector<Relation>& rels_;
  const std::vector<JoinPredicate>& preds_;
  const bool hashing_, lookups_;
  std::map<std::pair<int, int>, double> seek_costs_;
};

}  // namespace


RelPtr filter_over(RelPtr input, std::vector<ScalarPtr> conjuncts) {
  if (conjuncts.empty()) return input;
  auto f = std::make_shared<FilterNode>();
  f->predicate = conjoin(conjuncts);
  f->columns = input->columns;
  f->keys = input->keys;
  f->input = std::move(input);
  return f;
}

// `input`, a relation at `offset` in a row laid out as `layout`, filtered by `conjuncts`
// written over that row and reading only the relation's slots: the relation's row is
// placed at its offset among NULLs, filtered, and taken out again. A correlated subquery
// in a conjunct then reads the slots it was planned with, and runs once per row of the
// relation instead of once per row of the join (difftest seed 554149177: an EXISTS in an
// ON clause that read the right side alone ran for every left row too).
RelPtr filter_in_layout(RelPtr input, int offset, const std::vector<Attribute>& layout,
                        std::vector<ScalarPtr> conjuncts) {
  const int width = static_cast<int>(input->columns.size());
  auto pad = std::make_shared<ProjectNode>();
  pad->columns = layout;
  for (int s = 0; s < static_cast<int>(layout.size()); ++s) {
    const Attribute& a = layout[s];
    std::shared_ptr<ScalarExpr> e;
    if (s >= offset && s < offset + width) {
      auto c = std::make_shared<ColumnScalar>(0, s - offset, a.id);
      c->set_collation(a.collation, a.collation_source);
      e = std::move(c);
    } else {
      e = std::make_shared<LiteralScalar>(Value());
      pad->columns[s].nullable = true;
    }
    e->type = a.type;
    pad->exprs.push_back(std::move(e));
  }
  for (const auto& key : input->keys) {
    std::vector<int> k;
    for (int p : key) k.push_back(p + offset);
    pad->keys.push_back(std::move(k));
  }
  pad->input = input;
  RelPtr filtered = filter_over(pad, std::move(conjuncts));
  auto back = std::make_shared<ProjectNode>();
  back->columns = input->columns;
  back->keys = input->keys;
  for (int s = 0; s < width; ++s) {
    const Attribute& a = input->columns[s];
    auto c = std::make_shared<ColumnScalar>(0, offset + s, a.id);
    c->type = a.type;
    c->set_collation(a.collation, a.collation_source);
    back->exprs.push_back(std::move(c));
  }
  back->input = std::move(filtered);
  return back;
}

namespace {

// Places `c`, which reads `slots` of `node`'s row, below `node` when a side of a join there
// holds all of them; false when it finds no such side.
bool sink_below(RelPtr& node, const ScalarPtr& c, const std::vector<int>& slots) {
  if (node->kind == RelKind::kFilter) return sink_below(static_cast<FilterNode&>(*node).input, c, slots);
  if (node->kind != RelKind::kJoin) return false;
  auto& j = static_cast<JoinNode&>(*node);
  if (!j.existence.empty()) return false;
  const int lw = static_cast<int>(j.left->columns.size()), rw = static_cast<int>(j.right->columns.size());
  const bool left = std::all_of(slots.begin(), slots.end(), [&](int s) { return s >= 0 && s < lw; });
  const bool right = std::all_of(slots.begin(), slots.end(), [&](int s) { return s >= lw && s < lw + rw; });
  // A WHERE conjunct may filter an inner join's side or an outer join's preserved side first.
  if (left && j.join != K::kRight && j.join != K::kFull) {
    if (!sink_below(j.left, c, slots)) j.left = filter_over(j.left, {c});
    return true;
  }
  // The right side is re-opened per left row by a lateral or index_nested_loop join.
  if (right && !j.lateral && !j.index_lookup && (j.join == K::kInner || j.join == K::kCross || j.join == K::kRight)) {
    j.right = filter_in_layout(j.right, lw, j.columns, {c});
    return true;
  }
  return false;
}

}  // namespace

RelPtr filter_sunk(RelPtr node, std::vector<ScalarPtr> conjuncts) {
  std::vector<ScalarPtr> here;
  for (auto& c : conjuncts) {
    std::vector<int> slots;
    if (!row_slots_read(c, slots) || slots.empty() || !sink_below(node, c, slots)) here.push_back(c);
  }
  return filter_over(node, std::move(here));
}

RelPtr Optimizer::push_down(RelPtr node, std::vector<ScalarPtr> conjuncts) {
  const bool pushdown = enabled("predicate_pushdown");
  if (!pushdown && !conjuncts.empty()) return filter_over(rewrite(node), std::move(conjuncts));
  switch (node->kind) {
    case RelKind::kTableScan: return push_into_scan(node, std::move(conjuncts));
    case RelKind::kFilter: {
      if (conjuncts.empty()) return rewrite(node);
      // Merged into the filter below, whose own rewrite pushes them on.
      auto& f = static_cast<FilterNode&>(*node);
      std::vector<ScalarPtr> all;
      split_conjuncts(f.predicate, all);
      all.insert(all.end(), conjuncts.begin(), conjuncts.end());
      f.predicate = conjoin(all);
      return rewrite(node);
    }
    case RelKind::kProject: {
      if (enabled("constant_folding")) fold_node_constants(*node);
      auto& p = static_cast<ProjectNode&>(*node);
      // An output column that is an input column reads through; any other is not moved.
      std::vector<int> map(p.exprs.size(), -1);
      for (size_t i = 0; i < p.exprs.size(); ++i)
        if (const ColumnScalar* c = local_column(*p.exprs[i])) map[i] = c->slot;
      std::vector<ScalarPtr> below, above;
      for (auto& c : conjuncts) {
        ScalarPtr moved = analyze(c).movable ? remap(c, map, 0) : nullptr;
        (moved ? below : above).push_back(moved ? moved : c);
      }
      p.input = push_down(p.input, std::move(below));
      return filter_over(node, std::move(above));
    }
    case RelKind::kJoin: {
      if (enabled("constant_folding")) fold_node_constants(*node);
      auto& j = static_cast<JoinNode&>(*node);
      if (j.lateral || (!pushdown && !enabled("join_ordering"))) {
        j.left = rewrite(j.left);
        j.right = rewrite(j.right);
        choose_join_algorithm(j);
        return filter_over(node, std::move(conjuncts));
      }
      if ((j.join == K::kInner || j.join == K::kCross) && j.existence.empty())
        return plan_inner_joins(node, std::move(conjuncts));
      return plan_outer_join(node, std::move(conjuncts));
    }
    default: return filter_over(rewrite(node), std::move(conjuncts));
  }
}

RelPtr Optimizer::plan_outer_join(RelPtr node, std::vector<ScalarPtr> conjuncts) {
  auto& j = static_cast<JoinNode&>(*node);
  const int lw = static_cast<int>(j.left->columns.size());
  const int rw = static_cast<int>(j.right->columns.size());
  const int width = static_cast<int>(j.columns.size());
  const bool pushdown = enabled("predicate_pushdown");
  const std::vector<int> left_map = shifted(width, 0, lw, 0), right_map = shifted(width, lw, rw, -lw);
  // A WHERE conjunct that no NULL-extended row passes — a comparison (=, !=, <, <=, >, >=)
  // with a bare column of that side — keeps only matched rows: the outer join is an inner
  // one, planned (ordered, its conjuncts pushed) as such, as SQLite and PostgreSQL do
  // (difftest seed 745266624: `… left join w0 a13 on a12.x2 = a13.x2 where 1 = a13.x2`
  // joined 47,000 × 47,000 rows before its filter emptied them).
  if (pushdown && (j.join == K::kLeft || j.join == K::kRight) && j.existence.empty()) {
    auto nullable_column = [&](const ScalarPtr& e) {
      const ColumnScalar* col = local_column(*e);
      if (!col) return false;
      return j.join == K::kLeft ? col->slot >= lw && col->slot < lw + rw : col->slot >= 0 && col->slot < lw;
    };
    auto rejects_extended = [&](const ScalarPtr& c) {
      if (c->kind != ScalarKind::kBinary) return false;
      auto& b = static_cast<const BinaryScalar&>(*c);
      switch (b.op) {
        case ast::BinaryOp::kEq: case ast::BinaryOp::kEqEq: case ast::BinaryOp::kNe: case ast::BinaryOp::kLt:
        case ast::BinaryOp::kLe: case ast::BinaryOp::kGt: case ast::BinaryOp::kGe:
          return nullable_column(b.left) || nullable_column(b.right);
        default: return false;
      }
    };
    if (std::any_of(conjuncts.begin(), conjuncts.end(), rejects_extended)) {
      j.join = K::kInner;
      return plan_inner_joins(node, std::move(conjuncts));
    }
  }
  auto on_side = [&](const ExprInfo& info, bool left) {
    for (int s : info.slots)
      if (left ? s >= lw : (s < lw || s >= lw + rw)) return false;
    return true;
  };
  // A conjunct remap() cannot rewrite (a correlated subquery reads the row by slot) that
  // reads one side alone, its subqueries' correlated references included, still filters
  // that side first, in the join's own row layout (filter_in_layout), as plan_inner_joins
  // does: it is deterministic, so it then runs once per row of that side, not of the join
  // (difftest seed 554168084: an IN over a view, correlated to the preserved side, ran for
  // every row of two LEFT JOINs above it).
  auto reads_only = [&](const ScalarPtr& c, bool left) {
    std::vector<int> slots;
    if (!row_slots_read(c, slots) || slots.empty()) return false;
    for (int s : slots)
      if (left ? (s < 0 || s >= lw) : (s < lw || s >= lw + rw)) return false;
    return true;
  };
  std::vector<ScalarPtr> left_in_layout, right_in_layout;
  // A WHERE conjunct may filter the preserved side first: each of its rows yields the
  // same rows with or without the others. Never the NULL-extended side, whose removed
  // rows would come back as NULLs.
  std::vector<ScalarPtr> above, to_left, to_right;
  for (auto& c : conjuncts) {
    ExprInfo info = analyze(c);
    ScalarPtr moved;
    if (pushdown && info.movable && j.join == K::kLeft && on_side(info, true)) {
      moved = remap(c, left_map, 0);
      if (moved) to_left.push_back(moved);
    } else if (pushdown && info.movable && j.join == K::kRight && on_side(info, false)) {
      moved = remap(c, right_map, 0);
      if (moved) to_right.push_back(moved);
    } else if (pushdown && !info.movable && j.join == K::kLeft && reads_only(c, true)) {
      left_in_layout.push_back(moved = c);
    } else if (pushdown && !info.movable && j.join == K::kRight && reads_only(c, false)) {
      right_in_layout.push_back(moved = c);
    }
    if (!moved) above.push_back(c);
  }
  // An ON conjunct only decides which rows match: one over the NULL-extended side alone
  // may filter that side first. One over the preserved side stays (it never drops a row).
  if (pushdown && j.on && (j.join == K::kLeft || j.join == K::kRight)) {
    std::vector<ScalarPtr> on, kept;
    split_conjuncts(j.on, on);
    for (auto& c : on) {
      ExprInfo info = analyze(c);
      ScalarPtr moved;
      if (info.movable && j.join == K::kLeft && on_side(info, false)) {
        moved = remap(c, right_map, 0);
        if (moved) to_right.push_back(moved);
      } else if (info.movable && j.join == K::kRight && on_side(info, true)) {
        moved = remap(c, left_map, 0);
        if (moved) to_left.push_back(moved);
      } else if (!info.movable && j.join == K::kLeft && reads_only(c, false)) {
        right_in_layout.push_back(moved = c);
      } else if (!info.movable && j.join == K::kRight && reads_only(c, true)) {
        left_in_layout.push_back(moved = c);
      }
      if (!moved) kept.push_back(c);
    }
    j.on = conjoin(kept);
  }
  j.left = push_down(j.left, std::move(to_left));
  j.right = push_down(j.right, std::move(to_right));
  if (!left_in_layout.empty()) j.left = filter_in_layout(j.left, 0, j.columns, std::move(left_in_layout));
  if (!right_in_layout.empty()) j.right = filter_in_layout(j.right, lw, j.columns, std::move(right_in_layout));
  choose_join_algorithm(j);
  return filter_over(node, std::move(above));
}

RelPtr Optimizer::plan_inner_joins(RelPtr top, std::vector<ScalarPtr> conjuncts) {
  const bool pushdown = enabled("predicate_pushdown");
  const int width = static_cast<int>(top->columns.size());
  // The region: inner / cross joins below `top`, flattened into relations in column
  // order, and every ON conjunct rewritten over the region's row.
  std::vector<Relation> rels;
  std::vector<ScalarPtr> preds = std::move(conjuncts);
  std::function<void(const RelPtr&, int)> collect = [&](const RelPtr& n, int offset) {
    if (n->kind == RelKind::kJoin && rels.size() < 60) {
      auto& j = static_cast<JoinNode&>(*n);
      if ((j.join == K::kInner || j.join == K::kCross) && j.existence.empty() && !j.lateral) {
        if (n != top && enabled("constant_folding")) fold_node_constants(j);
        std::vector<ScalarPtr> on, moved;
        if (j.on) split_conjuncts(j.on, on);
        const int w = static_cast<int>(j.columns.size());
        for (auto& c : on) {
          ScalarPtr m = offset ? remap(c, shifted(w, 0, w, offset), 0) : c;
          if (!m) break;
          moved.push_back(m);
        }
        if (moved.size() == on.size()) {
          collect(j.left, offset);
          collect(j.right, offset + static_cast<int>(j.left->columns.size()));
          preds.insert(preds.end(), moved.begin(), moved.end());
          return;
        }
      }
    }
    Relation r;
    r.node = n;
    r.offset = offset;
    r.width = static_cast<int>(n->columns.size());
    rels.push_back(std::move(r));
  };
  collect(top, 0);
  const int n = static_cast<int>(rels.size());
  std::vector<int> rel_of(width, 0);
  for (int i = 0; i < n; ++i)
    for (int s = 0; s < rels[i].width; ++s) rel_of[rels[i].offset + s] = i;

  // Each conjunct goes to the one relation it reads (predicate_pushdown), to the lowest
  // join that has all it reads, or — when it cannot move — above the region.
  std::vector<JoinPredicate> joint;
  std::vector<ScalarPtr> above;
  for (auto& c : preds) {
    ExprInfo info = analyze(c);
    if (!info.movable) {
      // One that reads a single relation, its subqueries' correlated references included,
      // may still filter that relation first (deterministic: it then runs fewer times).
      std::vector<int> slots;
      int r = -1;
      if (pushdown && n > 1 && row_slots_read(c, slots) && !slots.empty()) {
        for (int s : slots) {
          const int at = s >= 0 && s < width ? rel_of[s] : -2;
          r = r == -1 || r == at ? at : -2;
        }
      }
      if (r >= 0) rels[r].in_region_layout.push_back(c);
      else above.push_back(c);
      continue;
    }
    uint64_t mask = 0;
    bool in_row = true;
    for (int s : info.slots) {
      if (s < 0 || s >= width) in_row = false;
      else mask |= bit(rel_of[s]);
    }
    // One that reads no relation (only enclosing rows, parameters, uncorrelated
    // subqueries) goes above the region, where the filter checks it once per open and
    // opens nothing when it is false; in the first join's ON it ran once per pair of rows
    // (difftest seed 554162338: a subquery's WHERE reading only the enclosing row, over a
    // view of joins).
    if (!in_row || (pushdown && !mask)) {
      above.push_back(c);
      continue;
    }
    if (pushdown && mask && !(mask & (mask - 1))) {
      int r = 0;
      while (!(mask & bit(r))) ++r;
      if (ScalarPtr local = remap(c, shifted(width, rels[r].offset, rels[r].width, -rels[r].offset), 0)) {
        rels[r].local.push_back(local);
        continue;
      }
    }
    JoinPredicate p;
    p.expr = c;
    p.relations = mask;
    if (const BinaryScalar* eq = column_equality(*c)) {
      int a = local_column(*eq->left)->slot, b = local_column(*eq->right)->slot;
      if (rel_of[a] != rel_of[b]) {
        p.eq_rel[0] = rel_of[a];
        p.eq_col[0] = a - rels[rel_of[a]].offset;
        p.eq_rel[1] = rel_of[b];
        p.eq_col[1] = b - rels[rel_of[b]].offset;
      }
    }
    joint.push_back(std::move(p));
  }
  for (auto& r : rels) {
    r.node = push_down(r.node, std::move(r.local));
    if (!r.in_region_layout.empty())
      r.node = filter_in_layout(r.node, r.offset, top->columns, std::move(r.in_region_layout));
    r.rows = estimate_rows(*r.node);
  }

  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  if (enabled("join_ordering")) {
    OrderCost model(rels, joint, enabled("hash_join"), enabled("index_nested_loop"));
    std::vector<int> best = model.best_order();
    if (best != order) {
      double was = model.cost(order), now = model.cost(best);
      // A region reading a working table runs once per iteration: no saving is too small.
      const bool per_iteration = std::any_of(rels.begin(), rels.end(), [](const Relation& r) {
        const RelNode* n = r.node.get();
        while (n->kind == RelKind::kProject || n->kind == RelKind::kFilter) n = n->children().front();
        return n->kind == RelKind::kWorkingTable;
      });
      if (now < 0.5 * was && (per_iteration || was - now >= kMinSaving)) order = best;
    }
  }

  // A left-deep tree in that order. `map` takes a slot of the region's row to the row
  // built so far.
  std::vector<int> map(width, -1);
  auto place = [&](int r, int at) {
    for (int s = 0; s < rels[r].width; ++s) map[rels[r].offset + s] = at + s;
  };
  RelPtr built = rels[order[0]].node;
  place(order[0], 0);
  uint64_t have = bit(order[0]);
  for (int k = 1; k < n; ++k) {
    const int r = order[k];
    place(r, static_cast<int>(built->columns.size()));
    have |= bit(r);
    std::vector<ScalarPtr> on;
    for (auto& p : joint) {
      if (p.placed || (p.relations & ~have)) continue;
      p.placed = true;
      if (ScalarPtr m = remap(p.expr, map, 0)) {
        on.push_back(m);
      } else {
        above.push_back(p.expr);
      }
    }
    auto j = std::make_shared<JoinNode>();
    j->join = on.empty() ? K::kCross : K::kInner;
    j->left = built;
    j->right = rels[r].node;
    j->on = conjoin(on);
    j->columns = built->columns;
    j->columns.insert(j->columns.end(), j->right->columns.begin(), j->right->columns.end());
    choose_join_algorithm(*j);
    built = j;
  }
  // The region's own column order, restored above a reordered tree.
  bool reordered = false;
  for (int s = 0; s < width; ++s) reordered = reordered || map[s] != s;
  if (reordered) {
    auto p = std::make_shared<ProjectNode>();
    p->columns = top->columns;
    for (int s = 0; s < width; ++s) {
      const Attribute& a = top->columns[s];
      auto c = std::make_shared<ColumnScalar>(0, map[s], a.id);
      c->type = a.type;
      c->set_collation(a.collation, a.collation_source);
      p->exprs.push_back(std::move(c));
    }
    p->input = built;
    built = p;
  }
  return filter_over(built, std::move(above));
}

void Optimizer::choose_join_algorithm(JoinNode& j) {
  j.equi_keys.clear();
  j.build_left = false;
  j.index_lookup = j.lateral;  // a lateral right side is re-opened per left row
  if (j.lateral) return;
  const int lw = static_cast<int>(j.left->columns.size());
  if (enabled("hash_join") && j.on) {
    std::vector<ScalarPtr> conj;
    split_conjuncts(j.on, conj);
    for (auto& c : conj) {
      const BinaryScalar* b = column_equality(*c);
      if (!b || (b->compare_collation && b->compare_collation != &Collation::binary())) continue;
      const ColumnScalar* l = local_column(*b->left);
      const ColumnScalar* r = local_column(*b->right);
      if (l->slot < lw && r->slot >= lw) j.equi_keys.push_back({l->slot, r->slot - lw});
      else if (r->slot < lw && l->slot >= lw) j.equi_keys.push_back({r->slot, l->slot - lw});
    }
  }
  if (enabled("index_nested_loop") && options_.module_pushdown && use_index_lookup(j)) return;
  if (!j.equi_keys.empty() && (j.join == K::kInner || j.join == K::kCross) && j.existence.empty()) {
    // Hash the smaller side: the left one when it is much smaller.
    double l = estimate_rows(*j.left), r = estimate_rows(*j.right);
    j.build_left = 2 * l < r && r - l >= kMinSaving;
  }
}

bool Optimizer::use_index_lookup(JoinNode& j) {
  if (!j.on || !(j.join == K::kInner || j.join == K::kCross || j.join == K::kLeft)) return false;
  LookupSide side = lookup_side(*j.right);
  if (!side.scan) return false;
  TableScanNode& scan = *side.scan;
  const int lw = static_cast<int>(j.left->columns.size());
  // The cheapest seek among the ON equalities `outer column = inner column` the inner
  // column's key can answer: its collation, and values of its class.
  SeekProbe best;
  const ColumnScalar* outer_col = nullptr;
  int inner_col = -1;
  std::vector<ScalarPtr> conj;
  split_conjuncts(j.on, conj);
  for (auto& c : conj) {
    const BinaryScalar* b = column_equality(*c);
    if (!b) continue;
    const ColumnScalar* x = local_column(*b->left);
    const ColumnScalar* y = local_column(*b->right);
    if (x->slot >= lw) std::swap(x, y);
    if (x->slot >= lw || y->slot < lw) continue;
    const int col = side.scan_column(y->slot - lw);
    if (col < 0 || col >= static_cast<int>(scan.columns.size())) continue;
    const Collation* cc = scan.columns[col].collation;
    if (b->compare_collation && b->compare_collation != cc && !(b->compare_collation == &Collation::binary() && !cc))
      continue;
    qrs_logical_type ct = scan.columns[col].type;
    if (x->type != QRS_LT_ANY && ct != QRS_LT_ANY && x->type != ct && !(numeric(ct) && numeric(x->type))) continue;
    SeekProbe p = probe_seek(scan, col);
    if (p.ok && (!best.ok || p.plan.cost < best.plan.cost)) {
      best = std::move(p);
      outer_col = x;
      inner_col = col;
    }
  }
  if (!best.ok) return false;
  // Lookups against reading the inner side once (hashed, or looped over per outer row).
  const double outer = estimate_rows(*j.left);
  const double lookups = outer * std::max(best.plan.cost, 1.0);
  const double once = j.equi_keys.empty() ? outer * std::max(scan.plan.cost, 1.0)
                                          : scan.plan.cost + estimate_rows(*j.right) + outer;
  if (lookups >= once) return false;
  // The inner side now runs with the outer row at level 1: its references to enclosing
  // rows move one level out.
  std::vector<int> same(scan.columns.size());
  std::iota(same.begin(), same.end(), 0);
  std::vector<PushedFilter> filters = scan.filters;
  for (auto& f : filters) {
    if (f.value && !(f.value = remap(f.value, same, 1))) return false;
    for (auto& v : f.in_list)
      if (!(v = remap(v, same, 1))) return false;
  }
  ScalarPtr residual_pred;
  if (side.residual && !(residual_pred = remap(side.residual->predicate, same, 1))) return false;
  std::vector<ScalarPtr> projected;
  if (side.project) {
    std::vector<int> input(side.project->input->columns.size());
    std::iota(input.begin(), input.end(), 0);
    for (auto& e : side.project->exprs) {
      projected.push_back(remap(e, input, 1));
      if (!projected.back()) return false;
    }
  }
  PushedFilter key;
  key.column = inner_col;
  key.op = QRS_OP_EQ;
  auto v = std::make_shared<ColumnScalar>(1, outer_col->slot, outer_col->attr_id);
  v->type = outer_col->type;
  v->set_collation(outer_col->collation, outer_col->collation_source());
  key.value = std::move(v);
  filters.push_back(std::move(key));
  scan.filters = std::move(filters);
  scan.plan = std::move(best.plan);
  scan.index = best.index;
  scan.index_filters = std::move(best.index_filters);
  scan.index_plan = std::move(best.index_plan);
  if (side.residual) side.residual->predicate = residual_pred;
  if (side.project) side.project->exprs = std::move(projected);
  j.index_lookup = true;
  j.equi_keys.clear();
  return true;
}

}  // namespace quereus
