// .dump: an SQL script that recreates the database — schema (tables, indexes, views,
// materialized views, assertions, declarations; tags and constraints included, from the
// engine's schema_ddl()) and data (one INSERT per row, literals that read back as the
// same value and type) — which `quereus` runs to restore it.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "common/status.h"
#include "main/database.h"

namespace quereus {

// Writes the dump of `tables` (every table when empty; then only their CREATE TABLE,
// their indexes and their rows) to `out`.
Status write_dump(Database& db, const std::vector<std::string>& tables, std::ostream& out);

// `v` as an SQL literal that evaluates to the same value: NULL, integers, reals with a
// fraction or exponent (so 1.0 stays REAL), 'text' ('' doubled), x'…' blobs, true/false.
std::string dump_literal(const Value& v);

// `name` in double quotes ("" doubled).
std::string quote_name(const std::string& name);

}  // namespace quereus
