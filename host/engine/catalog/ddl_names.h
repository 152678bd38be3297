// Where DDL's unqualified names go (docs/schemas.md, "DDL landing"). Unqualified DDL lands
// in the current schema — the reference's embedder-set "current schema", `main` here,
// since no API changes it yet — and an unqualified DROP / ALTER / tag target is looked for
// in the current schema, then `temp`. Reads are different: they follow the schema path
// (DatabaseImpl::resolve_relation). Every DDL site asks here instead of spelling `main`.
#pragma once

#include <string>
#include <vector>

#include "common/strings.h"

namespace quereus {

inline const std::string kCurrentSchema = "main";

// The schema a DDL statement's name lands in: as written (lower-case), else the current
// schema (CREATE TEMP TABLE passes `temporary`: `temp`).
inline std::string ddl_schema(const std::string& written, bool temporary = false) {
  if (!written.empty()) return to_lower(written);
  return temporary ? std::string("temp") : kCurrentSchema;
}

// The schemas an existing object named by DDL is looked for in, in order: the written one
// alone, else the current schema and then `temp`.
inline std::vector<std::string> ddl_lookup_schemas(const std::string& written) {
  if (!written.empty()) return {to_lower(written)};
  return {kCurrentSchema, "temp"};
}

}  // namespace quereus
