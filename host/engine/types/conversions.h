// Value conversions shared by CAST, column coercion, the planner's typing and functions.
#pragma once

#include <string_view>

#include "quereus/abi.h"
#include "types/value.h"

namespace quereus {

// CAST(v AS target): the value converted to the logical type (NULL where it cannot be).
Value cast_value(const Value& v, qrs_logical_type target);
// Maps a declared type name ("varchar(10)", "INT", …) to a logical type.
qrs_logical_type logical_type_from_name(std::string_view type_name);
// Parses text as a number (integer when exact), or returns NULL when it is not numeric.
Value parse_number(std::string_view text, bool lenient_prefix);

}  // namespace quereus
