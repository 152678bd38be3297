// The pragmas: one table of the settings `pragma name [= value]` reads and writes. The
// embedding API's Database::set_option goes through the same table, so a setting has one
// spelling, one validation and one read-back (docs/pragmas.md).
#pragma once

#include <string_view>
#include <vector>

#include "common/status.h"
#include "types/value.h"

namespace quereus {

class DatabaseImpl;

struct Pragma {
  const char* name;
  const char* alias;  // other accepted names, comma-separated, or nullptr
  // The value a `pragma name` read returns.
  Value (*get)(DatabaseImpl& db);
  // Validates and applies a new value; an error Status leaves the setting as it was.
  Status (*set)(DatabaseImpl& db, const Value& value);
};

// Every pragma, in documentation order. The limits (common/limits.h) are pragmas too,
// one per limit name, handled by read_pragma / write_pragma.
const std::vector<Pragma>& pragmas();

// The pragma named `name` (either spelling, any case), or null.
const Pragma* find_pragma(std::string_view name);

// A pragma's current value; throws "Unknown pragma" for a name that is none.
Value read_pragma(DatabaseImpl& db, std::string_view name);
// Sets a pragma; "Unknown pragma" for a name that is none.
Status write_pragma(DatabaseImpl& db, std::string_view name, const Value& value);

}  // namespace quereus
