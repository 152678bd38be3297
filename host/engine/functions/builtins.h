// Built-in scalar and aggregate functions.
#pragma once

namespace quereus {
class Registry;
// Registers every built-in function into `registry` (idempotent).
void register_builtin_functions(Registry& registry);

// The families, each in its own file (called by register_builtin_functions).
void register_json_functions(Registry& registry);      // functions/json_functions.cc
void register_datetime_functions(Registry& registry);  // functions/datetime_functions.cc
void register_extra_functions(Registry& registry);     // functions/extra_functions.cc: math, string, conversion
}  // namespace quereus
