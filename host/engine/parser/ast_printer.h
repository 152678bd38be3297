// Canonical printer: AST → SQL text. Print → parse → print is a fixed point.
// expr_to_string produces the result column names of FORMAT.md §6.3.
#pragma once

#include <string>

#include "parser/ast.h"

namespace quereus {

std::string expr_to_string(const ast::Expr& expr);
// The expression as SQL that parses back to the same tree (the statement printer's
// parentheses): the form for any text that is stored or re-executed. expr_to_string is
// for names and messages only.
std::string expr_to_sql(const ast::Expr& expr);
std::string select_to_string(const ast::Select& select);
std::string statement_to_string(const ast::Statement& stmt);
// The same, with the statement's own object (the table of CREATE TABLE / ALTER TABLE,
// the object of DROP, the index of CREATE INDEX) qualified by `schema` when it was
// written unqualified: the text a replicating peer re-executes.
std::string statement_to_string(const ast::Statement& stmt, std::string_view schema);
// Quotes an identifier with "…" when it is a keyword or not [A-Za-z_][A-Za-z0-9_]*.
std::string quote_identifier(std::string_view name);

}  // namespace quereus
