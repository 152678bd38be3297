// Value comparison with the engine's semantics.
#pragma once

#include <optional>

#include "types/collation.h"
#include "types/value.h"

namespace quereus {

// Storage-class rank: NULL < numeric (integer, real, boolean) < TEXT < BLOB; JSON last.
int type_rank(ValueType t);

// Total order used by ORDER BY, keys, DISTINCT and GROUP BY: NULLs first, numbers by
// value (int64 vs double exact), text under `coll` (BINARY when null), blobs bytewise.
int compare_values(const Value& a, const Value& b, const Collation* coll = nullptr);

// SQL comparison for operators: nullopt when either side is NULL.
inline std::optional<int> sql_compare(const Value& a, const Value& b, const Collation* coll) {
  if (a.is_null() || b.is_null()) return std::nullopt;
  return compare_values(a, b, coll);
}

// Hash consistent with compare_values(..) == 0 under BINARY.
size_t hash_value(const Value& v);

}  // namespace quereus
