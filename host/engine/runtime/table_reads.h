// Reading a table through its module's access plans: equality probes (a secondary
// index's companion, a foreign key's parent), whole scans and primary-key lookups. The
// read half of what the write path and the operators share; index maintenance itself is
// write/indexes.h.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "catalog/catalog.h"
#include "catalog/module.h"
#include "types/value.h"

namespace quereus {

// The module's access plan for EQ filters on `count` columns (`columns`, or the first
// `count` when null).
PlanResult plan_eq(TableEntry& table, size_t count, const std::vector<int>* columns);

// The rows of `table` whose `columns` (or its first columns when null) equal `key`, under
// the columns' collations, read with `plan`; `args` is reused across calls.
std::vector<Row> probe_eq(TableEntry& table, const PlanResult& plan, const std::vector<int>* columns, const Row& key,
                          ScanArgs& args);

// Reads the rows of `table` matching EQ filters on `columns` (values in `key`), through
// the module's access plan; `plan` caches the module's answer across calls.
std::vector<Row> probe_rows(TableEntry& table, const std::vector<int>& columns, const Row& key,
                            std::optional<PlanResult>& plan);

// Every row of `table` as this connection sees it (its open transaction included), or
// its last committed rows when `committed` (modules declaring committed_reads).
std::vector<Row> scan_rows(TableEntry& table, bool committed = false);

// How many rows `table` holds as this connection sees it, counted up to `limit` + 1 (a
// caller asking "more than limit?" stops reading there).
int64_t count_rows(TableEntry& table, int64_t limit = INT64_MAX - 1);

// The stored row of `table` with primary key `pk`, or nullopt.
std::optional<Row> fetch_by_key(TableEntry& table, const Row& pk);

}  // namespace quereus
