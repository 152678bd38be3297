// Entry points of functions/extra_functions.cc that other stages may call directly.
#pragma once

#include <span>

#include "types/collation.h"
#include "types/value.h"

namespace quereus {

// greatest() / least(): NULL arguments are skipped (all NULL → NULL); the arguments rank
// by their comparison `keys` (the planner's conversions, types.md "Type Coercion in
// Comparisons") under `collation` (BINARY when null), and the winning argument itself is
// returned.
Value greatest_least(std::span<const Value> args, std::span<const Value> keys, bool greatest,
                     const Collation* collation);

}  // namespace quereus
