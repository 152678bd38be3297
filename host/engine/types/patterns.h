// SQL LIKE (case-sensitive, optional ESCAPE character as a code point; -1 for none) and
// GLOB (case-sensitive, [...] classes of characters). Both match in time
// proportional to pattern x subject with constant stack, whatever the pattern; `interrupt` (may be null) is polled as they
// backtrack, so a long match still honours Database::interrupt() and statement timeouts.
#pragma once

#include <string_view>

#include "common/interrupt.h"

namespace quereus {

// The code point of an ESCAPE operand that is exactly one character (UTF-8; a byte that is
// not UTF-8 counts as one character), or -1 — the caller refuses that as SQLite does
// ("ESCAPE expression must be a single character").
int like_escape_code_point(std::string_view escape);

bool like_match(std::string_view pattern, std::string_view text, int escape, InterruptCheck* interrupt = nullptr);
bool glob_match(std::string_view pattern, std::string_view text, InterruptCheck* interrupt = nullptr);

}  // namespace quereus
