// Where a statement typed line by line ends, decided with the engine's own lexer, so a ';'
// inside a string, a quoted name or a comment does not end it.
#pragma once

#include <string_view>

namespace quereus {

enum class InputState {
  kEmpty,       // only blanks, comments and ';'
  kIncomplete,  // more lines needed (no final ';', an open string, comment or { } block)
  kComplete,    // ends with ';' (or a declaration's closing '}'): ready to run
};

// The state of `text`, the lines read since the last statement ran. Text the lexer rejects
// for another reason than an open string, name, blob or comment is kComplete, so that
// running it reports the error.
InputState input_state(std::string_view text);

}  // namespace quereus
