// optimizer/plan_validator.h — structural checks of an optimized plan, run before execution
// when `pragma validate_plan` (alias `plan_validation`) is on (usage.md "Available
// Options"; docs/optimizer.md "Plan validation"). A failed check is a bug in the planner or
// an optimizer pass, reported as INTERNAL naming the invariant and the node, instead of a
// wrong answer or a crash later in the runtime.
#pragma once

#include "planner/rel_node.h"

namespace quereus {

// Throws Error(kInternal) at the first violation:
//   every child of a node is present;
//   a unique key names output positions the node has;
//   a projection has one output per expression, a join at least its inputs' columns;
//   a column read at a node's own level (a filter's predicate, a projection's expressions,
//   a join's ON, a sort's keys, an aggregate's groups and arguments) names a slot of the row
//   it is evaluated over (the slot is what the runtime reads; a column's attribute id
//   is not kept in step by every rewrite, so it is not checked);
//   the same, recursively, in every subquery plan the expressions hold.
void validate_plan(const RelNode& root);

}  // namespace quereus
