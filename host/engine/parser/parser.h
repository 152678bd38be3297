// Parser: the first stage of the pipeline. SQL text → AST (parser/ast.h).
//
//   lexer (parser/lexer.h) → Parser → ast::Statement list → planner/
#pragma once

#include <string_view>
#include <vector>

#include "common/limits.h"
#include "parser/ast.h"

namespace quereus {

class Parser {
 public:
  // Parses every statement of `sql` (separated by ';'). Throws Error(StatusCode::kSyntax,
  // message, site) on the first error; the message names what was expected and what was
  // found, and the site is relative to `sql` (1-based line and column).
  // `limits` bounds what the parser accepts: max_expr_depth, max_compound_select and
  // max_join_tables (common/limits.h); beyond them it fails with SYNTAX at the token
  // that went over.
  static std::vector<ast::StatementPtr> parse(std::string_view sql, const Limits& limits = Limits{});

  // Parses exactly one expression (for DEFAULT values stored as text, tests, …).
  static ast::ExprPtr parse_expression(std::string_view sql, const Limits& limits = Limits{});
};

}  // namespace quereus
