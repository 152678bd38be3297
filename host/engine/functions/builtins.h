// Built-in scalar and aggregate functions.
#pragma once

namespace quereus {
class Registry;
// Registers every built-in function into `registry` (idempotent).
void register_builtin_functions(Registry& registry);
}  // namespace quereus
