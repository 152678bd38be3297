// Parser: the first stage of the pipeline. SQL text → AST (parser/ast.h).
//
//   lexer (parser/lexer.h) → Parser → ast::Statement list → planner/
#pragma once

#include <string_view>
#include <vector>

#include "parser/ast.h"

namespace quereus {

class Parser {
 public:
  // Parses every statement of `sql` (separated by ';'). Throws Error(StatusCode::kSyntax,
  // message, site) on the first error; the message names what was expected and what was
  // found, and the site is relative to `sql` (1-based line and column).
  static std::vector<ast::StatementPtr> parse(std::string_view sql);

  // Parses exactly one expression (for DEFAULT values stored as text, tests, …).
  static ast::ExprPtr parse_expression(std::string_view sql);
};

}  // namespace quereus
