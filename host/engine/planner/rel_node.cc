// Walks over what a plan node evaluates itself: shared by the optimizer passes that read
// expressions (decorrelate, subquery_cache), the listings (query_plan()) and the checks
// made on a planned body (materialized views, assertions, debug traces).
#include "planner/rel_node.h"

namespace quereus {

void for_each_expression(const RelNode& n, const std::function<void(const ScalarPtr&, int)>& fn) {
  auto add = [&](const ScalarPtr& e, int deeper = 0) {
    if (e) fn(e, deeper);
  };
  switch (n.kind) {
    case RelKind::kTableScan:
      for (const auto& f : static_cast<const TableScanNode&>(n).filters) {
        add(f.value);
        for (const auto& v : f.in_list) add(v);
        add(f.in_subquery);
      }
      break;
    case RelKind::kValues:
      for (const auto& row : static_cast<const ValuesNode&>(n).rows)
        for (const auto& v : row) add(v);
      break;
    case RelKind::kFilter: add(static_cast<const FilterNode&>(n).predicate); break;
    case RelKind::kProject:
      for (const auto& e : static_cast<const ProjectNode&>(n).exprs) add(e);
      break;
    case RelKind::kJoin: add(static_cast<const JoinNode&>(n).on); break;
    case RelKind::kSemiJoin: {
      // Its condition and keys run against the right row, one frame below the probes.
      const auto& j = static_cast<const SemiJoinNode&>(n);
      for (const auto& p : j.probes) add(p);
      add(j.on, 1);
      for (const auto& k : j.equi) {
        add(k.left, 1);
        add(k.right, 1);
      }
      break;
    }
    case RelKind::kAggregate: {
      const auto& a = static_cast<const AggregateNode&>(n);
      for (const auto& g : a.group_by) add(g);
      for (const auto& call : a.aggs)
        for (const auto& arg : call.args) add(arg);
      break;
    }
    case RelKind::kSort:
      for (const auto& k : static_cast<const SortNode&>(n).sort_keys) add(k.expr);
      break;
    case RelKind::kLimit:
      add(static_cast<const LimitNode&>(n).limit);
      add(static_cast<const LimitNode&>(n).offset);
      break;
    case RelKind::kWindow:
      for (const auto& c : static_cast<const WindowNode&>(n).calls) {
        for (const auto& a : c.args) add(a);
        for (const auto& p : c.partition_by) add(p);
        for (const auto& o : c.order_by) add(o.expr);
        add(c.start_offset);
        add(c.end_offset);
      }
      break;
    case RelKind::kTableFunction:
      for (const auto& a : static_cast<const TableFunctionNode&>(n).args) add(a);
      break;
    default: break;
  }
}

std::vector<const ScalarExpr*> node_expressions(const RelNode& n) {
  std::vector<const ScalarExpr*> out;
  for_each_expression(n, [&](const ScalarPtr& e, int) { out.push_back(e.get()); });
  return out;
}

namespace {

bool expression_writes(const ScalarExpr& e) {
  if (e.kind == ScalarKind::kSubquery || e.kind == ScalarKind::kExists || e.kind == ScalarKind::kInSubquery) {
    const auto& sq = static_cast<const SubqueryScalar&>(e);
    if (sq.plan && plan_writes(*sq.plan)) return true;
  }
  for (const ScalarPtr* o : e.operands())
    if (*o && expression_writes(**o)) return true;
  return false;
}

}  // namespace

bool plan_writes(const RelNode& n) {
  if (n.kind == RelKind::kDml) return true;
  for (const ScalarExpr* e : node_expressions(n))
    if (expression_writes(*e)) return true;
  for (const RelNode* c : n.children())
    if (c && plan_writes(*c)) return true;
  return false;
}

}  // namespace quereus
