// printf(FORMAT, ...) / format(FORMAT, ...) (functions/printf.cc): SQLite's SQL printf.
#pragma once

#include "functions/function_util.h"
#include "types/value.h"

namespace quereus {

// The formatted text; NULL when there is no format or it is NULL.
Value printf_fn(fnutil::Args a);

}  // namespace quereus
