// Where a DDL statement comes from, passed explicitly to every executor a stored catalog
// replays (docs/persistence.md): a user's statement creates storage and records the
// object in its module's catalog; a statement of the stored catalog — reopened at open,
// or reloaded after a failed schema change — attaches to the storage the module already
// holds (connect, not create; an index's entries are there already) and records nothing,
// since the catalog is what it was read from.
#pragma once

namespace quereus {

enum class DdlOrigin { kStatement, kStoredCatalog };

}  // namespace quereus
