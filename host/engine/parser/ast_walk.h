// A deep walk over an expression tree: every expression node, including those inside
// subqueries (select lists, FROM subqueries and join conditions, WHERE / GROUP BY /
// HAVING, compound legs, CTE bodies, ORDER BY / LIMIT).
#pragma once

#include <functional>
#include <vector>

#include "parser/ast.h"

namespace quereus::ast {

// True when `pred` holds for `e` or any expression below it, subqueries included.
bool any_expr_deep(const Expr& e, const std::function<bool(const Expr&)>& pred);

// True when `e` holds a subquery (IN (select …), EXISTS, a scalar subquery) at any depth.
bool contains_subquery(const Expr& e);

// True when `e` holds a bind parameter (`?`, `:name`, …) anywhere, subqueries included.
bool contains_parameter(const Expr& e);

// True when `pred` holds for an expression anywhere in `s` (select lists, joins, WHERE,
// HAVING, …, derived tables, CTE bodies and the subqueries inside expressions included).
bool any_expr_in_select(const Select& s, const std::function<bool(const Expr&)>& pred);

// True when an expression anywhere in `s` (its select lists, joins, WHERE, HAVING, …,
// derived tables and CTE bodies included) holds a subquery.
bool select_contains_subquery(const Select& s);

// Every table-like source `s` names, at any depth: FROM and joins, derived tables, CTE
// bodies, and the subqueries inside its expressions. CTE references are included (the
// caller resolves the names).
void named_sources(const Select& s, std::vector<const QualifiedName*>& out);
void named_sources(const SelectCore& c, std::vector<const QualifiedName*>& out);

}  // namespace quereus::ast
