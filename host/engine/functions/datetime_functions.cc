// Built-in functions: datetime family (placeholder until filled in).
#include "core/registry.h"
#include "functions/builtins.h"

namespace quereus {
void register_datetime_functions(Registry&) {}
}  // namespace quereus
