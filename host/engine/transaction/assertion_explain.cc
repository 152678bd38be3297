// explain_assertion(name): classification of an assertion's base-table references (see
// assertion_explain.h).
#include "transaction/assertion_explain.h"

#include <algorithm>
#include <map>
#include <set>

#include "common/status.h"
#include "transaction/assertions.h"
#include "transaction/transaction_context.h"
#include "types/json_value.h"
#include "planner/scalar_expr.h"

namespace quereus {

namespace {

// Follows output column `slot` of `n` down to the base column it reads: through
// projections of plain columns, filters, sorts, limits, DISTINCT and joins (a join's row is
// its left side's columns, then its right side's). Returns the scan and the table column,
// or {nullptr, -1} when it is computed.
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
    case RelKind::kJoin: {
      const auto& j = static_cast<const JoinNode&>(n);
      if (!j.left || !j.right || slot < 0) return {nullptr, -1};
      const int left = static_cast<int>(j.left->columns.size());
      if (slot < left) return trace_column(*j.left, slot);
      return trace_column(*j.right, slot - left);
    }
    case RelKind::kFilter: return trace_column(*static_cast<const FilterNode&>(n).input, slot);
    case RelKind::kSort: return trace_column(*static_cast<const SortNode&>(n).input, slot);
    case RelKind::kLimit: return trace_column(*static_cast<const LimitNode&>(n).input, slot);
    case RelKind::kDistinct: return trace_column(*static_cast<const DistinctNode&>(n).input, slot);
    default: return {nullptr, -1};
  }
}

bool reads_row(const ScalarExpr& e) {
  if (e.kind == ScalarKind::kColumn) return static_cast<const ColumnScalar&>(e).level == 0;
  for (const ScalarPtr* c : e.operands())
    if (*c && reads_row(**c)) return true;
  return false;
}

// optimizer-assertions.md "Row-specific vs Global Classification": each base-table
// reference of the violation query is
//  - 'row' when equalities cover one of its unique keys (the primary key or a UNIQUE):
//    against a constant, a parameter, an outer column, or another relation's column (a
//    join on the key reduces the joined side to one row);
//  - 'group' when it lies beneath an aggregate whose GROUP BY columns — with the columns
//    joins equate to them — cover one of its unique keys (an aggregate grouped by a
//    non-key column leaves it 'global'); the parameters are the minimal subset of those
//    columns that still covers a key; a 'row' reference beneath stays 'row';
//  - 'global' otherwise, and always beneath a set operation.
// Only explain_assertion reads it: COMMIT re-runs the whole violation query.
class Classifier {
 public:
  void run(const RelNode& plan) {
    rel(plan, Context{});
    for (const Seen& s : seen_) out.push_back(classify(s));
  }

  std::vector<AssertionTableClass> out;

 private:
  using ColRef = std::pair<const TableScanNode*, int>;
  struct Context {
    bool under_setop = false;
    const AggregateNode* aggregate = nullptr;  // the nearest grouped aggregate above
  };
  struct Seen {
    const TableScanNode* scan;
    Context ctx;
  };

  void rel(const RelNode& n, Context ctx) {
    for (const ScalarExpr* e : node_expressions(n)) scalar(*e);
    switch (n.kind) {
      case RelKind::kTableScan: {
        const auto& s = static_cast<const TableScanNode&>(n);
        for (const PushedFilter& f : s.filters)
          if (f.op == QRS_OP_EQ && f.value) covered_[&s].insert(f.column);
        seen_.push_back({&s, ctx});
        break;
      }
      case RelKind::kFilter: {
        const auto& f = static_cast<const FilterNode&>(n);
        if (f.predicate && f.input) equalities(f.predicate, *f.input);
        break;
      }
      case RelKind::kJoin: {
        const auto& j = static_cast<const JoinNode&>(n);
        if (j.on) equalities(j.on, n);
        if (j.left && j.right)
          for (const auto& [l, r] : j.equi_keys) equate(trace_column(*j.left, l), trace_column(*j.right, r));
        break;
      }
      case RelKind::kSetOp: ctx.under_setop = true; break;
      case RelKind::kAggregate: {
        const auto& a = static_cast<const AggregateNode&>(n);
        if (!a.group_by.empty()) ctx.aggregate = &a;
        break;
      }
      default: break;
    }
    for (const RelNode* c : n.children())
      if (c) rel(*c, ctx);
  }

  // A subquery's plan is a query of its own: nothing above it groups or unions its rows.
  void scalar(const ScalarExpr& e) {
    switch (e.kind) {
      case ScalarKind::kExists: case ScalarKind::kSubquery: case ScalarKind::kInSubquery: {
        const auto& s = static_cast<const SubqueryScalar&>(e);
        if (s.plan) rel(*s.plan, Context{});
        break;
      }
      default: break;
    }
    for (const ScalarPtr* c : e.operands())
      if (*c) scalar(**c);
  }

  // The equalities among the AND-ed conjuncts of `pred`, whose row columns are `input`'s.
  void equalities(const ScalarPtr& pred, const RelNode& input) {
    std::vector<ScalarPtr> conjuncts;
    split_conjuncts(pred, conjuncts);
    for (const ScalarPtr& c : conjuncts) {
      if (c->kind != ScalarKind::kBinary) continue;
      const auto& b = static_cast<const BinaryScalar&>(*c);
      if (b.op != ast::BinaryOp::kEq && b.op != ast::BinaryOp::kEqEq) continue;
      ColRef l = column_of(*b.left, input), r = column_of(*b.right, input);
      if (l.first && r.first) {
        equate(l, r);
      } else if (l.first && !reads_row(*b.right)) {
        covered_[l.first].insert(l.second);
      } else if (r.first && !reads_row(*b.left)) {
        covered_[r.first].insert(r.second);
      }
    }
  }
  static ColRef column_of(const ScalarExpr& e, const RelNode& input) {
    if (e.kind != ScalarKind::kColumn) return {nullptr, -1};
    const auto& c = static_cast<const ColumnScalar&>(e);
    if (c.level != 0) return {nullptr, -1};
    return trace_column(input, c.slot);
  }
  // `a = b` across two references binds each by the other (a join on a key); within one
  // reference it binds neither.
  void equate(ColRef a, ColRef b) {
    if (!a.first || !b.first || a.first == b.first) return;
    covered_[a.first].insert(a.second);
    covered_[b.first].insert(b.second);
    equal_.push_back({a, b});
  }

  static std::vector<std::vector<int>> unique_keys(const TableSchema& ts) {
    std::vector<std::vector<int>> keys;
    if (!ts.primary_key.empty()) {
      std::vector<int> k;
      for (const KeyColumn& c : ts.primary_key) k.push_back(c.column);
      keys.push_back(std::move(k));
    }
    for (const IndexSchema& ix : ts.indexes) {
      if (!ix.unique || ix.where) continue;
      std::vector<int> k;
      for (const IndexColumn& c : ix.columns) k.push_back(c.column);
      keys.push_back(std::move(k));
    }
    return keys;
  }
  static bool covers(const std::vector<std::vector<int>>& keys, const std::set<int>& cols) {
    return std::any_of(keys.begin(), keys.end(), [&](const std::vector<int>& k) {
      return !k.empty() && std::all_of(k.begin(), k.end(), [&](int c) { return cols.count(c) > 0; });
    });
  }
  // The columns of `scan` the group columns `g` reach, through the equalities joins make.
  std::set<int> reach(const std::vector<ColRef>& g, const TableScanNode* scan) const {
    std::set<ColRef> closure(g.begin(), g.end());
    for (bool grew = true; grew;) {
      grew = false;
      for (const auto& [a, b] : equal_) {
        if (closure.count(a) && closure.insert(b).second) grew = true;
        if (closure.count(b) && closure.insert(a).second) grew = true;
      }
    }
    std::set<int> out;
    for (const ColRef& c : closure)
      if (c.first == scan) out.insert(c.second);
    return out;
  }

  AssertionTableClass classify(const Seen& s) {
    const TableSchema& ts = s.scan->table->schema;
    AssertionTableClass c;
    c.base = ts.schema_name + "." + to_lower(ts.name);
    c.relation_key = c.base + "#" + std::to_string(next_++);
    c.classification = "global";
    if (s.ctx.under_setop) return c;
    const auto keys = unique_keys(ts);
    auto cov = covered_.find(s.scan);
    if (cov != covered_.end() && covers(keys, cov->second)) {
      c.classification = "row";
      size_t n = keys.empty() ? 0 : keys.front().size();  // the primary key is bound (FD closure)
      for (size_t i = 0; i < n; ++i) c.params.push_back("pk" + std::to_string(i));
      return c;
    }
    if (!s.ctx.aggregate) return c;
    const AggregateNode& a = *s.ctx.aggregate;
    std::vector<ColRef> g;
    for (const ScalarPtr& e : a.group_by) {
      ColRef r = a.input ? column_of(*e, *a.input) : ColRef{nullptr, -1};
      if (r.first && std::find(g.begin(), g.end(), r) == g.end()) g.push_back(r);
    }
    if (!covers(keys, reach(g, s.scan))) return c;
    // Greedy minimization: drop each group column the cover does not need.
    for (size_t i = 0; i < g.size();) {
      std::vector<ColRef> without = g;
      without.erase(without.begin() + static_cast<std::ptrdiff_t>(i));
      if (covers(keys, reach(without, s.scan))) g = std::move(without);
      else ++i;
    }
    c.classification = "group";
    for (const ColRef& r : g) {
      int col = r.second;
      if (r.first != s.scan) {  // named by the column of this reference it is equated with
        std::set<int> own = reach({r}, s.scan);
        if (own.empty()) continue;
        col = *own.begin();
      }
      c.params.push_back(ts.columns[col].name);
    }
    return c;
  }

  std::vector<Seen> seen_;
  std::map<const TableScanNode*, std::set<int>> covered_;
  std::vector<std::pair<ColRef, ColRef>> equal_;
  int next_ = 0;
};

}  // namespace

std::vector<AssertionTableClass> classify_assertion_plan(const RelNode& plan) {
  Classifier c;
  c.run(plan);
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
