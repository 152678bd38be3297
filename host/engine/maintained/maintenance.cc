// Row-time maintenance (see maintenance.h).
#include "maintained/maintenance.h"

#include <algorithm>

#include "catalog/derivation.h"
#include "catalog/tag_set.h"
#include "common/status.h"
#include "common/strings.h"
#include "eval/exec_context.h"
#include "parser/ast.h"
#include "parser/ast_build.h"
#include "parser/ast_clone.h"
#include "parser/ast_walk.h"
#include "planner/planner.h"
#include "planner/properties.h"
#include "runtime/table_reads.h"
#include "types/compare.h"

namespace quereus {

namespace {

// A view deeper than this in a chain of views over views is a cycle (which DDL refuses).
constexpr int kMaxCascadeDepth = 64;

bool reads_other_rows(const ScalarExpr& e) {
  if (e.kind == ScalarKind::kSubquery || e.kind == ScalarKind::kExists || e.kind == ScalarKind::kInSubquery)
    return true;
  for (const ScalarPtr* o : e.operands())
    if (reads_other_rows(**o)) return true;
  return false;
}

// The source column `e` copies verbatim (a column of the scan row, possibly under
// COLLATE), or -1.
int passthrough_column(const ScalarExpr& e) {
  const ScalarExpr* x = &e;
  while (x->kind == ScalarKind::kCollate) {
    auto ops = x->operands();
    if (ops.size() != 1) return -1;
    x = ops[0]->get();
  }
  if (x->kind != ScalarKind::kColumn) return -1;
  const auto& c = static_cast<const ColumnScalar&>(*x);
  return c.level == 0 ? c.slot : -1;
}

void collect_sources(const RelNode& n, std::vector<TableEntry*>& out) {
  if (n.kind == RelKind::kTableScan) {
    TableEntry* t = static_cast<const TableScanNode&>(n).table.get();
    if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  }
  for (const RelNode* c : n.children()) collect_sources(*c, out);
}

// A body's top projection, under an ORDER BY at most (the shape every arm starts from);
// null for any other shape.
const ProjectNode* top_projection(const RelNode& root) {
  const RelNode* n = &root;
  if (n->kind == RelKind::kSort) n = static_cast<const SortNode*>(n)->input.get();
  return n->kind == RelKind::kProject ? static_cast<const ProjectNode*>(n) : nullptr;
}

// Recognizes the inverse-projection shape in the bound (unoptimized) body: [Sort] over
// Project over [Filter] over a scan of one table, every expression a function of the
// scanned row alone, the source's primary key and the view's all passthrough columns.
void classify(const RelNode& root, const TableEntry& view, MaintenancePlan& plan) {
  const ProjectNode* top = top_projection(root);
  if (!top) return;
  const ProjectNode& project = *top;
  const RelNode* n = project.input.get();
  ScalarPtr filter;
  if (n->kind == RelKind::kFilter) {
    filter = static_cast<const FilterNode*>(n)->predicate;
    n = static_cast<const FilterNode*>(n)->input.get();
  }
  if (n->kind != RelKind::kTableScan) return;
  const auto& scan = static_cast<const TableScanNode&>(*n);
  if (!scan.filters.empty() || scan.read_committed) return;
  if (scan.columns.size() != scan.table->schema.columns.size()) return;
  if (project.exprs.size() != view.schema.columns.size()) return;
  if (filter && reads_other_rows(*filter)) return;
  std::vector<int> copies(project.exprs.size(), -1);
  for (size_t i = 0; i < project.exprs.size(); ++i) {
    if (reads_other_rows(*project.exprs[i])) return;
    copies[i] = passthrough_column(*project.exprs[i]);
  }
  for (const KeyColumn& k : scan.table->schema.primary_key)
    if (std::find(copies.begin(), copies.end(), k.column) == copies.end()) return;
  for (const KeyColumn& k : view.schema.primary_key)
    if (copies[k.column] < 0) return;
  plan.strategy = MaintenanceStrategy::kInverseProjection;
  plan.source = scan.table.get();
  plan.filter = filter;
  plan.project = project.exprs;
}

bool numeric_column(const TableSchema& ts, int c) {
  qrs_logical_type t = ts.columns[c].logical_type;
  return t == QRS_LT_INTEGER || t == QRS_LT_REAL;
}

// The insert-only delta path of a group-residual view: no HAVING, every view column a
// grouping key or one of the built-in count(*) / count / sum / min / max / avg over a
// NOT NULL numeric source column, and a count(*) column (the group's size). The built-ins
// are recognized by name; any other aggregate folds through its declared algebra (merge
// and decode at least: a plugin's, SDK 1.9) or keeps the view on recompute.
void classify_delta(const ProjectNode& project, const AggregateNode& agg, bool having, const ScalarPtr& filter,
                    const TableScanNode& scan, MaintenancePlan& plan) {
  if (having) return;
  using DC = MaintenancePlan::DeltaColumn;
  std::vector<DC> out;
  const size_t groups = agg.group_by.size();
  int count_star = -1;
  for (size_t j = 0; j < project.exprs.size(); ++j) {
    const ScalarExpr& e = *project.exprs[j];
    if (e.kind != ScalarKind::kColumn || static_cast<const ColumnScalar&>(e).level != 0) return;
    const size_t slot = static_cast<size_t>(static_cast<const ColumnScalar&>(e).slot);
    DC dc;
    if (slot < groups) {
      // A stored group row keeps its key's spelling; under a non-BINARY collation the
      // body may spell the group as another of its rows does: recompute instead.
      const Collation* c = agg.group_by[slot]->collation;
      if (c && c != &Collation::binary()) return;
      dc.group = static_cast<int>(slot);
      out.push_back(dc);
      continue;
    }
    if (slot - groups >= agg.aggs.size()) return;
    const AggregateCall& call = agg.aggs[slot - groups];
    if (call.distinct || !call.fn) return;
    const std::string& name = call.fn->name;
    if (call.star || (name == "count" && call.args.empty())) {
      dc.kind = DC::Kind::kCountStar;
      if (count_star < 0) count_star = static_cast<int>(j);
      out.push_back(dc);
      continue;
    }
    const bool builtin = name == "count" || name == "sum" || name == "min" || name == "max" || name == "avg";
    if (!builtin) {
      // An aggregate that declares its algebra folds through it (aggregate-algebra.md):
      // decode the stored value, merge each row's state (negated for a retraction).
      const AggregateAlgebra& algebra = call.fn->algebra;
      if (!algebra.merge || !algebra.decode) return;
      bool not_null = true;
      for (const ScalarPtr& a : call.args) {
        if (a->kind != ScalarKind::kColumn || static_cast<const ColumnScalar&>(*a).level != 0) return;
        const int c = static_cast<const ColumnScalar&>(*a).slot;
        dc.args.push_back(c);
        not_null = not_null && scan.table->schema.columns[c].not_null;
      }
      dc.kind = DC::Kind::kAlgebra;
      dc.fn = call.fn;
      // A retraction through a decoded value is sound when decode is exact, or when no
      // argument is NULL and the group's count(*) (required below) shows rows remain.
      dc.retracts = algebra.negate && (algebra.decode_exact || not_null);
      out.push_back(dc);
      continue;
    }
    if (call.args.size() != 1 || call.args[0]->kind != ScalarKind::kColumn) return;
    const auto& arg = static_cast<const ColumnScalar&>(*call.args[0]);
    if (arg.level != 0 || !scan.table->schema.columns[arg.slot].not_null ||
        !numeric_column(scan.table->schema, arg.slot))
      return;
    dc.source = arg.slot;
    if (name == "count") dc.kind = DC::Kind::kCount;
    else if (name == "sum") dc.kind = DC::Kind::kSum;
    else if (name == "min") dc.kind = DC::Kind::kMin;
    else if (name == "max") dc.kind = DC::Kind::kMax;
    else if (name == "avg") dc.kind = DC::Kind::kAvg;
    else return;
    // sum and avg fold exactly over integers only (a REAL sum would drift from a rescan).
    if ((dc.kind == DC::Kind::kSum || dc.kind == DC::Kind::kAvg) &&
        scan.table->schema.columns[arg.slot].logical_type != QRS_LT_INTEGER)
      return;
    out.push_back(dc);
  }
  if (count_star < 0) return;
  // avg needs the group's sum of its argument: recomputed from the stored avg × count,
  // which is exact only when a sum of the same column is stored beside it.
  for (const DC& dc : out)
    if (dc.kind == DC::Kind::kAvg &&
        std::none_of(out.begin(), out.end(), [&](const DC& o) { return o.kind == DC::Kind::kSum && o.source == dc.source; }))
      return;
  plan.delta = std::move(out);
  plan.count_star_column = count_star;
  plan.delta_filter = filter;
}

// Recognizes the group-residual shape in the bound body: [Sort] over Project over
// [Filter (HAVING)] over Aggregate grouped by source columns over [Filter] over a scan of
// one table, with the view's primary key exactly its grouping keys (passthrough).
bool classify_group(const RelNode& root, const TableEntry& view, MaintenancePlan& plan) {
  const ProjectNode* top = top_projection(root);
  if (!top) return false;
  const ProjectNode& project = *top;
  const RelNode* n = project.input.get();
  const bool having = n->kind == RelKind::kFilter;
  if (having) n = static_cast<const FilterNode*>(n)->input.get();
  if (n->kind != RelKind::kAggregate) return false;
  const auto& agg = static_cast<const AggregateNode&>(*n);
  n = agg.input.get();
  ScalarPtr agg_filter;
  if (n->kind == RelKind::kFilter) {
    agg_filter = static_cast<const FilterNode*>(n)->predicate;
    if (reads_other_rows(*agg_filter)) return false;
    n = static_cast<const FilterNode*>(n)->input.get();
  }
  if (n->kind != RelKind::kTableScan || agg.group_by.empty()) return false;
  const auto& scan = static_cast<const TableScanNode&>(*n);
  if (!scan.filters.empty() || scan.read_committed) return false;
  std::vector<int> groups;
  for (const auto& g : agg.group_by) {
    if (g->kind != ScalarKind::kColumn || static_cast<const ColumnScalar&>(*g).level != 0) return false;
    groups.push_back(static_cast<const ColumnScalar&>(*g).slot);
  }
  std::vector<int> key_groups;
  std::vector<bool> covered(groups.size(), false);
  for (const KeyColumn& k : view.schema.primary_key) {
    if (k.column >= static_cast<int>(project.exprs.size())) return false;
    const ScalarExpr& e = *project.exprs[k.column];
    if (e.kind != ScalarKind::kColumn || static_cast<const ColumnScalar&>(e).level != 0) return false;
    int slot = static_cast<const ColumnScalar&>(e).slot;
    if (slot >= static_cast<int>(groups.size())) return false;
    key_groups.push_back(slot);
    covered[slot] = true;
  }
  if (std::find(covered.begin(), covered.end(), false) != covered.end()) return false;
  plan.strategy = MaintenanceStrategy::kGroupResidual;
  plan.source = scan.table.get();
  plan.group_columns = std::move(groups);
  plan.key_groups = std::move(key_groups);
  classify_delta(project, agg, having, agg_filter, scan, plan);
  return true;
}

// The body filtered to one group: `<source>.<g_i> = ?i` (or IS) for each grouping key.
RelPtr group_residual(TransactionContext& db, const ast::Select& body, const MaintenancePlan& plan,
                      const std::string& schema, bool is, const std::string& qualifier) {
  auto copy = ast::clone(body);
  for (size_t i = 0; i < plan.group_columns.size(); ++i) {
    auto param = std::make_unique<ast::Parameter>();
    param->index = static_cast<int>(i + 1);
    param->spelling = "?" + std::to_string(i + 1);
    ast::ExprPtr test =
        ast::binary(is ? ast::BinaryOp::kIs : ast::BinaryOp::kEq,
                    ast::column_ref(qualifier, plan.source->schema.columns[plan.group_columns[i]].name), std::move(param));
    copy->core.where = ast::conjoin(std::move(copy->core.where), std::move(test));
  }
  Planner planner(db);
  return db.optimize_plan(planner.plan_view_body(*copy, schema).root);
}

// The conjuncts of `e` (AND flattened).
void conjuncts(const ScalarPtr& e, std::vector<const ScalarExpr*>& out) {
  if (!e) return;
  if (e->kind == ScalarKind::kAnd) {
    for (const ScalarPtr* o : e->operands()) conjuncts(*o, out);
    return;
  }
  out.push_back(e.get());
}

// Recognizes the join-residual shape in the bound body: [Sort] over Project over [Filter]
// over an inner or cross join (or a left join driven by its left side) of two table
// scans, no aggregate, with the view's primary key exactly the driving table's primary
// key (passthrough) and at least one equality between a driving column and a lookup
// column under the driving column's own collation (so the lookup finds every T row a
// lookup row joins). The body's keys (checked by the caller) give at most one row per
// driving key. `qualifiers` are the two sources' names in the body (alias or table).
bool classify_join(const RelNode& root, const TableEntry& view, const std::string qualifiers[2],
                   MaintenancePlan& plan, std::string& driving_qualifier) {
  const ProjectNode* top = top_projection(root);
  if (!top) return false;
  const ProjectNode& project = *top;
  const RelNode* n = project.input.get();
  std::vector<const ScalarExpr*> tests;
  if (n->kind == RelKind::kFilter) {
    const ScalarPtr& f = static_cast<const FilterNode*>(n)->predicate;
    if (reads_other_rows(*f)) return false;
    conjuncts(f, tests);
    n = static_cast<const FilterNode*>(n)->input.get();
  }
  if (n->kind != RelKind::kJoin) return false;
  const auto& join = static_cast<const JoinNode&>(*n);
  if (join.lateral || !join.existence.empty()) return false;
  if (join.join != ast::JoinKind::kInner && join.join != ast::JoinKind::kCross && join.join != ast::JoinKind::kLeft)
    return false;
  if (join.on && reads_other_rows(*join.on)) return false;
  conjuncts(join.on, tests);
  const RelNode* sides[2] = {join.left.get(), join.right.get()};
  for (const RelNode* side : sides) {
    if (side->kind != RelKind::kTableScan) return false;
    const auto& scan = static_cast<const TableScanNode&>(*side);
    if (!scan.filters.empty() || scan.read_committed || scan.columns.size() != scan.table->schema.columns.size())
      return false;
  }
  const auto& left = static_cast<const TableScanNode&>(*sides[0]);
  const auto& right = static_cast<const TableScanNode&>(*sides[1]);
  const int width = static_cast<int>(left.columns.size());
  for (const ScalarPtr& e : project.exprs)
    if (reads_other_rows(*e)) return false;
  // The driving side: the one whose primary key is the view's.
  for (int side = 0; side < 2; ++side) {
    if (side == 1 && join.join == ast::JoinKind::kLeft) break;  // the null-extended side cannot drive
    const TableScanNode& t = side == 0 ? left : right;
    const TableScanNode& other = side == 0 ? right : left;
    const int base = side == 0 ? 0 : width;
    const int t_width = static_cast<int>(t.columns.size());
    const auto& tpk = t.table->schema.primary_key;
    if (tpk.size() != view.schema.primary_key.size()) continue;
    std::vector<int> key_groups;
    for (const KeyColumn& k : view.schema.primary_key) {
      int slot = k.column < static_cast<int>(project.exprs.size()) ? passthrough_column(*project.exprs[k.column]) : -1;
      if (slot < base || slot >= base + t_width) break;
      auto at = std::find_if(tpk.begin(), tpk.end(), [&](const KeyColumn& c) { return c.column == slot - base; });
      if (at == tpk.end()) break;
      key_groups.push_back(static_cast<int>(at - tpk.begin()));
    }
    if (key_groups.size() != tpk.size()) continue;
    // Equalities driving column = lookup column.
    std::vector<std::pair<int, int>> equal;  // (driving column, lookup column)
    for (const ScalarExpr* c : tests) {
      if (c->kind != ScalarKind::kBinary) continue;
      const auto& b = static_cast<const BinaryScalar&>(*c);
      if (b.op != ast::BinaryOp::kEq) continue;
      int l = passthrough_column(*b.left), r = passthrough_column(*b.right);
      if (l < 0 || r < 0) continue;
      auto in_t = [&](int s) { return s >= base && s < base + t_width; };
      if (in_t(l) == in_t(r)) continue;
      int tc = (in_t(l) ? l : r) - base;
      int oc = in_t(l) ? r : l;
      oc -= side == 0 ? width : 0;
      const Collation* column = t.table->schema.columns[tc].collation.get();
      const Collation* used = b.compare_collation;
      auto name = [](const Collation* x) { return x ? x->name() : std::string("BINARY"); };
      if (name(column) != name(used)) continue;
      equal.emplace_back(tc, oc);
    }
    if (equal.empty()) return false;
    plan.strategy = MaintenanceStrategy::kJoinResidual;
    plan.source = t.table.get();
    plan.lookup = other.table.get();
    for (const KeyColumn& k : tpk) plan.group_columns.push_back(k.column);
    plan.key_groups = std::move(key_groups);
    for (auto [tc, oc] : equal) {
      plan.join_driving_columns.push_back(tc);
      plan.lookup_columns.push_back(oc);
    }
    driving_qualifier = qualifiers[side];
    return true;
  }
  return false;
}

// Recognizes the prefix-delete shape in the bound body: [Sort] over Project over [Filter]
// over an inner or cross LATERAL join of a table scan T and a table function, no
// aggregate, every expression reading the joined row alone, with the view's primary key
// led by T's primary key (passthrough, in order, under T's collations): T's row is the
// only input of its slice, so a change to it is repaired by replacing that slice.
bool classify_lateral(const RelNode& root, const TableEntry& view, MaintenancePlan& plan) {
  const ProjectNode* top = top_projection(root);
  if (!top) return false;
  const ProjectNode& project = *top;
  const RelNode* n = project.input.get();
  if (n->kind == RelKind::kFilter) {
    if (reads_other_rows(*static_cast<const FilterNode*>(n)->predicate)) return false;
    n = static_cast<const FilterNode*>(n)->input.get();
  }
  if (n->kind != RelKind::kJoin) return false;
  const auto& join = static_cast<const JoinNode&>(*n);
  if (!join.lateral || !join.existence.empty() ||
      (join.join != ast::JoinKind::kInner && join.join != ast::JoinKind::kCross))
    return false;
  if (join.on && reads_other_rows(*join.on)) return false;
  if (join.left->kind != RelKind::kTableScan || join.right->kind != RelKind::kTableFunction) return false;
  const auto& t = static_cast<const TableScanNode&>(*join.left);
  if (!t.filters.empty() || t.read_committed || t.columns.size() != t.table->schema.columns.size()) return false;
  for (const ScalarPtr& a : static_cast<const TableFunctionNode&>(*join.right).args)
    if (reads_other_rows(*a)) return false;
  for (const ScalarPtr& e : project.exprs)
    if (reads_other_rows(*e)) return false;
  const auto& tpk = t.table->schema.primary_key;
  const auto& vpk = view.schema.primary_key;
  if (tpk.empty() || vpk.size() <= tpk.size()) return false;
  auto coll = [](const Collation* x) { return x ? x->name() : std::string("BINARY"); };
  for (size_t i = 0; i < tpk.size(); ++i) {
    const int vc = vpk[i].column;
    if (vc >= static_cast<int>(project.exprs.size()) || passthrough_column(*project.exprs[vc]) != tpk[i].column ||
        vpk[i].desc != tpk[i].desc ||
        coll(view.schema.columns[vc].collation.get()) != coll(t.table->schema.columns[tpk[i].column].collation.get()))
      return false;
  }
  plan.strategy = MaintenanceStrategy::kPrefixDelete;
  plan.source = t.table.get();
  for (size_t i = 0; i < tpk.size(); ++i) {
    plan.group_columns.push_back(tpk[i].column);
    plan.key_groups.push_back(static_cast<int>(i));
  }
  return true;
}

// `select <columns> from <table> where <equal_i> = ?i`, planned: the rows of `ts` holding
// given values in its columns `equal`.
RelPtr select_where_equal(TransactionContext& db, const TableSchema& ts, const std::vector<int>& columns,
                          const std::vector<int>& equal) {
  auto sel = std::make_unique<ast::Select>();
  for (int c : columns) {
    ast::ResultColumn rc;
    rc.expr = ast::column_ref("", ts.columns[c].name);
    sel->core.columns.push_back(std::move(rc));
  }
  auto from = std::make_unique<ast::TableSource>();
  from->kind = ast::TableSource::Kind::kTable;
  from->table.schema = ts.schema_name;
  from->table.name = ts.name;
  sel->core.from = std::move(from);
  for (size_t i = 0; i < equal.size(); ++i) {
    auto param = std::make_unique<ast::Parameter>();
    param->index = static_cast<int>(i + 1);
    param->spelling = "?" + std::to_string(i + 1);
    sel->core.where = ast::conjoin(
        std::move(sel->core.where),
        ast::binary(ast::BinaryOp::kEq, ast::column_ref("", ts.columns[equal[i]].name), std::move(param)));
  }
  Planner planner(db);
  return db.optimize_plan(planner.plan_view_body(*sel, ts.schema_name).root);
}

// The view rows of one source key: `select * from <view> where k_i = ?i` over the view's
// leading key members (prefix delete).
RelPtr view_slice(TransactionContext& db, const MaintenancePlan& plan, const TableEntry& view) {
  const TableSchema& vs = view.schema;
  std::vector<int> all(vs.columns.size()), leading;
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  for (size_t i = 0; i < plan.key_groups.size(); ++i) leading.push_back(vs.primary_key[i].column);
  return select_where_equal(db, vs, all, leading);
}

// The driving keys whose row holds given values in the join's driving columns:
// `select <T pk> from T where a_i = ?i` (join residual).
RelPtr join_members(TransactionContext& db, const MaintenancePlan& plan) {
  return select_where_equal(db, plan.source->schema, plan.group_columns, plan.join_driving_columns);
}

Row key_of(const TableSchema& ts, const Row& row) {
  Row key;
  key.reserve(ts.primary_key.size());
  for (const KeyColumn& k : ts.primary_key) key.push_back(row[k.column]);
  return key;
}

// Orders rows of one table by primary key under the key columns' collations.
struct KeyLess {
  const TableSchema* ts;
  bool operator()(const Row& a, const Row& b) const {
    for (size_t i = 0; i < ts->primary_key.size(); ++i) {
      const int c = ts->primary_key[i].column;
      int cmp = compare_values(a[c], b[c], ts->columns[c].collation.get());
      if (cmp != 0) return cmp < 0;
    }
    return false;
  }
};

bool same_key(const TableSchema& ts, const Row& a, const Row& b) {
  KeyLess less{&ts};
  return !less(a, b) && !less(b, a);
}

// The grouping-key values of a source row, and the view primary key holding them.
Row group_key(const MaintenancePlan& plan, const Row& row) {
  Row key;
  key.reserve(plan.group_columns.size());
  for (int c : plan.group_columns) key.push_back(row[c]);
  return key;
}

Row view_key_of_group(const MaintenancePlan& plan, const Row& key) {
  Row pk;
  pk.reserve(plan.key_groups.size());
  for (int g : plan.key_groups) pk.push_back(key[g]);
  return pk;
}

// Orders grouping keys under the grouping columns' collations (the groups' identity).
struct GroupLess {
  const MaintenancePlan* plan;
  bool operator()(const Row& a, const Row& b) const {
    const TableSchema& src = plan->source->schema;
    for (size_t i = 0; i < a.size(); ++i) {
      int c = compare_values(a[i], b[i], src.columns[plan->group_columns[i]].collation.get());
      if (c != 0) return c < 0;
    }
    return false;
  }
};

// Sorts `keys` and keeps one of each group under the grouping columns' collations.
void distinct_groups(const MaintenancePlan& plan, std::vector<Row>& keys) {
  GroupLess less{&plan};
  std::sort(keys.begin(), keys.end(), less);
  keys.erase(std::unique(keys.begin(), keys.end(), [&](const Row& a, const Row& b) { return !less(a, b) && !less(b, a); }),
             keys.end());
}

}  // namespace

std::vector<std::vector<int>> body_keys(const RelNode& root) {
  std::vector<std::vector<int>> keys = root.keys;
  RelProperties props = derive_properties(root);
  for (const FunctionalDependency& fd : props.fds)
    if (fd.kind == FunctionalDependency::Kind::kUnique) keys.push_back(fd.determinants);
  if (props.is_set) {
    std::vector<int> all(root.columns.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
    keys.push_back(std::move(all));
  }
  return keys;
}

std::vector<int> coarsened_key(const RelNode& root, bool* coarsens) {
  *coarsens = false;
  const ProjectNode* project = nullptr;
  const RelNode* n = &root;
  for (;;) {
    if (n->kind == RelKind::kSort) {
      n = static_cast<const SortNode*>(n)->input.get();
    } else if (n->kind == RelKind::kFilter) {
      n = static_cast<const FilterNode*>(n)->input.get();
    } else if (n->kind == RelKind::kProject && !project) {
      project = static_cast<const ProjectNode*>(n);
      n = project->input.get();
    } else {
      break;
    }
  }
  if (!project || n->kind != RelKind::kTableScan) return {};
  const auto& scan = static_cast<const TableScanNode&>(*n);
  const TableSchema& src = scan.table->schema;
  if (scan.columns.size() != src.columns.size() || src.primary_key.empty()) return {};
  auto name = [](const Collation* c) { return c ? c->name() : std::string("BINARY"); };
  std::vector<int> key;
  for (const KeyColumn& k : src.primary_key) {
    int best = -1;
    bool best_coarse = true;
    for (size_t i = 0; i < project->exprs.size(); ++i) {
      if (passthrough_column(*project->exprs[i]) != k.column) continue;
      // BINARY is the finest collation: refining to it, or keeping the source's, keeps a
      // true key; any other change is taken as coarser.
      const std::string out = name(project->columns[i].collation);
      const bool coarse = out != "BINARY" && out != name(src.columns[k.column].collation.get());
      if (best < 0 || (best_coarse && !coarse)) {
        best = static_cast<int>(i);
        best_coarse = coarse;
      }
    }
    if (best < 0) return {};
    *coarsens = *coarsens || best_coarse;
    key.push_back(best);
  }
  return key;
}

void check_set(const TableSchema& view, std::vector<Row>& rows) {
  KeyLess less{&view};
  std::sort(rows.begin(), rows.end(), less);
  for (size_t i = 1; i < rows.size(); ++i)
    if (!less(rows[i - 1], rows[i])) {
      std::string key;
      for (const KeyColumn& k : view.primary_key) key += (key.empty() ? "" : ", ") + rows[i][k.column].to_text();
      throw Error(StatusCode::kConstraint, "materialized view '" + view.name +
                                               "' must be a set: two rows of its body share the key (" + key + ")");
    }
}

std::shared_ptr<MaintenancePlan> compile_maintenance(TransactionContext& db, std::shared_ptr<TableEntry> view,
                                                     bool check_attributes) {
  const Derivation& d = *view->schema.derivation;
  auto plan = std::make_shared<MaintenancePlan>();
  Planner planner(db);
  QueryPlan qp = planner.plan_view_body(*d.body, view->schema.schema_name);
  // (Without the attribute check the table is being reshaped to the body: its column
  // count may still differ.)
  if (check_attributes && qp.root->columns.size() != view->schema.columns.size())
    throw Error(StatusCode::kSchema, "its body now produces " + std::to_string(qp.root->columns.size()) +
                                        " column(s) where the view has " + std::to_string(view->schema.columns.size()) +
                                        " (drop and recreate it)");
  // The body must still derive the view's columns: a source ALTER that moved an output
  // column's type, nullability or collation leaves the view frozen until REFRESH
  // reshapes it.
  for (size_t i = 0; check_attributes && i < qp.root->columns.size(); ++i) {
    const Attribute& a = qp.root->columns[i];
    const ColumnSchema& c = view->schema.columns[i];
    auto coll = [](const Collation* x) { return x ? x->name() : std::string("BINARY"); };
    std::string moved;
    if (a.type != QRS_LT_ANY && a.type != c.logical_type) moved = "type";
    else if (a.nullable == c.not_null) moved = "nullability";
    else if (coll(a.collation) != coll(c.collation.get())) moved = "collation";
    if (!moved.empty())
      throw Error(StatusCode::kSchema, "the " + moved + " of its column '" + c.name +
                                          "' moved under it (refresh to reshape it, or drop and recreate it)");
  }
  // The stored rows are keyed by the view's primary key: the body must still prove some
  // key within it, or two body rows could claim one stored row.
  if (const TagValue* why = view->schema.tags.find(kStaleTag))
    throw Error(StatusCode::kSchema, "it is stale (" + tag_text(*why) + "): refresh it");
  bool keyed = false;
  for (const auto& k : body_keys(*qp.root)) {
    bool inside = true;
    for (int c : k)
      inside = inside && std::any_of(view->schema.primary_key.begin(), view->schema.primary_key.end(),
                                     [c](const KeyColumn& pk) { return pk.column == c; });
    keyed = keyed || inside;
  }
  if (!keyed) {
    // A coarsened backing key (the source key through passthrough lineage under the
    // view's collations) keys the view without being a key of the body.
    bool coarsens = false;
    std::vector<int> k = coarsened_key(*qp.root, &coarsens);
    keyed = !k.empty() && std::all_of(k.begin(), k.end(), [&](int c) {
      return std::any_of(view->schema.primary_key.begin(), view->schema.primary_key.end(),
                         [c](const KeyColumn& pk) { return pk.column == c; });
    });
    plan->coarsened = keyed && coarsens;
  }
  if (!keyed) throw Error(StatusCode::kSchema, "its body no longer proves its primary key unique (drop and recreate it)");
  // A body that reads through a subquery (IN, EXISTS, a scalar subquery — in a WHERE,
  // a HAVING, a select list) sees tables its scans do not: a write to one of them can
  // change any of the view's rows, and a per-row or per-group arm cannot tell which. Such
  // a body is kept by the full-rebuild floor, over every table it names.
  const bool reads_through_subquery = ast::select_contains_subquery(*d.body);
  if (!reads_through_subquery) classify(*qp.root, *view, *plan);
  const ast::TableSource* from =
      d.body->compounds.empty() && !reads_through_subquery ? d.body->core.from.get() : nullptr;
  auto name_of = [](const ast::TableSource& t) { return t.alias.empty() ? t.table.name : t.alias; };
  if (plan->strategy == MaintenanceStrategy::kFullRebuild && from && from->kind == ast::TableSource::Kind::kTable &&
      classify_group(*qp.root, *view, *plan)) {
    plan->residual_eq = group_residual(db, *d.body, *plan, view->schema.schema_name, false, name_of(*from));
    plan->residual_is = group_residual(db, *d.body, *plan, view->schema.schema_name, true, name_of(*from));
  }
  if (plan->strategy == MaintenanceStrategy::kFullRebuild && from && from->kind == ast::TableSource::Kind::kJoin &&
      from->left->kind == ast::TableSource::Kind::kTable && from->right->kind == ast::TableSource::Kind::kTable &&
      d.body->core.group_by.empty() && !d.body->core.having && !d.body->core.distinct && !d.body->limit && !d.body->with &&
      !from->right->lateral) {
    const std::string qualifiers[2] = {name_of(*from->left), name_of(*from->right)};
    std::string driving;
    MaintenancePlan trial;
    if (classify_join(*qp.root, *view, qualifiers, trial, driving)) {
      trial.residual_eq = group_residual(db, *d.body, trial, view->schema.schema_name, false, driving);
      trial.residual_is = trial.residual_eq;  // a primary key holds no NULL
      trial.members = join_members(db, trial);
      *plan = std::move(trial);
    }
  }
  if (plan->strategy == MaintenanceStrategy::kFullRebuild && from && from->kind == ast::TableSource::Kind::kJoin &&
      from->left->kind == ast::TableSource::Kind::kTable && from->right->kind == ast::TableSource::Kind::kFunction &&
      from->right->lateral && d.body->compounds.empty() && d.body->core.group_by.empty() && !d.body->core.having &&
      !d.body->core.distinct && !d.body->limit && !d.body->with) {
    MaintenancePlan trial;
    if (classify_lateral(*qp.root, *view, trial)) {
      trial.residual_eq = group_residual(db, *d.body, trial, view->schema.schema_name, false, name_of(*from->left));
      trial.slice = view_slice(db, trial, *view);
      *plan = std::move(trial);
    }
  }
  collect_sources(*qp.root, plan->sources);
  if (reads_through_subquery) {
    std::vector<const ast::QualifiedName*> named;
    ast::named_sources(*d.body, named);
    for (const ast::QualifiedName* n : named) {
      std::shared_ptr<TableEntry> t =
          db.catalog().find(n->schema.empty() ? view->schema.schema_name : to_lower(n->schema), n->name);
      if (!t && n->schema.empty()) t = db.catalog().find("main", n->name);
      if (t && t != view && std::find(plan->sources.begin(), plan->sources.end(), t.get()) == plan->sources.end())
        plan->sources.push_back(t.get());
    }
  }
  plan->body = db.optimize_plan(qp.root);
  // The optimizer folds a WHERE its sources' CHECK constraints contradict to no rows: the
  // body then reads no source table, and no write could ever change it (frozen, its last
  // rows served, until the contradiction is gone).
  std::vector<TableEntry*> read;
  collect_sources(*plan->body, read);
  if (read.empty() && !plan->sources.empty())
    throw Error(StatusCode::kSchema, "its body reads no source table (a CHECK constraint of its sources contradicts "
                                     "its WHERE clause)");
  plan->view = std::move(view);
  return plan;
}

MaintenanceManager::MaintenanceManager(TransactionContext& db) : db_(db) {}

ExecContext& MaintenanceManager::row_context() {
  if (!row_ctx_) {
    row_ctx_ = std::make_unique<ExecContext>();
    db_.open_execution(*row_ctx_);
  }
  return *row_ctx_;
}
MaintenanceManager::~MaintenanceManager() = default;

void MaintenanceManager::sync() { refresh_index(); }

std::shared_ptr<const TableWritePlan> MaintenanceManager::write_plan(const TableEntry& view) {
  return view_state(view).write_plan;
}

MaintenanceManager::ViewState& MaintenanceManager::view_state(const TableEntry& view) {
  refresh_index();
  auto it = view_state_.find(&view);
  if (it != view_state_.end()) return it->second;
  ViewState state;
  state.counters = &counters_[view.qualified_name()];
  if (binder_)
    if (auto entry = db_.catalog().find(view.schema.schema_name, view.schema.name); entry.get() == &view)
      state.write_plan = binder_(entry);
  if (auto p = by_view_.find(&view); p != by_view_.end()) state.coarsened = p->second->coarsened;
  return view_state_.emplace(&view, std::move(state)).first->second;
}

void MaintenanceManager::refresh_index() {
  if (indexed_version_ == db_.schema_version()) return;
  keyed_runs_.clear();  // their operators refer to the plans cleared below
  by_source_.clear();
  by_view_.clear();
  view_state_.clear();
  dirty_.clear();
  dirty_hold_.clear();
  broken_.clear();
  dirty_groups_.clear();
  inserted_.clear();
  retracted_.clear();
  for (auto& t : db_.catalog().tables()) {
    if (!t->schema.derivation) continue;
    std::shared_ptr<const MaintenancePlan> plan;
    t->stale.clear();  // its own reads must plan while it compiles
    try {
      plan = compile_maintenance(db_, t);
    } catch (const Error& e) {
      // A body a schema change broke (a source dropped or reshaped): the view keeps its
      // rows, reads refuse it and maintenance skips it until a REFRESH succeeds; writes
      // elsewhere go on.
      broken_[t.get()] = e.raw_message();
      // A body that no longer plans cannot be read as the view it was; one whose shape
      // or key moved (SCHEMA) serves its last rows, frozen.
      if (e.code() != StatusCode::kSchema) t->stale = e.raw_message();
      continue;
    }
    by_view_[t.get()] = plan;
    for (TableEntry* s : plan->sources) by_source_[s].push_back(plan);
  }
  indexed_version_ = db_.schema_version();
}

std::shared_ptr<const MaintenancePlan> MaintenanceManager::plan_of(const TableEntry& view) {
  refresh_index();
  auto it = by_view_.find(&view);
  if (it != by_view_.end()) return it->second;
  if (auto b = broken_.find(&view); b != broken_.end())
    throw Error(StatusCode::kError, "materialized view '" + view.schema.name + "' no longer plans: " + b->second);
  throw Error(StatusCode::kInternal, "'" + view.qualified_name() + "' is not maintained");
}

void MaintenanceManager::on_row(const ObservedChange& change) {
  // Nothing reads a table no maintained table exists for: the common case costs a compare.
  if (indexed_version_ != db_.schema_version()) refresh_index();
  if (by_source_.empty()) return;
  auto it = by_source_.find(&change.table);
  if (it == by_source_.end()) return;
  if (depth_ >= kMaxCascadeDepth)
    throw Error(StatusCode::kInternal, "materialized view maintenance cascades deeper than " +
                                           std::to_string(kMaxCascadeDepth) + " levels");
  ++depth_;
  struct Depth {
    int& d;
    ~Depth() { --d; }
  } guard{depth_};
  for (const auto& plan : it->second) {
    if (plan->strategy == MaintenanceStrategy::kInverseProjection) {
      maintain_inverse(*plan, change);
      continue;
    }
    if (dirty_.insert(plan.get()).second) dirty_hold_.push_back(plan);
    if (plan->strategy == MaintenanceStrategy::kGroupResidual && !plan->delta.empty()) {
      auto& contributions = inserted_[plan.get()];
      if (change.old_row) contributions.push_back({*change.old_row, -1});
      if (change.new_row) contributions.push_back({*change.new_row, +1});
      continue;
    }
    if (plan->strategy == MaintenanceStrategy::kPrefixDelete) {
      auto& keys = dirty_groups_[plan.get()];
      for (const Row* r : {change.old_row, change.new_row})
        if (r) keys.push_back(group_key(*plan, *r));
      continue;
    }
    if (plan->strategy == MaintenanceStrategy::kJoinResidual) {
      auto& keys = dirty_groups_[plan.get()];
      for (const Row* r : {change.old_row, change.new_row}) {
        if (!r) continue;
        if (&change.table == plan->source) keys.push_back(group_key(*plan, *r));
        if (&change.table == plan->lookup) join_members_of(*plan, *r, keys);
      }
      continue;
    }
    if (plan->strategy == MaintenanceStrategy::kGroupResidual) {
      retracted_.insert(plan.get());
      auto& keys = dirty_groups_[plan.get()];
      for (const Row* r : {change.old_row, change.new_row})
        if (r) keys.push_back(group_key(*plan, *r));
    }
  }
}

void MaintenanceManager::maintain_inverse(const MaintenancePlan& plan, const ObservedChange& change) {
  // The projection and filter read the one row and call deterministic functions only
  // (classify): one context serves every row.
  ExecContext& ctx = row_context();
  const TableSchema& vs = plan.view->schema;
  auto in_scope = [&](const Row& row) {
    if (!plan.filter) return true;
    EvalEnv env{&row, nullptr, &ctx};
    bool null = false;
    bool yes = plan.filter->eval(env).truthy(&null);
    return yes && !null;
  };
  auto image = [&](const Row& row) {
    EvalEnv env{&row, nullptr, &ctx};
    Row out;
    out.reserve(plan.project.size());
    for (const auto& e : plan.project) out.push_back(e->eval(env));
    return out;
  };
  std::optional<Row> before, after;
  if (change.old_row && in_scope(*change.old_row)) before = image(*change.old_row);
  if (change.new_row && in_scope(*change.new_row)) after = image(*change.new_row);
  if (!before && !after) return;
  if (before && after && *before == *after) return;  // nothing the view shows changed
  std::vector<MaintenanceOp> ops;
  if (before && (!after || !same_key(vs, *before, *after)))
    ops.push_back({MaintenanceOp::Kind::kDeleteKey, key_of(vs, *before)});
  if (after) ops.push_back({MaintenanceOp::Kind::kUpsert, std::move(*after)});
  apply(*plan.view, std::move(ops));
}

void MaintenanceManager::apply(TableEntry& view, std::vector<MaintenanceOp> ops) {
  if (ops.empty()) return;
  db_.join(view);
  std::vector<BackingChange> realized;
  if (!view.table->apply_maintenance(ops, realized))
    throw Error(StatusCode::kUnsupported,
                "module '" + view.schema.module_name + "' cannot host maintained table '" + view.qualified_name() + "'");
  ViewState& state = view_state(view);
  MaintenanceCounters& counts = *state.counters;
  counts.rows_written += realized.size();
  // Collision telemetry: under a coarsened key, an update whose key bytes moved is one
  // source row's image replacing a sibling's (or a key's case change: a known heuristic).
  if (state.coarsened)
    for (const BackingChange& c : realized) {
      if (c.op != RowOp::kUpdate) continue;
      for (const KeyColumn& k : view.schema.primary_key)
        if (compare_values(c.old_row[k.column], c.new_row[k.column], nullptr) != 0) {
          ++counts.collisions;
          break;
        }
    }
  // The table's declared constraints, indexes and inbound keys see what was realized.
  if (const auto& wp = state.write_plan) {
    std::vector<DmlWriter::DerivedChange> derived;
    derived.reserve(realized.size());
    for (const BackingChange& c : realized)
      derived.push_back({c.op, c.op == RowOp::kInsert ? nullptr : &c.old_row,
                         c.op == RowOp::kDelete ? nullptr : &c.new_row});
    DmlWriter writer(db_, *wp, row_context());
    writer.apply_derived(derived);
  }
  ChangeLog& log = db_.changes();
  for (const BackingChange& c : realized) {
    const Row* old_row = c.op == RowOp::kInsert ? nullptr : &c.old_row;
    const Row* new_row = c.op == RowOp::kDelete ? nullptr : &c.new_row;
    db_.observe(view, c.op, old_row, new_row);
    if (!log.capturing()) continue;
    switch (c.op) {
      case RowOp::kInsert: log.record_insert(view.schema, c.new_row); break;
      case RowOp::kUpdate: log.record_update(view.schema, c.old_row, c.new_row); break;
      case RowOp::kDelete: log.record_delete(view.schema, c.old_row); break;
    }
  }
}

std::vector<Row> MaintenanceManager::evaluate(const MaintenancePlan& plan) {
  ExecContext ctx;
  db_.open_execution(ctx);
  auto op = plan.body->instantiate();
  EvalEnv env{nullptr, nullptr, &ctx};
  op->open(env);
  std::vector<Row> rows;
  Row r;
  while (op->next(r)) rows.push_back(r);
  return rows;
}

MaintenanceCounters MaintenanceManager::counters(const TableEntry& view) const {
  auto it = counters_.find(view.qualified_name());
  return it == counters_.end() ? MaintenanceCounters{} : it->second;
}

void MaintenanceManager::replace_by_diff(TableEntry& view, std::vector<Row> rows) {
  ++counters_[view.qualified_name()].rebuilds;
  const TableSchema& vs = view.schema;
  KeyLess less{&vs};
  check_set(vs, rows);
  std::vector<Row> stored = scan_rows(view);
  std::sort(stored.begin(), stored.end(), less);
  std::vector<MaintenanceOp> ops;
  // A row equal to a stored one needs no op. It is marked, not cleared: a later stored row
  // is still compared with it.
  std::vector<bool> unchanged(rows.size(), false);
  size_t j = 0;
  for (const Row& old : stored) {
    while (j < rows.size() && less(rows[j], old)) ++j;
    if (j < rows.size() && !less(old, rows[j])) {
      if (old == rows[j]) unchanged[j] = true;
      continue;
    }
    ops.push_back({MaintenanceOp::Kind::kDeleteKey, key_of(vs, old)});
  }
  for (size_t i = 0; i < rows.size(); ++i)
    if (!unchanged[i]) ops.push_back({MaintenanceOp::Kind::kUpsert, std::move(rows[i])});
  apply(view, std::move(ops));
}

void MaintenanceManager::statement_end() {
  // A rebuild's changes may dirty views over it: drain until nothing is dirty (the views
  // form a DAG, so this ends; the depth guard in on_row backs that up).
  for (int round = 0; !dirty_.empty(); ++round) {
    if (round > kMaxCascadeDepth) throw Error(StatusCode::kInternal, "materialized view maintenance does not converge");
    std::vector<std::shared_ptr<const MaintenancePlan>> batch;
    batch.swap(dirty_hold_);
    dirty_.clear();
    std::map<const MaintenancePlan*, std::vector<Row>> groups;
    std::map<const MaintenancePlan*, std::vector<SignedRow>> inserted;
    groups.swap(dirty_groups_);
    inserted.swap(inserted_);
    std::set<const MaintenancePlan*> retracted;
    retracted.swap(retracted_);
    for (const auto& plan : batch) {
      if (plan->strategy == MaintenanceStrategy::kJoinResidual) {
        if (!groups[plan.get()].empty()) flush_groups(*plan, std::move(groups[plan.get()]));
        continue;
      }
      if (plan->strategy == MaintenanceStrategy::kPrefixDelete) {
        if (!groups[plan.get()].empty()) flush_slices(*plan, std::move(groups[plan.get()]));
        continue;
      }
      if (plan->strategy == MaintenanceStrategy::kGroupResidual) {
        std::vector<SignedRow>& rows = inserted[plan.get()];
        // The contributions fold into the stored rows by arithmetic; groups that cannot
        // (a min / max group with a retraction) are recomputed, and all of them when the
        // fold cannot run at all.
        std::vector<Row>& keys = groups[plan.get()];
        if (!rows.empty() && (retracted.count(plan.get()) || !fold_deltas(*plan, rows, keys)))
          for (const SignedRow& r : rows) keys.push_back(group_key(*plan, r.row));
        if (!groups[plan.get()].empty()) flush_groups(*plan, std::move(groups[plan.get()]));
        continue;
      }
      replace_by_diff(*plan->view, evaluate(*plan));
    }
  }
}

void MaintenanceManager::join_members_of(const MaintenancePlan& plan, const Row& lookup_row, std::vector<Row>& keys) {
  Row values;
  values.reserve(plan.lookup_columns.size());
  for (int c : plan.lookup_columns) {
    if (lookup_row[c].is_null()) return;  // an equality with NULL joins nothing
    values.push_back(lookup_row[c]);
  }
  for (Row& r : run_keyed(plan.members, values)) keys.push_back(std::move(r));
}

std::vector<Row> MaintenanceManager::run_keyed(const RelPtr& plan, const Row& params) {
  KeyedRun& run = keyed_runs_[plan.get()];
  KeyedRun fresh;
  KeyedRun& use = run.busy ? fresh : run;
  if (!use.op) {
    use.op = plan->instantiate();
    use.ctx = std::make_unique<ExecContext>();
  }
  use.busy = true;
  struct Release {
    bool& busy;
    ~Release() { busy = false; }
  } release{use.busy};
  ExecContext& ctx = *use.ctx;
  db_.open_execution(ctx);
  ctx.params = &params;
  EvalEnv env{nullptr, nullptr, &ctx};
  std::vector<Row> rows;
  try {
    use.op->open(env);
    Row r;
    while (use.op->next(r)) rows.push_back(r);
  } catch (...) {
    use.op.reset();  // a run cut short may hold a cursor: it is not kept
    throw;
  }
  return rows;
}

void MaintenanceManager::flush_groups(const MaintenancePlan& plan, std::vector<Row> keys) {
  view_state(*plan.view).counters->recomputed_groups += keys.size();
  distinct_groups(plan, keys);  // one recompute each
  // Many groups: one rebuild reads the source once where a recompute per group would
  // read (at least) the group each.
  if (keys.size() > 64) {
    replace_by_diff(*plan.view, evaluate(plan));
    return;
  }
  const TableSchema& vs = plan.view->schema;
  std::vector<MaintenanceOp> ops;
  for (const Row& key : keys) {
    bool has_null = std::any_of(key.begin(), key.end(), [](const Value& v) { return v.is_null(); });
    std::vector<Row> rows = run_keyed(has_null ? plan.residual_is : plan.residual_eq, key);
    if (rows.size() > 1)
      throw Error(StatusCode::kConstraint, "materialized view '" + vs.name + "' must be a set: one group gave " +
                                               std::to_string(rows.size()) + " rows");
    if (rows.empty()) {
      ops.push_back({MaintenanceOp::Kind::kDeleteKey, view_key_of_group(plan, key)});
    } else {
      ops.push_back({MaintenanceOp::Kind::kUpsert, std::move(rows[0])});
    }
  }
  apply(*plan.view, std::move(ops));
}

void MaintenanceManager::flush_slices(const MaintenancePlan& plan, std::vector<Row> keys) {
  view_state(*plan.view).counters->recomputed_groups += keys.size();
  distinct_groups(plan, keys);
  const bool has_null = std::any_of(keys.begin(), keys.end(), [](const Row& k) {
    return std::any_of(k.begin(), k.end(), [](const Value& v) { return v.is_null(); });
  });
  if (keys.size() > 64 || has_null) {  // one rebuild reads the source once
    replace_by_diff(*plan.view, evaluate(plan));
    return;
  }
  const TableSchema& vs = plan.view->schema;
  KeyLess by_key{&vs};
  std::vector<MaintenanceOp> ops;
  for (const Row& key : keys) {
    std::vector<Row> fresh = run_keyed(plan.residual_eq, key);
    std::vector<Row> stored = run_keyed(plan.slice, view_key_of_group(plan, key));
    std::sort(fresh.begin(), fresh.end(), by_key);
    for (size_t i = 1; i < fresh.size(); ++i)
      if (!by_key(fresh[i - 1], fresh[i]))
        throw Error(StatusCode::kConstraint, "materialized view '" + vs.name +
                                                 "' must be a set: two rows of its body share a key");
    for (const Row& old : stored)
      if (!std::binary_search(fresh.begin(), fresh.end(), old, by_key))
        ops.push_back({MaintenanceOp::Kind::kDeleteKey, key_of(vs, old)});
    for (Row& r : fresh) ops.push_back({MaintenanceOp::Kind::kUpsert, std::move(r)});
  }
  apply(*plan.view, std::move(ops));
}

bool MaintenanceManager::fold_deltas(const MaintenancePlan& plan, const std::vector<SignedRow>& rows,
                                     std::vector<Row>& recompute) {
  using DC = MaintenancePlan::DeltaColumn;
  const TableSchema& vs = plan.view->schema;
  ExecContext& ctx = row_context();
  // min / max, and an algebra without a sound retraction, only tighten.
  const bool tightens = std::any_of(plan.delta.begin(), plan.delta.end(), [](const DC& dc) {
    return dc.kind == DC::Kind::kMin || dc.kind == DC::Kind::kMax || (dc.kind == DC::Kind::kAlgebra && !dc.retracts);
  });
  std::map<Row, std::vector<const SignedRow*>, GroupLess> by_group(GroupLess{&plan});
  for (const SignedRow& r : rows) {
    if (plan.delta_filter) {  // a row outside the body's WHERE contributes nothing
      EvalEnv env{&r.row, nullptr, &ctx};
      bool null = false;
      if (!plan.delta_filter->eval(env).truthy(&null) || null) continue;
    }
    by_group[group_key(plan, r.row)].push_back(&r);
  }
  // Computes one group's row (nullopt: the group is gone); false when its stored values
  // are not what the fold expects (then the group is recomputed).
  auto fold_group = [&](const Row& key, const std::vector<const SignedRow*>& members, const std::optional<Row>& stored,
                        std::optional<Row>& out_row) {
    int64_t added = 0;
    for (const SignedRow* m : members) added += m->sign;
    int64_t count = 0;
    if (stored) {
      const Value& c = (*stored)[plan.count_star_column];
      if (c.type() != ValueType::kInteger) return false;
      count = c.as_int();
    }
    const int64_t size = count + added;
    if (size < 0 || (size > 0 && !stored && added != size)) return false;  // not the stored state it assumes
    if (size == 0) {
      out_row.reset();
      return true;
    }
    Row out(vs.columns.size());
    std::map<int, int64_t> sums;  // source column -> the group's new sum
    for (size_t j = 0; j < plan.delta.size(); ++j) {
      const DC& dc = plan.delta[j];
      const Value* before = stored ? &(*stored)[j] : nullptr;
      switch (dc.kind) {
        case DC::Kind::kGroup: out[j] = before ? *before : key[dc.group]; break;
        case DC::Kind::kCountStar:
        case DC::Kind::kCount: {
          if (before && before->type() != ValueType::kInteger) return false;
          out[j] = Value::Integer((before ? before->as_int() : 0) + added);
          break;
        }
        case DC::Kind::kSum: {
          int64_t acc = 0;
          if (before && !before->is_null()) {
            if (before->type() != ValueType::kInteger) return false;
            acc = before->as_int();
          }
          for (const SignedRow* m : members) {
            const Value& x = m->row[dc.source];
            if (x.type() != ValueType::kInteger) return false;
            bool overflow = m->sign > 0 ? __builtin_add_overflow(acc, x.as_int(), &acc)
                                        : __builtin_sub_overflow(acc, x.as_int(), &acc);
            if (overflow) return false;
          }
          out[j] = Value::Integer(acc);
          sums[dc.source] = acc;
          break;
        }
        case DC::Kind::kMin:
        case DC::Kind::kMax: {  // only tightens: the group has no retraction here
          Value best = before ? *before : Value();
          for (const SignedRow* m : members) {
            const Value& x = m->row[dc.source];
            if (best.is_null()) {
              best = x;
              continue;
            }
            int c = compare_values(x, best, nullptr);
            if (dc.kind == DC::Kind::kMin ? c < 0 : c > 0) best = x;
          }
          out[j] = best;
          break;
        }
        case DC::Kind::kAvg: break;  // below, once the sums are known
        case DC::Kind::kAlgebra: {
          std::unique_ptr<AggregateState> acc = dc.fn->make_state();
          if (before) acc->decode(*before);
          Row args(dc.args.size());
          for (const SignedRow* m : members) {
            std::unique_ptr<AggregateState> one = dc.fn->make_state();
            for (size_t a = 0; a < dc.args.size(); ++a) args[a] = m->row[dc.args[a]];
            one->step(args);
            if (m->sign < 0) one->negate();
            acc->merge(*one);
          }
          out[j] = acc->final();
          break;
        }
      }
    }
    for (size_t j = 0; j < plan.delta.size(); ++j) {
      const DC& dc = plan.delta[j];
      if (dc.kind != DC::Kind::kAvg) continue;
      auto it = sums.find(dc.source);
      if (it == sums.end()) return false;
      out[j] = Value::Real(static_cast<double>(it->second) / static_cast<double>(size));
    }
    out_row = std::move(out);
    return true;
  };
  std::vector<MaintenanceOp> ops;
  size_t folded = 0;
  for (const auto& [key, members] : by_group) {
    const bool retracts = std::any_of(members.begin(), members.end(), [](const SignedRow* m) { return m->sign < 0; });
    if (retracts && tightens) {  // min / max cannot give back the extreme a retraction took
      recompute.push_back(key);
      continue;
    }
    std::optional<Row> stored = fetch_by_key(*plan.view, view_key_of_group(plan, key));
    std::optional<Row> row;
    if (!fold_group(key, members, stored, row)) {
      recompute.push_back(key);
      continue;
    }
    folded += members.size();
    if (row) ops.push_back({MaintenanceOp::Kind::kUpsert, std::move(*row)});
    else if (stored) ops.push_back({MaintenanceOp::Kind::kDeleteKey, view_key_of_group(plan, key)});
  }
  apply(*plan.view, std::move(ops));
  view_state(*plan.view).counters->folded_rows += folded;
  return true;
}

void MaintenanceManager::rollback_to(uint64_t seq) {
  if (seq == 0) {  // the transaction (or an autocommit statement) is gone, with its work
    dirty_.clear();
    dirty_hold_.clear();
    dirty_groups_.clear();
    inserted_.clear();
    retracted_.clear();
    return;
  }
  // Part of a statement or transaction was undone. What is dirty stays dirty: recomputing
  // from the live state is right whatever was undone. Folded inserts cannot tell the
  // undone rows from the kept ones, so their groups are recomputed instead.
  for (auto& [plan, rows] : inserted_) {
    auto& keys = dirty_groups_[plan];
    for (const SignedRow& r : rows) keys.push_back(group_key(*plan, r.row));
    retracted_.insert(plan);
  }
  inserted_.clear();
}

}  // namespace quereus
