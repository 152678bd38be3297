// Optimizer: the subquery_cache pass, run once over the optimized plan of a whole read-only
// statement (Optimizer::finish_query). Where a plan is re-run within one execution — a
// correlated subquery's, once per row it is evaluated for; the inner side of an
// index_nested_loop or LATERAL join, once per left row; a semi join's right side that reads
// an outer row; a recursive CTE's recursive term, once per iteration — each maximal subtree
// that reads nothing of the rows it is re-run for and holds work worth keeping (a window,
// sort, aggregate, DISTINCT, set operation, join or table function, or a correlated
// subquery of its own) is put under a CacheNode: computed once per execution, replayed
// after. See docs/architecture.md, "Invariant subtrees of re-run plans".
//
//   planner/ → Optimizer (this pass last) → runtime/
#pragma once

#include "planner/rel_node.h"

namespace quereus {

// Wraps the invariant subtrees of the re-run parts of `root` (its subqueries' plans
// included) in CacheNodes, in place; returns the number it placed. `root` must be a
// statement that writes nothing: a subtree reading a table the statement changes as it
// runs must be re-run to see the change.
int cache_invariant_subtrees(const RelPtr& root);

}  // namespace quereus
