// Value conversions shared by CAST, column coercion, the planner's typing and functions.
#pragma once

#include <string_view>

#include "quereus/abi.h"
#include "types/value.h"

namespace quereus {

// The one conversion from a value to text (types.md "Value to text"), which CAST to TEXT,
// `||`, LIKE / GLOB operands and group_concat share: text as itself, a blob UTF-8
// decoded (lossy), a JSON string scalar bare (`hello`, not `"hello"`), any other JSON
// document its own text, a number or boolean its usual spelling. "" for NULL.
std::string value_to_text(const Value& v);
// CAST(v AS target): the value converted to the logical type (NULL where it cannot be).
Value cast_value(const Value& v, qrs_logical_type target);
// The conversion a comparison applies to one operand (docs: types.md "Type Coercion in
// Comparisons": `int_col = '25'` reads as `int_col = integer('25')`): cast_value, except
// that blank text (empty or spaces only) against a numeric type has no number and is NULL,
// as `integer('')` is — so `'' = 0` is not true (SQLite: false; here NULL).
Value comparison_value(const Value& v, qrs_logical_type target);
// Maps a declared type name ("varchar(10)", "INT", …) to a logical type.
qrs_logical_type logical_type_from_name(std::string_view type_name);
// Parses text as a number (integer when exact), or returns NULL when it is not numeric.
Value parse_number(std::string_view text, bool lenient_prefix);

}  // namespace quereus
