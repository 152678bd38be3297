// Hints for habits brought from other SQL shells (SQLite, MySQL, PostgreSQL): when a
// statement fails, what to use in Quereus instead.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace quereus {

// A one-line hint for the failed `sql` (one or more statements) and its error, or "".
std::string hint_for(std::string_view sql, const Status& error);

}  // namespace quereus
