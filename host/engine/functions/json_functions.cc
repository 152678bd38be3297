// Built-in functions: json family (placeholder until filled in).
#include "core/registry.h"
#include "functions/builtins.h"

namespace quereus {
void register_json_functions(Registry&) {}
}  // namespace quereus
