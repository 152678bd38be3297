// Entry points of functions/extra_functions.cc that other stages may call directly.
#pragma once

#include <span>

#include "types/collation.h"
#include "types/value.h"

namespace quereus {

// greatest() / least(): NULL arguments are skipped (all NULL → NULL); a group that mixes
// numbers and text ranks the text by its numeric reading ('abc' reads as 0) but returns
// the argument itself; text ranks under `collation` (BINARY when null). The registered
// functions pass null — the planner can call this with the collation it resolves across
// the arguments (types.md, "Comparison collation resolution").
Value greatest_least(std::span<const Value> args, bool greatest, const Collation* collation);

}  // namespace quereus
