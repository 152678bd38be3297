// A deep walk over an expression tree: every expression node, including those inside
// subqueries (select lists, FROM subqueries and join conditions, WHERE / GROUP BY /
// HAVING, compound legs, CTE bodies, ORDER BY / LIMIT).
#pragma once

#include <functional>

#include "parser/ast.h"

namespace quereus::ast {

// True when `pred` holds for `e` or any expression below it, subqueries included.
bool any_expr_deep(const Expr& e, const std::function<bool(const Expr&)>& pred);

// True when `e` holds a subquery (IN (select …), EXISTS, a scalar subquery) at any depth.
bool contains_subquery(const Expr& e);

}  // namespace quereus::ast
