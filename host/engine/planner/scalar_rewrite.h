// Rewriting a scalar expression's column references: the optimizer moves predicates
// between row layouts with it, the planner reads a select-list alias from a subquery with it.
#pragma once

#include <functional>
#include <memory>

#include "planner/scalar_expr.h"

namespace quereus {

// A copy of `e` with each column reference replaced by `column(ref, as_pointer)`: the
// pointer itself keeps it, null refuses the rewrite. Unchanged subtrees are shared. Null
// as well when `e` holds a correlated subquery (its body reads the row by slot) or a node
// class the rewrite cannot copy (planner/scalar_rewrite.cc).
using ColumnRewrite = std::function<ScalarPtr(const ColumnScalar&, const ScalarPtr&)>;
ScalarPtr rewrite_columns(const ScalarPtr& e, const ColumnRewrite& column);
// A copy of a column reference, to be changed before it is shared.
std::shared_ptr<ColumnScalar> copy_column(const ColumnScalar& c);

}  // namespace quereus
