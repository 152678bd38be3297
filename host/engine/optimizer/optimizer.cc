// Optimizer: rule passes over the bound plan (see optimizer.h).
#include "optimizer/optimizer.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include "common/status.h"
#include "optimizer/decorrelate.h"
#include "optimizer/subquery_cache.h"
#include "eval/exec_context.h"
#include "catalog/catalog.h"
#include "parser/ast_walk.h"
#include "planner/access_forms.h"
#include "planner/properties.h"

namespace quereus {

namespace {

// True when `e` reads no column of the current row (level 0): it can be evaluated
// before the scan starts.
bool independent_of_row(const ScalarExpr& e);

bool children_independent(const ScalarExpr& e) {
  switch (e.kind) {
    case ScalarKind::kColumn: return static_cast<const ColumnScalar&>(e).level > 0;
    case ScalarKind::kLiteral:
    case ScalarKind::kParam: return true;
    case ScalarKind::kUnary: return independent_of_row(*static_cast<const UnaryScalar&>(e).operand);
    case ScalarKind::kBinary: {
      auto& b = static_cast<const BinaryScalar&>(e);
      return independent_of_row(*b.left) && independent_of_row(*b.right);
    }
    case ScalarKind::kFunction: {
      auto& f = static_cast<const FunctionScalar&>(e);
      if (!(f.fn->flags & kDeterministic) || (f.fn->flags & kPerRow)) return false;
      for (auto& a : f.args) if (!independent_of_row(*a)) return false;
      return true;
    }
    case ScalarKind::kCast:
    case ScalarKind::kCollate: return e.is_constant();
    // An uncorrelated scalar subquery: computed once per execution, before the scan.
    case ScalarKind::kSubquery: return !static_cast<const SubqueryScalar&>(e).correlated;
    default: return false;
  }
}

bool independent_of_row(const ScalarExpr& e) { return children_independent(e); }

const ColumnScalar* as_local_column(const ScalarExpr& e) {
  if (e.kind != ScalarKind::kColumn) return nullptr;
  auto& c = static_cast<const ColumnScalar&>(e);
  return c.level == 0 ? &c : nullptr;
}

// A local column, or a local column under a no-op CAST — one whose target is the column's
// own logical type (`cast(k as nvarchar)` over a TEXT key), which changes no value and may
// seek. A converting cast is never seen through: `cast(k as integer) = 1` over a TEXT key
// would seek the integer 1 among stored text (optimizer-rule-families.md "Constraint
// Extraction", the wrapper rule). JSON is left out: its cast reads text as JSON source.
const ColumnScalar* as_seek_column(const ScalarExpr& e, const TableScanNode& scan) {
  if (e.kind == ScalarKind::kCast) {
    auto& c = static_cast<const CastScalar&>(e);
    const ColumnScalar* col = as_local_column(*c.operand);
    if (!col || c.comparison || c.target == QRS_LT_ANY || c.target == QRS_LT_JSON) return nullptr;
    return c.target == scan.columns[col->slot].type ? col : nullptr;
  }
  return as_local_column(e);
}

qrs_filter_op flip(qrs_filter_op op) {
  switch (op) {
    case QRS_OP_GT: return QRS_OP_LT;
    case QRS_OP_GE: return QRS_OP_LE;
    case QRS_OP_LT: return QRS_OP_GT;
    case QRS_OP_LE: return QRS_OP_GE;
    default: return op;
  }
}

// Recognizes `col op value` / `value op col` / `col IN (…)` over the scan's columns.
bool as_pushable(const ScalarPtr& e, const TableScanNode& scan, PushedFilter* out) {
  if (e->kind == ScalarKind::kBinary) {
    auto& b = static_cast<const BinaryScalar&>(*e);
    if (b.duration_order) return false;  // a module orders the duration text, not the elapsed time
    qrs_filter_op op;
    switch (b.op) {
      case ast::BinaryOp::kEq: case ast::BinaryOp::kEqEq: op = QRS_OP_EQ; break;
      case ast::BinaryOp::kLt: op = QRS_OP_LT; break;
      case ast::BinaryOp::kLe: op = QRS_OP_LE; break;
      case ast::BinaryOp::kGt: op = QRS_OP_GT; break;
      case ast::BinaryOp::kGe: op = QRS_OP_GE; break;
      default: return false;
    }
    const ColumnScalar* col = as_seek_column(*b.left, scan);
    ScalarPtr value = b.right;
    if (!col || !independent_of_row(*b.right)) {
      col = as_seek_column(*b.right, scan);
      value = b.left;
      op = flip(op);
      if (!col || !independent_of_row(*b.left)) return false;
    }
    // The comparison must use the column's own collation to be answerable by its key.
    const Collation* col_coll = scan.columns[col->slot].collation;
    if (b.compare_collation && b.compare_collation != col_coll &&
        !(b.compare_collation == &Collation::binary() && !col_coll))
      return false;
    // Only same-class comparisons are pushed (numbers to numeric columns, text to text).
    qrs_logical_type ct = scan.columns[col->slot].type;
    if (value->type != QRS_LT_ANY && ct != QRS_LT_ANY && value->type != ct &&
        !((ct == QRS_LT_INTEGER || ct == QRS_LT_REAL) && (value->type == QRS_LT_INTEGER || value->type == QRS_LT_REAL)))
      return false;
    out->column = col->slot;
    out->op = op;
    out->value = value;
    return true;
  }
  if (e->kind == ScalarKind::kIn) {
    auto& in = static_cast<const InListScalar&>(*e);
    const ColumnScalar* col = as_seek_column(*in.operand, scan);
    if (in.negated || !col) return false;
    for (auto& x : in.list)
      if (!independent_of_row(*x)) return false;
    if (in.collation != scan.columns[col->slot].collation) return false;
    out->column = col->slot;
    out->op = QRS_OP_IN;
    out->in_list = in.list;
    return true;
  }
  if (e->kind == ScalarKind::kInSubquery) {
    // `col IN (select …)` over an uncorrelated subquery: its members are the IN list,
    // computed once per execution (SubqueryScalar::member_values).
    auto& sq = static_cast<const SubqueryScalar&>(*e);
    const ColumnScalar* col = sq.operand ? as_local_column(*sq.operand) : nullptr;
    if (sq.negated || sq.correlated || !col || !sq.plan || sq.plan->columns.empty()) return false;
    if (sq.duration_order || sq.probe_cast != QRS_LT_ANY) return false;
    const Collation* col_coll = scan.columns[col->slot].collation;
    if (sq.collation != col_coll && !(sq.collation == &Collation::binary() && !col_coll) &&
        !(!sq.collation && col_coll == &Collation::binary()))
      return false;
    qrs_logical_type ct = scan.columns[col->slot].type;
    qrs_logical_type vt = sq.value_cast != QRS_LT_ANY ? sq.value_cast : sq.plan->columns[0].type;
    if (vt != QRS_LT_ANY && ct != QRS_LT_ANY && vt != ct &&
        !((ct == QRS_LT_INTEGER || ct == QRS_LT_REAL) && (vt == QRS_LT_INTEGER || vt == QRS_LT_REAL)))
      return false;
    out->column = col->slot;
    out->op = QRS_OP_IN;
    out->in_subquery = e;
    return true;
  }
  return false;
}

}  // namespace


namespace {

// ---------------------------------------------------------------- constant folding

// True when `e` depends on nothing but literals and deterministic functions: its value is
// the same for every row of every execution (parameters are excluded — a prepared plan
// is reused across bindings).
bool foldable(const ScalarExpr& e) {
  switch (e.kind) {
    case ScalarKind::kLiteral: return true;
    case ScalarKind::kColumn:
    case ScalarKind::kParam:
    case ScalarKind::kInSubquery:
    case ScalarKind::kExists:
    case ScalarKind::kSubquery: return false;  // columns, parameters, subqueries
    case ScalarKind::kFunction:
      if (!(static_cast<const FunctionScalar&>(e).fn->flags & kDeterministic) ||
          (static_cast<const FunctionScalar&>(e).fn->flags & kPerRow))
        return false;
      break;
    default: break;
  }
  for (const ScalarPtr* o : e.operands()) {
    if (!foldable(**o)) return false;
  }
  return true;
}

// Replaces every maximal foldable subtree of `slot` by its value. An expression whose
// evaluation fails is left alone, so the error surfaces at run time as it would unfolded.
// The plan is owned by one statement, so operand slots are rewritten in place.
// Under the database's max_length, interrupt flag and timeout (OptimizerOptions): a result
// too long, or an evaluation interrupted, is not folded and is left to run time.
void fold_constants(ScalarPtr& slot, const OptimizerOptions& options) {
  if (!slot || slot->kind == ScalarKind::kLiteral) return;
  if (foldable(*slot)) {
    ExecContext ctx;
    ctx.max_length = options.max_length;
    ctx.interrupt.arm(options.interrupt, options.timeout_ms);
    EvalEnv env{nullptr, nullptr, &ctx};
    try {
      auto lit = std::make_shared<LiteralScalar>(slot->eval(env));
      lit->type = slot->type;
      lit->collation = slot->collation;
      lit->explicit_collation = slot->explicit_collation;
      lit->declared_collation = slot->declared_collation;
      slot = lit;
    } catch (const std::exception&) {
    }
    return;
  }
  for (const ScalarPtr* o : slot->operands()) fold_constants(*const_cast<ScalarPtr*>(o), options);
}

}  // namespace

void Optimizer::fold_node_constants(RelNode& node) {
  const OptimizerOptions& max = options_;
  switch (node.kind) {
    case RelKind::kFilter: fold_constants(static_cast<FilterNode&>(node).predicate, max); break;
    case RelKind::kProject:
      for (auto& e : static_cast<ProjectNode&>(node).exprs) fold_constants(e, max);
      break;
    case RelKind::kJoin: fold_constants(static_cast<JoinNode&>(node).on, max); break;
    case RelKind::kSort:
      for (auto& k : static_cast<SortNode&>(node).sort_keys) fold_constants(k.expr, max);
      break;
    default: break;
  }
}

const std::vector<std::string>& Optimizer::pass_names() {
  static const std::vector<std::string> names = {"constant_folding",       "predicate_pushdown", "ordering_by_index",
                                                   "hash_join",              "subquery_decorrelation", "join_ordering",
                                                   "index_nested_loop",      "join_elimination",   "distinct_elimination",
                                                   "subquery_cache"};
  return names;
}

PlanRequest access_request(const TableScanNode& scan) {
  PlanRequest req;
  for (auto& f : scan.filters) {
    FilterSpec s;
    s.column = f.column;
    s.op = f.op;
    s.form = f.form;
    s.usable = true;
    if (f.value && f.value->kind == ScalarKind::kLiteral) {
      s.has_value = true;
      s.value = static_cast<const LiteralScalar&>(*f.value).value;
    }
    s.in_count = static_cast<uint32_t>(f.in_list.size());
    if (f.in_subquery)  // its size is known at run time: the estimate of its rows
      s.in_count = static_cast<uint32_t>(
          std::min(estimate_rows(*static_cast<const SubqueryScalar&>(*f.in_subquery).plan), 1e6));
    req.filters.push_back(std::move(s));
  }
  req.ordering = scan.ordering;
  // The row count ANALYZE collected, offered to the module's costing (-1: unknown).
  if (scan.table->row_count) req.estimated_rows = static_cast<double>(*scan.table->row_count);
  return req;
}

namespace {

// Estimated cost of sorting `rows` rows (what a plan without the requested order adds).
double sort_cost(double rows) { return rows > 1 ? rows * std::log2(rows + 1) * 0.5 : 0; }

}  // namespace

// The cheapest plan through one of the table's secondary indexes, when it beats `base`
// (the module's plan for the table itself). Filters on index columns whose collation
// is the index column's are offered to the index's companion table; each entry then
// costs a primary-key lookup.
void consider_indexes(TableScanNode& scan) {
  TableEntry& t = *scan.table;
  if (t.schema.indexes.empty() || scan.read_committed || (scan.filters.empty() && scan.ordering.empty())) return;
  double lookup = -1;
  double base_cost = scan.plan.cost;
  double est = scan.plan.rows > 0 ? scan.plan.rows : 1000;
  if (!scan.ordering.empty() && !scan.plan.provides_ordering) base_cost += sort_cost(est);
  const PlanRequest base_req = access_request(scan);
  for (size_t i = 0; i < t.schema.indexes.size(); ++i) {
    const IndexSchema& ix = t.schema.indexes[i];
    if (ix.where) continue;  // a partial index holds only some rows
    auto position = [&](int column) { return index_position(t.schema, ix, column); };
    PlanRequest req;
    std::vector<int> sent;
    for (size_t f = 0; f < base_req.filters.size(); ++f) {
      int k = position(base_req.filters[f].column);
      if (k < 0 || base_req.filters[f].op == QRS_OP_FORM) continue;
      FilterSpec spec = base_req.filters[f];
      spec.column = k;
      req.filters.push_back(std::move(spec));
      sent.push_back(static_cast<int>(f));
    }
    bool ordered = !scan.ordering.empty();
    for (const OrderSpec& o : scan.ordering) {
      int k = position(o.column);
      if (k < 0) {
        ordered = false;
        break;
      }
      req.ordering.push_back({k, o.desc});
    }
    if (!ordered) req.ordering.clear();
    if (req.filters.empty() && req.ordering.empty()) continue;
    req.estimated_rows = base_req.estimated_rows;
    PlanResult p = t.index_tables[i]->table->best_access_plan(req);
    if (p.handled.size() != req.filters.size()) p.handled.resize(req.filters.size(), false);
    bool any_handled = false;
    for (bool h : p.handled) any_handled = any_handled || h;
    if (!any_handled && !p.provides_ordering) continue;
    if (lookup < 0) {
      PlanRequest point;
      for (const KeyColumn& k : t.schema.primary_key) {
        FilterSpec f;
        f.column = k.column;
        point.filters.push_back(f);
      }
      lookup = t.table->best_access_plan(point).cost + 1.0;
    }
    double cost = p.cost + p.rows * lookup;
    if (!scan.ordering.empty() && !p.provides_ordering) cost += sort_cost(p.rows);
    if (cost >= base_cost) continue;
    base_cost = cost;
    PlanResult chosen;
    chosen.handled.assign(scan.filters.size(), false);
    for (size_t j = 0; j < sent.size(); ++j) chosen.handled[sent[j]] = p.handled[j];
    chosen.cost = cost;
    chosen.rows = p.rows;
    chosen.provides_ordering = !scan.ordering.empty() && p.provides_ordering;
    chosen.explain = "index " + ix.name + (p.explain.empty() ? "" : ": " + p.explain);
    scan.index = static_cast<int>(i);
    scan.index_filters = std::move(sent);
    scan.index_plan = std::move(p);
    scan.plan = std::move(chosen);
  }
}

void Optimizer::plan_access(TableScanNode& scan) {
  scan.index = -1;
  scan.index_filters.clear();
  if (!options_.module_pushdown) {
    // Reference mode: the module plans a bare full scan and is held to nothing more.
    scan.ordering.clear();
    scan.plan = scan.table->table->best_access_plan(PlanRequest{});
    scan.plan.handled.assign(scan.filters.size(), false);
    scan.plan.provides_ordering = false;
    scan.planned = true;
    return;
  }
  scan.plan = scan.table->table->best_access_plan(access_request(scan));
  if (scan.plan.handled.size() != scan.filters.size()) scan.plan.handled.resize(scan.filters.size(), false);
  consider_indexes(scan);
  scan.planned = true;
}

namespace {

// ---------------------------------------------------------------- domain contradictions

// The numeric interval a column is confined to by `col op number` facts.
struct Interval {
  double lo = -INFINITY, hi = INFINITY;
  bool lo_incl = false, hi_incl = false;
  bool constrained = false;  // a WHERE conjunct names the column (so it is not NULL)

  void add(qrs_filter_op op, double v) {
    auto raise = [&](double x, bool incl) {
      if (x > lo || (x == lo && !incl)) { lo = x; lo_incl = incl; }
    };
    auto lower = [&](double x, bool incl) {
      if (x < hi || (x == hi && !incl)) { hi = x; hi_incl = incl; }
    };
    switch (op) {
      case QRS_OP_EQ: raise(v, true); lower(v, true); break;
      case QRS_OP_GT: raise(v, false); break;
      case QRS_OP_GE: raise(v, true); break;
      case QRS_OP_LT: lower(v, false); break;
      case QRS_OP_LE: lower(v, true); break;
      default: break;
    }
  }
  bool empty() const { return lo > hi || (lo == hi && !(lo_incl && hi_incl)); }
};

bool numeric_column(const Attribute& a) { return a.type == QRS_LT_INTEGER || a.type == QRS_LT_REAL; }

// A bound the interval reasoning may use: a number well inside ±2^53, where doubles are
// exact integers and a stored integer converted to REAL cannot cross it.
bool exact_bound(double v) { return std::isfinite(v) && std::fabs(v) < 9007199254740992.0; }



// `col op number` in a CHECK constraint's text, for the scanned table's column slot.
bool check_fact(const ast::Expr& e, const TableScanNode& scan, int* slot, qrs_filter_op* op, double* v) {
  if (e.kind != ast::ExprKind::kBinary) return false;
  auto& b = static_cast<const ast::BinaryExpr&>(e);
  switch (b.op) {
    case ast::BinaryOp::kEq: case ast::BinaryOp::kEqEq: *op = QRS_OP_EQ; break;
    case ast::BinaryOp::kLt: *op = QRS_OP_LT; break;
    case ast::BinaryOp::kLe: *op = QRS_OP_LE; break;
    case ast::BinaryOp::kGt: *op = QRS_OP_GT; break;
    case ast::BinaryOp::kGe: *op = QRS_OP_GE; break;
    default: return false;
  }
  const ast::Expr* col = b.left.get();
  const ast::Expr* lit = b.right.get();
  if (col->kind != ast::ExprKind::kColumn) {
    std::swap(col, lit);
    *op = flip(*op);
  }
  if (col->kind != ast::ExprKind::kColumn || lit->kind != ast::ExprKind::kLiteral) return false;
  auto& l = static_cast<const ast::Literal&>(*lit);
  if (l.literal_kind != ast::LiteralKind::kInteger && l.literal_kind != ast::LiteralKind::kReal) return false;
  // Only the row's own column: `old.x` / `new.x` (an op-aware CHECK) is no fact about a
  // stored row.
  const auto& ref = static_cast<const ast::ColumnRef&>(*col);
  if (!ref.schema.empty() || (!ref.table.empty() && !iequals(ref.table, scan.table->schema.name))) return false;
  int c = scan.table->schema.find_column(ref.column);
  if (c < 0 || c >= static_cast<int>(scan.columns.size()) || !numeric_column(scan.columns[c])) return false;
  char* end = nullptr;
  *v = std::strtod(l.text.c_str(), &end);
  if (end == l.text.c_str() || *end != '\0' || !exact_bound(*v)) return false;
  *slot = c;
  return true;
}

void check_conjuncts(const ast::Expr& e, std::vector<const ast::Expr*>& out) {
  if (e.kind == ast::ExprKind::kBinary && static_cast<const ast::BinaryExpr&>(e).op == ast::BinaryOp::kAnd) {
    check_conjuncts(*static_cast<const ast::BinaryExpr&>(e).left, out);
    check_conjuncts(*static_cast<const ast::BinaryExpr&>(e).right, out);
    return;
  }
  out.push_back(&e);
}

// Whether the scan's WHERE conjuncts, with the table's CHECK constraints as domain facts,
// admit no row: numeric comparisons with literals whose intervals do not meet. A CHECK
// holds for every stored row (it runs on insert and update) but passes NULL, so its facts
// only narrow a column a WHERE comparison already requires to be non-NULL.
bool contradicts_domain(const std::vector<ScalarPtr>& conjuncts, const TableScanNode& scan) {
  std::map<int, Interval> ranges;
  for (const ScalarPtr& c : conjuncts) {
    PushedFilter pf;
    if (!as_pushable(c, scan, &pf) || pf.op == QRS_OP_IN || !pf.value || pf.value->kind != ScalarKind::kLiteral ||
        !numeric_column(scan.columns[pf.column]))
      continue;
    const Value& v = static_cast<const LiteralScalar&>(*pf.value).value;
    if ((v.type() != ValueType::kInteger && v.type() != ValueType::kReal) || !exact_bound(v.to_double())) continue;
    Interval& r = ranges[pf.column];
    r.constrained = true;
    r.add(pf.op, v.to_double());
  }
  if (ranges.empty()) return false;
  if (scan.table && !scan.read_committed)
    for (const CheckSchema& ck : scan.table->schema.checks) {
      // (A CHECK holding a subquery is deferred to COMMIT: no fact about the rows a
      // transaction sees.)
      if (!ck.on_insert || !ck.on_update || !ck.expr || ast::contains_subquery(*ck.expr)) continue;
      std::vector<const ast::Expr*> facts;
      check_conjuncts(*ck.expr, facts);
      for (const ast::Expr* f : facts) {
        int slot;
        qrs_filter_op op;
        double v;
        if (!check_fact(*f, scan, &slot, &op, &v)) continue;
        auto it = ranges.find(slot);
        if (it != ranges.end()) it->second.add(op, v);
      }
    }
  return std::any_of(ranges.begin(), ranges.end(), [](const auto& r) { return r.second.empty(); });
}

// A conjunct an access-form recognizer reads over one of the scan's columns with a
// row-independent argument (planner/access_forms.h): a QRS_OP_FORM filter, offered only
// to a module that plans forms.
bool as_form_filter(const ScalarPtr& e, PushedFilter* out) {
  std::optional<FormMatch> m = recognize_form(*e);
  if (!m) return false;
  const ColumnScalar* col = as_local_column(*m->column);
  if (!col || !independent_of_row(*m->value)) return false;
  out->column = col->slot;
  out->op = QRS_OP_FORM;
  out->value = m->value;
  out->form = m->form;
  out->form_source = e;
  return true;
}

}  // namespace

RelPtr Optimizer::push_into_scan(RelPtr node, std::vector<ScalarPtr> conjuncts) {
  auto& scan = static_cast<TableScanNode&>(*node);
  // A WHERE the column domains prove empty reads nothing: no scan, no rows.
  if (enabled("constant_folding") && contradicts_domain(conjuncts, scan)) {
    auto none = std::make_shared<ValuesNode>();
    none->columns = node->columns;
    return none;
  }
  if (scan.planned && !conjuncts.empty()) return filter_over(node, std::move(conjuncts));  // planned once only
  if (!options_.module_pushdown) {  // reference mode: every conjunct stays a residual
    plan_access(scan);
    return filter_over(node, std::move(conjuncts));
  }
  std::vector<ScalarPtr> rest, pushed_src;
  const bool forms = scan.table->module && scan.table->module->capabilities().access_forms;
  for (auto& c : conjuncts) {
    PushedFilter pf;
    if (as_pushable(c, scan, &pf) || (forms && as_form_filter(c, &pf))) {
      scan.filters.push_back(std::move(pf));
      pushed_src.push_back(c);
    } else {
      rest.push_back(c);
    }
  }
  if (!scan.planned) plan_access(scan);
  for (size_t i = 0; i < pushed_src.size(); ++i)
    if (!scan.plan.handled[scan.filters.size() - pushed_src.size() + i]) rest.push_back(pushed_src[i]);
  return filter_over(node, std::move(rest));
}

namespace {

// True when `e` reads nothing of its row past the first `width` columns and holds no
// subquery (whose correlated references this walk does not follow).
// Marks the columns of its row `e` reads; false when it holds a subquery (whose
// correlated references this walk does not follow).
bool mark_reads(const ScalarExpr& e, std::vector<bool>& used) {
  switch (e.kind) {
    case ScalarKind::kSubquery:
    case ScalarKind::kInSubquery:
    case ScalarKind::kExists: return false;
    case ScalarKind::kColumn: {
      auto& c = static_cast<const ColumnScalar&>(e);
      if (c.level == 0) {
        if (c.slot < 0 || static_cast<size_t>(c.slot) >= used.size()) return false;
        used[c.slot] = true;
      }
      break;
    }
    default: break;
  }
  for (const ScalarPtr* op : e.operands())
    if (*op && !mark_reads(**op, used)) return false;
  return true;
}

// Whether `e` calls only deterministic functions (subqueries are refused by mark_reads).
bool deterministic_reads(const ScalarExpr& e) {
  if (e.kind == ScalarKind::kFunction && !(static_cast<const FunctionScalar&>(e).fn->flags & kDeterministic))
    return false;
  for (const ScalarPtr* op : e.operands())
    if (*op && !deterministic_reads(**op)) return false;
  return true;
}

bool reads_only_first(const ScalarExpr& e, int width) {
  std::vector<bool> used(static_cast<size_t>(width), false);
  return mark_reads(e, used);
}

std::vector<int> all_columns_of(const RelNode& n) {
  std::vector<int> cols(n.columns.size());
  for (size_t i = 0; i < cols.size(); ++i) cols[i] = static_cast<int>(i);
  return cols;
}

// Whether a conjunct of `predicate` is a constant that is FALSE or NULL (folded).
bool never_true(const ScalarPtr& predicate) {
  std::vector<ScalarPtr> conjuncts;
  split_conjuncts(predicate, conjuncts);
  for (const ScalarPtr& c : conjuncts) {
    if (c->kind != ScalarKind::kLiteral) continue;
    bool is_null = false;
    try {
      if (!static_cast<const LiteralScalar&>(*c).value.truthy(&is_null) || is_null) return true;
    } catch (const std::exception&) {
      // a value with no truth value: left to run time
    }
  }
  return false;
}

// A relation whose evaluation does nothing but read (no writes, no table functions).
bool pure_reads(const RelNode& n) {
  switch (n.kind) {
    case RelKind::kTableScan:
    case RelKind::kValues:
    case RelKind::kSingleRow: return true;
    case RelKind::kFilter: return pure_reads(*static_cast<const FilterNode&>(n).input);
    case RelKind::kProject: return pure_reads(*static_cast<const ProjectNode&>(n).input);
    case RelKind::kSort: return pure_reads(*static_cast<const SortNode&>(n).input);
    case RelKind::kDistinct: return pure_reads(*static_cast<const DistinctNode&>(n).input);
    case RelKind::kAggregate: return pure_reads(*static_cast<const AggregateNode&>(n).input);
    case RelKind::kWindow: return pure_reads(*static_cast<const WindowNode&>(n).input);
    case RelKind::kLimit: return pure_reads(*static_cast<const LimitNode&>(n).input);
    case RelKind::kCache: return pure_reads(*static_cast<const CacheNode&>(n).input);
    case RelKind::kJoin: {
      auto& j = static_cast<const JoinNode&>(n);
      return pure_reads(*j.left) && pure_reads(*j.right);
    }
    default: return false;
  }
}

}  // namespace

// LEFT JOIN elimination (optimizer-fd.md): under a projection that reads only the left
// side's columns, a LEFT JOIN whose left rows each meet at most one right row (the ON
// equates a key of the right side) yields exactly its left rows: the join goes. This is
// what lets a lens read that names only some members' columns plan as the hand-written
// query over those members.
// Under a DISTINCT (`under_distinct`) how many right rows a left row meets does not
// matter: every left row comes out at least once, with its own values, and DISTINCT
// keeps one of each — so the join goes whenever the (deterministic) projection reads
// only the left side, as SQLite's omit-noop-join does (difftest seed 275026441: a
// DISTINCT of constants over a LEFT JOIN of two 17,000-row views on a constant).
RelPtr Optimizer::eliminate_left_joins(RelPtr input, const std::vector<ScalarPtr>& reads, bool under_distinct) {
  while (input->kind == RelKind::kJoin) {
    auto& j = static_cast<const JoinNode&>(*input);
    if (j.join != ast::JoinKind::kLeft || j.lateral) break;
    const int lw = static_cast<int>(j.left->columns.size());
    bool left_only = true;
    for (const ScalarPtr& e : reads) left_only = left_only && reads_only_first(*e, lw);
    if (!left_only || !pure_reads(*j.right) || (!under_distinct && !left_meets_at_most_one(j))) break;
    input = j.left;
  }
  return input;
}

RelPtr Optimizer::rewrite(RelPtr node) {
  if (enabled("constant_folding")) fold_node_constants(*node);
  switch (node->kind) {
    case RelKind::kFilter: {
      if (enabled("subquery_decorrelation")) {
        DecorrelationOptions d{[this](RelPtr n) { return rewrite(std::move(n)); }, enabled("hash_join")};
        if (RelPtr joined = decorrelate_subqueries(node, d)) return joined;
      }
      auto& f = static_cast<FilterNode&>(*node);
      // A WHERE / HAVING that folded to FALSE or NULL passes no row: its input is not
      // evaluated at all (unless it writes — a DML source runs whatever the filter says).
      if (enabled("constant_folding") && never_true(f.predicate) && !plan_writes(*f.input)) {
        auto none = std::make_shared<ValuesNode>();
        none->columns = node->columns;
        return none;
      }
      if (enabled("predicate_pushdown")) {
        std::vector<ScalarPtr> conjuncts;
        split_conjuncts(f.predicate, conjuncts);
        return push_down(f.input, std::move(conjuncts));
      }
      f.input = rewrite(f.input);
      return node;
    }
    case RelKind::kTableScan: {
      auto& scan = static_cast<TableScanNode&>(*node);
      if (!scan.planned) plan_access(scan);
      return node;
    }
    case RelKind::kSort: {
      auto& s = static_cast<SortNode&>(*node);
      s.input = rewrite(s.input);
      if (!enabled("ordering_by_index") || !options_.module_pushdown) return node;
      // SORT over PROJECT (plain columns) over [FILTER over] SCAN: ask the scan for the order.
      RelNode* below = s.input.get();
      const ProjectNode* proj = nullptr;
      if (below->kind == RelKind::kProject) {
        proj = static_cast<const ProjectNode*>(below);
        below = proj->input.get();
      }
      if (below->kind == RelKind::kFilter) below = static_cast<FilterNode*>(below)->input.get();
      if (below->kind != RelKind::kTableScan) return node;
      auto& scan = static_cast<TableScanNode&>(*below);
      std::vector<OrderSpec> wanted;
      for (auto& k : s.sort_keys) {
        auto* col = as_local_column(*k.expr);
        if (!col) return node;
        int slot = col->slot;
        if (proj) {
          if (slot >= static_cast<int>(proj->exprs.size())) return node;
          auto* inner = as_local_column(*proj->exprs[slot]);
          if (!inner) return node;
          slot = inner->slot;
        }
        if (k.expr->collation != scan.columns[slot].collation &&
            !(k.expr->collation == nullptr || scan.columns[slot].collation == nullptr))
          return node;
        // NULLs sort first in both directions; a DESC order over a nullable column
        // would put them last, so only claim it for NOT NULL columns.
        if (k.desc != !k.nulls_first && scan.columns[slot].nullable) return node;
        wanted.push_back({slot, k.desc});
      }
      auto saved = scan.plan;
      auto saved_order = scan.ordering;
      auto saved_index = std::make_tuple(scan.index, scan.index_filters, scan.index_plan);
      scan.ordering = wanted;
      plan_access(scan);
      // A filter the earlier plan handled has no residual above the scan: the ordered
      // plan must handle it too (difftest seed 229141652: an ordered scan of a secondary
      // index dropped `c0 in (…)`, which the primary key's multi-seek had answered).
      bool keeps_filters = scan.plan.handled.size() == saved.handled.size();
      for (size_t i = 0; keeps_filters && i < saved.handled.size(); ++i)
        keeps_filters = !saved.handled[i] || scan.plan.handled[i];
      if (scan.plan.provides_ordering && keeps_filters) return s.input;
      scan.ordering = saved_order;
      scan.plan = saved;
      std::tie(scan.index, scan.index_filters, scan.index_plan) = saved_index;
      return node;
    }
    default: break;
  }
  // Generic: rewrite children.
  switch (node->kind) {
    case RelKind::kProject: {
      auto& n = static_cast<ProjectNode&>(*node);
      n.input = rewrite(n.input);
      if (!enabled("join_elimination")) break;
      n.input = eliminate_left_joins(n.input, n.exprs);
      // A projection over a projection (a view's body under the query's select list):
      // the join under the inner one goes when what the outer one reads of it reads only
      // the left side; the inner outputs nobody reads become NULL.
      if (n.input->kind != RelKind::kProject || n.input.use_count() != 1) break;
      auto& inner = static_cast<ProjectNode&>(*n.input);
      std::vector<bool> used(inner.exprs.size(), false);
      bool known = true;
      for (const ScalarPtr& e : n.exprs) known = known && mark_reads(*e, used);
      if (!known) break;
      std::vector<ScalarPtr> reads;
      for (size_t i = 0; i < used.size(); ++i)
        if (used[i]) reads.push_back(inner.exprs[i]);
      RelPtr before = inner.input;
      inner.input = eliminate_left_joins(inner.input, reads);
      if (inner.input == before) break;
      for (size_t i = 0; i < used.size(); ++i) {
        if (used[i]) continue;
        auto null = std::make_shared<LiteralScalar>(Value());
        null->type = inner.exprs[i]->type;
        inner.exprs[i] = std::move(null);
      }
      break;
    }
    case RelKind::kJoin: return push_down(node, {});
    case RelKind::kAggregate: { auto& n = static_cast<AggregateNode&>(*node); n.input = rewrite(n.input); break; }
    case RelKind::kLimit: { auto& n = static_cast<LimitNode&>(*node); n.input = rewrite(n.input); break; }
    case RelKind::kWindow: { auto& n = static_cast<WindowNode&>(*node); n.input = rewrite(n.input); break; }
    case RelKind::kDistinct: {
      auto& n = static_cast<DistinctNode&>(*node);
      n.input = rewrite(n.input);
      if (enabled("join_elimination") && n.input->kind == RelKind::kProject) {
        auto& p = static_cast<ProjectNode&>(*n.input);
        bool deterministic = true;
        for (const ScalarPtr& e : p.exprs) deterministic = deterministic && deterministic_reads(*e);
        if (deterministic) p.input = eliminate_left_joins(p.input, p.exprs, true);
      }
      // Rows that are already distinct (a key among the columns, compared as DISTINCT
      // compares them) need no DISTINCT.
      if (enabled("distinct_elimination")) {
        RelProperties p = derive_properties(*n.input);
        if (p.is_set || p.is_unique(all_columns_of(*n.input), n.input->columns.size())) return n.input;
      }
      break;
    }
    case RelKind::kSetOp: { auto& n = static_cast<SetOpNode&>(*node); n.left = rewrite(n.left); n.right = rewrite(n.right); break; }
    // A shared CTE reference's body (the planner's): optimized on its own, no predicate
    // of the reader moves into it (push_down stops at the node).
    case RelKind::kCache: { auto& n = static_cast<CacheNode&>(*node); n.input = rewrite(n.input); break; }
    case RelKind::kRecursiveCte: {
      auto& n = static_cast<RecursiveCteNode&>(*node);
      n.initial = rewrite(n.initial);
      n.recursive = rewrite(n.recursive);
      break;
    }
    default: break;
  }
  return node;
}

RelPtr Optimizer::optimize(RelPtr root) { return rewrite(std::move(root)); }

RelPtr Optimizer::finish_query(RelPtr root) {
  if (enabled("subquery_cache")) cache_invariant_subtrees(root);
  return root;
}

}  // namespace quereus
