// Declaration-time validation of a FOREIGN KEY's collations (06.4.4 / 41.1 in the
// corpus): a child column and its parent key column that both DECLARE a collation, and
// declare different ones, have no collation under which the parent-existence comparison
// is defined, so the table is rejected at CREATE TABLE — with foreign_keys on or off.
#pragma once

#include "schema/catalog.h"

namespace quereus {

// Throws "conflicting collations" for the first such column pair among `table`'s foreign
// keys whose parent is `table` itself or already in `catalog` (a forward-declared parent
// is checked when the key is enforced).
void check_foreign_key_collations(const Catalog& catalog, const TableSchema& table);

}  // namespace quereus
