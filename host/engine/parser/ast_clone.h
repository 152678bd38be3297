// Deep copy of AST nodes: the way to copy syntax (never print it and parse it again).
//
// A clone owns fresh copies of every sub-node and shares nothing with its source, so
// either may be mutated or destroyed without affecting the other. Every field is copied,
// including those the printer does not show: source sites, the statement's text range,
// aliases, `AS t(a, b)` column lists, existence columns, WITH SCHEMA / WITH DEFAULTS,
// WITH CONTEXT, tags. A window call's OVER clause (held by shared_ptr) is copied too.
//
// Nodes held by pointer in the AST come back as unique_ptr; nodes held by value come
// back by value. None of these fail on a well-formed tree; a node whose kind is outside
// its enum raises Error(kInternal).
#pragma once

#include <memory>
#include <vector>

#include "parser/ast.h"

namespace quereus::ast {

// ---------------------------------------------------------------- expressions

ExprPtr clone(const Expr& e);
// Null stays null (for the optional members: WHERE, ESCAPE, CASE base, …).
ExprPtr clone_or_null(const ExprPtr& e);
std::vector<ExprPtr> clone(const std::vector<ExprPtr>& exprs);

// ---------------------------------------------------------------- queries

std::unique_ptr<Select> clone(const Select& s);
std::unique_ptr<Select> clone_or_null(const std::unique_ptr<Select>& s);
SelectCore clone(const SelectCore& core);
CompoundLeg clone(const CompoundLeg& leg);
std::unique_ptr<WithClause> clone(const WithClause& with);
std::unique_ptr<WithClause> clone_or_null(const std::unique_ptr<WithClause>& with);
CommonTableExpr clone(const CommonTableExpr& cte);
TableSourcePtr clone(const TableSource& source);
TableSourcePtr clone_or_null(const TableSourcePtr& source);
ResultColumn clone(const ResultColumn& column);
std::vector<ResultColumn> clone(const std::vector<ResultColumn>& columns);
NamedExpr clone(const NamedExpr& named);
std::vector<NamedExpr> clone(const std::vector<NamedExpr>& named);  // also TagList
OrderingTerm clone(const OrderingTerm& term);
std::vector<OrderingTerm> clone(const std::vector<OrderingTerm>& terms);
std::unique_ptr<WindowSpec> clone(const WindowSpec& window);
std::unique_ptr<WindowFrame> clone(const WindowFrame& frame);
FrameBound clone(const FrameBound& bound);

// ---------------------------------------------------------------- statements

// Every StmtKind, DECLARE SCHEMA items and the DML inside Select::dml included.
StatementPtr clone(const Statement& s);
StatementPtr clone_or_null(const StatementPtr& s);

// Parts of statements that rewrites copy on their own.
Assignment clone(const Assignment& assignment);
UpsertClause clone(const UpsertClause& upsert);
ColumnConstraint clone(const ColumnConstraint& constraint);
ColumnDef clone(const ColumnDef& column);
TableConstraint clone(const TableConstraint& constraint);
ModuleArg clone(const ModuleArg& arg);

}  // namespace quereus::ast
