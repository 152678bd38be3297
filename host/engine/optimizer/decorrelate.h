// Optimizer: the subquery_decorrelation pass. The EXISTS / NOT EXISTS / IN / NOT IN
// conjuncts of a filter become semi and anti joins (SemiJoinNode), so the subquery runs
// once per execution instead of once per outer row.
//
//   planner/ → Optimizer (this pass, called from Optimizer::rewrite) → runtime/
#pragma once

#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "planner/plan_reads.h"
#include "planner/rel_node.h"

namespace quereus {

struct DecorrelationOptions {
  // Optimizes a subtree the pass builds (the left side, a re-planned subquery scan).
  std::function<RelPtr(RelPtr)> rewrite;
  // hash_join is enabled: key the joins on their BINARY equalities.
  bool hash_keys = true;
};

// Rewrites `filter` (a FilterNode) when one or more of its conjuncts is a subquery shape
// the pass handles, and returns the optimized replacement; returns null (and leaves
// `filter` untouched) otherwise. Subquery plans are read, never modified.
RelPtr decorrelate_subqueries(const RelPtr& filter, const DecorrelationOptions& options);

// plan_reads, correlation_inputs and row_slots_read: planner/plan_reads.h.

}  // namespace quereus
