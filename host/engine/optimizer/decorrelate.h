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

// What a plan reads besides its own rows (the subquery_cache pass, subquery_cache.h).
struct PlanReads {
  bool outer = false;              // a row of the frames it is opened under: correlated
  bool unknown = false;            // a node the walk does not know (a DML relation, …)
  bool nondeterministic = false;   // a non-deterministic or per-row function, or table function
  // Rows that may differ from one run to the next: a call that may (random(), a clock
  // function given 'now'; not `date(d)` over a DATE column), a per-row function or a
  // non-deterministic table function.
  bool volatile_rows = false;
  bool working_table = false;      // a recursive CTE's working table (other rows each iteration)
  bool correlated_subquery = false;  // a subquery re-run for each row it is evaluated on
};
PlanReads plan_reads(const RelNode& n);

// The columns a subquery's plan reads from the rows it is evaluated under, as (frame, slot):
// frame 0 is the row the subquery expression is evaluated on, 1 that row's outer row, and
// so on. Nullopt when equal inputs may still give other rows: a non-deterministic or
// per-row function or table function, a recursive CTE's working table, a node the walk
// does not know (a DML relation).
std::optional<std::vector<std::pair<int, int>>> correlation_inputs(const RelNode& plan);

// The slots of the row `e` is evaluated on that it reads, the correlated references of its
// subqueries (at any depth) included. False, with `slots` unspecified, when that is not
// known (a plan node the walk does not know) or `e` calls a non-deterministic function.
bool row_slots_read(const ScalarPtr& e, std::vector<int>& slots);

}  // namespace quereus
