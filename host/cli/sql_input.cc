// Statement ends for line-by-line input, from the engine's lexer.
#include "cli/sql_input.h"

#include <string>

#include "common/status.h"
#include "parser/lexer.h"

namespace quereus {

InputState input_state(std::string_view text) {
  std::vector<Token> tokens;
  try {
    tokens = Lexer::tokenize(text);
  } catch (const Error& e) {
    // An unterminated string, quoted name, blob or comment continues on the next line.
    return e.raw_message().rfind("Unterminated", 0) == 0 ? InputState::kIncomplete : InputState::kComplete;
  }
  int depth = 0;  // { } of schema and lens declarations
  bool any = false;
  const Token* last = nullptr;
  for (const Token& t : tokens) {
    if (t.is(TokenKind::kEof)) break;
    if (t.is(TokenKind::kLBrace)) ++depth;
    if (t.is(TokenKind::kRBrace) && depth > 0) --depth;
    if (!t.is(TokenKind::kSemicolon)) any = true;
    last = &t;
  }
  if (!any) return InputState::kEmpty;
  if (depth == 0 && (last->is(TokenKind::kSemicolon) || last->is(TokenKind::kRBrace)))
    return InputState::kComplete;
  return InputState::kIncomplete;
}

}  // namespace quereus
