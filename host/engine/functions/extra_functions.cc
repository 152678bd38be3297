// Built-in functions: extra family (placeholder until filled in).
#include "core/registry.h"
#include "functions/builtins.h"

namespace quereus {
void register_extra_functions(Registry&) {}
}  // namespace quereus
