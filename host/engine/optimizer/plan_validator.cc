// optimizer/plan_validator.cc — see plan_validator.h.
#include "optimizer/plan_validator.h"

#include <string>
#include <vector>

#include "planner/scalar_expr.h"
#include "common/status.h"

namespace quereus {
namespace {

[[noreturn]] void violation(const RelNode& n, const std::string& what) {
  throw Error(StatusCode::kInternal, "plan validation: " + what + " (at " + n.describe() + ")");
}

void validate_node(const RelNode& n, int depth);

// `e` is evaluated over a row laid out as `row` (null: not checked at this level).
void validate_expr(const RelNode& owner, const ScalarExpr& e, const std::vector<Attribute>* row, int depth) {
  if (e.kind == ScalarKind::kColumn && row) {
    const auto& c = static_cast<const ColumnScalar&>(e);
    if (c.level == 0) {
      if (c.slot < 0 || static_cast<size_t>(c.slot) >= row->size())
        violation(owner, "a column reads slot " + std::to_string(c.slot) + " of a row of " + std::to_string(row->size()));
    }
  }
  if (e.kind == ScalarKind::kSubquery || e.kind == ScalarKind::kExists || e.kind == ScalarKind::kInSubquery) {
    const auto& sq = static_cast<const SubqueryScalar&>(e);
    if (sq.plan) validate_node(*sq.plan, depth + 1);
  }
  for (const ScalarPtr* o : e.operands())
    if (*o) validate_expr(owner, **o, row, depth);
}

void check(const RelNode& owner, const ScalarPtr& e, const std::vector<Attribute>* row, int depth) {
  if (e) validate_expr(owner, *e, row, depth);
}

void validate_node(const RelNode& n, int depth) {
  if (depth > 10000) violation(n, "the plan nests more than 10,000 levels");
  for (const RelNode* c : n.children())
    if (!c) violation(n, "a child is missing");
  for (const auto& key : n.keys)
    for (int p : key)
      if (p < 0 || static_cast<size_t>(p) >= n.columns.size())
        violation(n, "a unique key names output " + std::to_string(p) + " of " + std::to_string(n.columns.size()));
  switch (n.kind) {
    case RelKind::kFilter: {
      const auto& f = static_cast<const FilterNode&>(n);
      check(n, f.predicate, &f.input->columns, depth);
      break;
    }
    case RelKind::kProject: {
      const auto& p = static_cast<const ProjectNode&>(n);
      if (p.exprs.size() != p.columns.size())
        violation(n, std::to_string(p.exprs.size()) + " expressions for " + std::to_string(p.columns.size()) + " outputs");
      for (const ScalarPtr& e : p.exprs) check(n, e, &p.input->columns, depth);
      break;
    }
    case RelKind::kJoin: {
      const auto& j = static_cast<const JoinNode&>(n);
      std::vector<Attribute> both = j.left->columns;
      both.insert(both.end(), j.right->columns.begin(), j.right->columns.end());
      if (n.columns.size() < both.size())
        violation(n, "the join has " + std::to_string(n.columns.size()) + " outputs for " +
                         std::to_string(both.size()) + " input columns");
      check(n, j.on, &both, depth);
      for (const auto& [l, r] : j.equi_keys)
        if (l < 0 || static_cast<size_t>(l) >= j.left->columns.size() || r < 0 ||
            static_cast<size_t>(r) >= j.right->columns.size())
          violation(n, "a hash key names a slot its side does not have");
      break;
    }
    case RelKind::kSort: {
      const auto& s = static_cast<const SortNode&>(n);
      for (const SortKey& k : s.sort_keys) check(n, k.expr, &s.input->columns, depth);
      break;
    }
    case RelKind::kAggregate: {
      const auto& a = static_cast<const AggregateNode&>(n);
      if (a.columns.size() < a.group_by.size() + a.aggs.size())
        violation(n, "the aggregate has fewer outputs than groups and calls");
      for (const ScalarPtr& g : a.group_by) check(n, g, &a.input->columns, depth);
      for (const AggregateCall& c : a.aggs)
        for (const ScalarPtr& arg : c.args) check(n, arg, &a.input->columns, depth);
      break;
    }
    default:
      break;
  }
  for (const RelNode* c : n.children()) validate_node(*c, depth + 1);
}

}  // namespace

void validate_plan(const RelNode& root) { validate_node(root, 0); }

}  // namespace quereus
