// explain_assertion(name): classification of an assertion's base-table references (see
// assertion_explain.h).
#include "transaction/assertion_explain.h"

#include <map>
#include <set>

#include "common/status.h"
#include "transaction/assertions.h"
#include "transaction/transaction_context.h"
#include "types/json_value.h"
#include "planner/scalar_expr.h"

namespace quereus {

namespace {

// Follows output column `slot` of `n` down a single-input spine to the base column it
// reads: through projections of plain columns, filters, sorts, limits and DISTINCT.
// Returns the scan and the table column, or {nullptr, -1} when it is computed.
std::pair<const TableScanNode*, int> trace_column(const RelNode& n, int slot) {
  switch (n.kind) {
    case RelKind::kTableScan: {
      const auto& scan = static_cast<const TableScanNode&>(n);
      if (slot < 0 || static_cast<size_t>(slot) >= n.columns.size()) return {nullptr, -1};
      int c = scan.table->schema.find_column(n.columns[slot].name);
      return c >= 0 ? std::pair{&scan, c} : std::pair{nullptr, -1};
    }
    case RelKind::kProject: {
      const auto& p = static_cast<const ProjectNode&>(n);
      if (slot < 0 || static_cast<size_t>(slot) >= p.exprs.size() || p.exprs[slot]->kind != ScalarKind::kColumn)
        return {nullptr, -1};
      const auto& c = static_cast<const ColumnScalar&>(*p.exprs[slot]);
      if (c.level != 0) return {nullptr, -1};
      return trace_column(*p.input, c.slot);
    }
    case RelKind::kFilter: return trace_column(*static_cast<const FilterNode&>(n).input, slot);
    case RelKind::kSort: return trace_column(*static_cast<const SortNode&>(n).input, slot);
    case RelKind::kLimit: return trace_column(*static_cast<const LimitNode&>(n).input, slot);
    case RelKind::kDistinct: return trace_column(*static_cast<const DistinctNode&>(n).input, slot);
    default: return {nullptr, -1};
  }
}

class Classifier {
 public:
  void rel(const RelNode& n) {
    if (n.kind == RelKind::kAggregate) note_groups(static_cast<const AggregateNode&>(n));
    for (const ScalarExpr* e : node_expressions(n)) scalar(*e);
    if (n.kind == RelKind::kTableScan) scan(static_cast<const TableScanNode&>(n));
    for (const RelNode* c : n.children())
      if (c) rel(*c);
  }

  std::vector<AssertionTableClass> out;

 private:
  void scalar(const ScalarExpr& e) {
    switch (e.kind) {
      case ScalarKind::kExists: case ScalarKind::kSubquery: case ScalarKind::kInSubquery: {
        const auto& s = static_cast<const SubqueryScalar&>(e);
        if (s.plan) rel(*s.plan);
        break;
      }
      default: break;
    }
    for (const ScalarPtr* c : e.operands())
      if (*c) scalar(**c);
  }

  // An aggregate grouped only by plain columns of one scan makes that scan 'group'.
  void note_groups(const AggregateNode& a) {
    if (a.group_by.empty()) return;
    const TableScanNode* owner = nullptr;
    std::vector<int> cols;
    for (const ScalarPtr& g : a.group_by) {
      if (g->kind != ScalarKind::kColumn) return;
      const auto& c = static_cast<const ColumnScalar&>(*g);
      if (c.level != 0) return;
      auto [scan, col] = trace_column(*a.input, c.slot);
      if (!scan || (owner && owner != scan)) return;
      owner = scan;
      if (std::find(cols.begin(), cols.end(), col) == cols.end()) cols.push_back(col);
    }
    groups_[owner] = std::move(cols);
  }

  void scan(const TableScanNode& s) {
    const TableSchema& ts = s.table->schema;
    AssertionTableClass c;
    c.base = ts.schema_name + "." + to_lower(ts.name);
    c.relation_key = c.base + "#" + std::to_string(next_++);
    // Every primary-key column pinned by an equality the module is offered.
    std::set<int> pinned;
    for (const PushedFilter& f : s.filters)
      if (f.op == QRS_OP_EQ && f.value) pinned.insert(f.column);
    bool whole_key = !ts.primary_key.empty();
    for (const KeyColumn& k : ts.primary_key)
      if (!pinned.count(k.column)) whole_key = false;
    if (whole_key) {
      c.classification = "row";
      for (size_t i = 0; i < ts.primary_key.size(); ++i) c.params.push_back("pk" + std::to_string(i));
    } else if (auto g = groups_.find(&s); g != groups_.end()) {
      c.classification = "group";
      for (int col : g->second) c.params.push_back(ts.columns[col].name);
    } else {
      c.classification = "global";
    }
    out.push_back(std::move(c));
  }

  std::map<const TableScanNode*, std::vector<int>> groups_;
  int next_ = 0;
};

}  // namespace

std::vector<AssertionTableClass> classify_assertion_plan(const RelNode& plan) {
  Classifier c;
  c.rel(plan);
  return std::move(c.out);
}

std::vector<Row> explain_assertion_rows(TransactionContext& db, const std::string& name) {
  std::string schema, bare = name;
  if (auto dot = name.find('.'); dot != std::string::npos) {
    schema = to_lower(name.substr(0, dot));
    bare = name.substr(dot + 1);
  }
  std::shared_ptr<AssertionEntry> hit;
  const auto& all = db.assertions().list();
  for (const char* preferred : {"main", "temp", ""}) {
    for (const auto& a : all) {
      if (!iequals(a->name, bare)) continue;
      if (!schema.empty() ? a->schema_name != schema : (*preferred && a->schema_name != preferred)) continue;
      hit = a;
      break;
    }
    if (hit || !schema.empty()) break;
  }
  if (!hit) throw Error(StatusCode::kError, "Assertion not found: " + name);
  RelPtr plan = plan_assertion_violation(db, *hit);
  std::vector<Row> rows;
  for (const AssertionTableClass& c : classify_assertion_plan(*plan)) {
    Value params;
    if (!c.params.empty()) {
      jsonv::Json arr = jsonv::Json::array();
      for (const std::string& p : c.params) arr.push_back(jsonv::Json(p));
      params = Value::Text(jsonv::canonical(arr));
    }
    rows.push_back({Value::Text(hit->name), Value::Text(c.relation_key), Value::Text(c.base),
                    Value::Text(c.classification), std::move(params), Value::Text(hit->violation_sql)});
  }
  return rows;
}

}  // namespace quereus
