// Building syntax in code: the small constructors a rewrite (view-write lowering, later
// lens fan-out) assembles statements from, instead of writing SQL text and parsing it.
// Every function returns owned nodes; null operands are allowed where noted.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "parser/ast.h"
#include "types/value.h"

namespace quereus::ast {

// `table.column` (`column` alone when `table` is empty).
ExprPtr column_ref(std::string table, std::string column);
ExprPtr null_literal();
ExprPtr integer_literal(int64_t v);
ExprPtr string_literal(std::string v);
// A value as syntax that reads back as it: a negative number as a negation, an exact
// INT64_MIN as a big-integer literal, a real always with a fraction or exponent.
ExprPtr value_literal(const Value& v);
// `name(args…)`.
ExprPtr call(std::string name, std::vector<ExprPtr> args);
ExprPtr binary(BinaryOp op, ExprPtr left, ExprPtr right);
// `a AND b`; either may be null (then the other is returned).
ExprPtr conjoin(ExprPtr a, ExprPtr b);
ExprPtr disjoin(ExprPtr a, ExprPtr b);
ExprPtr logical_not(ExprPtr e);
ExprPtr negate(ExprPtr e);
ExprPtr is_not_null(ExprPtr e);
ExprPtr exists(std::unique_ptr<Select> q);
// `<operand> IN (<q>)`.
ExprPtr in_subquery(ExprPtr operand, std::unique_ptr<Select> q);
ExprPtr scalar_subquery(std::unique_ptr<Select> q);

TableSourcePtr table_source(QualifiedName name, std::string alias);
// A table-valued function call in FROM: `name(args…)`.
TableSourcePtr function_source(std::string name, std::vector<ExprPtr> args);
TableSourcePtr subquery_source(std::unique_ptr<Select> q, std::string alias, std::vector<std::string> columns = {});

ResultColumn result_column(ExprPtr e, std::string alias = "");
ResultColumn star();

// SELECT <columns> FROM <from> [WHERE <where>].
std::unique_ptr<Select> select(std::vector<ResultColumn> columns, TableSourcePtr from, ExprPtr where = nullptr);

}  // namespace quereus::ast
