// Optimizer: the subquery_cache pass (see subquery_cache.h).
//
// The walk carries whether the node it stands on is re-run within one execution. A node
// that is, whose subtree reads no row of the frames it is opened under (plan_reads:
// no correlated reference at any depth), calls only deterministic functions, reads no
// recursive CTE's working table, holds no node the frame walk does not know (a DML
// relation) and does work worth keeping, goes under a CacheNode; inside it nothing is
// re-run any more (its own correlated subqueries aside, which run per row of it).
//
// A correlated subquery whose result depends on nothing but the outer columns it reads
// (correlation_inputs) is marked to keep its last result with those columns' values
// (SubqueryScalar::memo): a subquery correlated only to a query two levels up, evaluated
// per row of the query between, runs once per row of the one it reads.
#include "optimizer/subquery_cache.h"

#include <functional>

#include "optimizer/decorrelate.h"
#include "planner/scalar_expr.h"

namespace quereus {

namespace {

// The inputs of `n` the walk may replace, each with whether it is re-run per row of `n`
// (or per iteration) rather than once per open of `n`; `repeated` is whether `n` itself is.
std::vector<std::pair<RelPtr*, bool>> inputs(RelNode& n, bool repeated) {
  switch (n.kind) {
    case RelKind::kFilter: return {{&static_cast<FilterNode&>(n).input, repeated}};
    case RelKind::kProject: return {{&static_cast<ProjectNode&>(n).input, repeated}};
    case RelKind::kAggregate: return {{&static_cast<AggregateNode&>(n).input, repeated}};
    case RelKind::kSort: return {{&static_cast<SortNode&>(n).input, repeated}};
    case RelKind::kLimit: return {{&static_cast<LimitNode&>(n).input, repeated}};
    case RelKind::kDistinct: return {{&static_cast<DistinctNode&>(n).input, repeated}};
    case RelKind::kWindow: return {{&static_cast<WindowNode&>(n).input, repeated}};
    case RelKind::kCache: return {{&static_cast<CacheNode&>(n).input, false}};
    case RelKind::kSetOp: {
      auto& s = static_cast<SetOpNode&>(n);
      return {{&s.left, repeated}, {&s.right, repeated}};
    }
    case RelKind::kJoin: {
      // index_nested_loop and LATERAL re-open the right side for each left row.
      auto& j = static_cast<JoinNode&>(n);
      return {{&j.left, repeated}, {&j.right, repeated || j.index_lookup || j.lateral}};
    }
    case RelKind::kSemiJoin: {
      // A constant right side is built once per execution; any other once per open.
      auto& j = static_cast<SemiJoinNode&>(n);
      return {{&j.left, repeated}, {&j.right, repeated && !j.right_constant}};
    }
    case RelKind::kRecursiveCte: {
      auto& r = static_cast<RecursiveCteNode&>(n);
      return {{&r.initial, repeated}, {&r.recursive, true}};
    }
    default: return {};
  }
}

// Whether computing `n` again costs more than replaying its rows: it buffers, sorts,
// groups, joins or calls out somewhere below (a chain of scans, filters, projections and
// limits over one table re-reads the module as cheaply as a replay, and a cache would
// only hold memory).
bool worth_keeping(const RelNode& n) {
  switch (n.kind) {
    case RelKind::kWindow:
    case RelKind::kSort:
    case RelKind::kAggregate:
    case RelKind::kDistinct:
    case RelKind::kSetOp:
    case RelKind::kJoin:
    case RelKind::kSemiJoin:
    case RelKind::kRecursiveCte:
    case RelKind::kTableFunction: return true;
    default: break;
  }
  for (const RelNode* c : n.children())
    if (c && worth_keeping(*c)) return true;
  return false;
}

class Walker {
 public:
  int placed = 0;

  void visit(RelPtr& slot, bool repeated) {
    RelNode& n = *slot;
    if (repeated && n.kind != RelKind::kCache && worth_keeping(n)) {
      PlanReads r = plan_reads(n);
      // (A correlated subquery of the subtree's own counts as work worth keeping.)
      if (!r.outer && !r.unknown && !r.nondeterministic && !r.working_table) {
        auto cache = std::make_shared<CacheNode>();
        cache->columns = n.columns;
        cache->keys = n.keys;
        cache->input = slot;
        slot = cache;
        ++placed;
        visit(cache->input, false);
        return;
      }
    }
    for_each_expression(n, [&](const ScalarPtr& e, int) { visit_scalar(*e); });
    for (auto [input, again] : inputs(n, repeated))
      if (*input) visit(*input, again);
  }

 private:
  // A correlated subquery runs once per row it is evaluated for; an uncorrelated one once
  // per execution (SubqueryScalar caches its rows).
  void visit_scalar(const ScalarExpr& e) {
    if (is_subquery(e.kind)) {
      auto& sq = const_cast<SubqueryScalar&>(static_cast<const SubqueryScalar&>(e));
      if (sq.plan && !sq.op) {  // (an instantiated plan is left alone)
        RelPtr plan = std::const_pointer_cast<RelNode>(sq.plan);
        visit(plan, sq.correlated);
        sq.plan = plan;
        // A correlated one keeps its last rows with the outer values they were computed
        // for: evaluated again for the same values (the row of an enclosing re-run plan
        // that does not change them), it replays them.
        if (sq.correlated)
          if (auto inputs = correlation_inputs(*plan)) {
            sq.memo_inputs = std::move(*inputs);
            sq.memo = true;
          }
      }
    }
    for (const ScalarPtr* o : e.operands())
      if (*o) visit_scalar(**o);
  }
};

}  // namespace

int cache_invariant_subtrees(const RelPtr& root) {
  if (!root || plan_writes(*root)) return 0;
  Walker w;
  RelPtr top = root;
  w.visit(top, false);
  return w.placed;
}

}  // namespace quereus
