// Integrity check of a database's tables: `pragma integrity_check` and `quereus check`.
#pragma once

#include <string>
#include <vector>

namespace quereus {

class DatabaseImpl;

// Verifies every table of the database, as this connection sees it:
//   - every row reads and decodes (a full scan of each table and index companion);
//   - every index holds exactly one entry per member row of its table, and nothing else;
//   - no UNIQUE index holds two entries with one key;
//   - a persistent module's row-count statistic equals the rows a scan finds.
// Returns one line per problem found ("table main.t: …"); empty when all is well. Never
// throws for damage it finds: a table that does not read is reported and the check goes on.
std::vector<std::string> check_integrity(DatabaseImpl& db);

}  // namespace quereus
