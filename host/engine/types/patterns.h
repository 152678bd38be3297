// SQL LIKE (case-insensitive under Unicode simple case mapping, optional ESCAPE character;
// -1 for none) and GLOB (case-sensitive, [...] classes of characters). Both match in time
// proportional to pattern x subject with constant stack, whatever the pattern; `interrupt` (may be null) is polled as they
// backtrack, so a long match still honours Database::interrupt() and statement timeouts.
#pragma once

#include <string_view>

#include "common/interrupt.h"

namespace quereus {

bool like_match(std::string_view pattern, std::string_view text, int escape, InterruptCheck* interrupt = nullptr);
bool glob_match(std::string_view pattern, std::string_view text, InterruptCheck* interrupt = nullptr);

}  // namespace quereus
