// COPY: rows between a table or query and a data file (docs/sql-dialect.md "Files").
//   COPY t [(cols)] TO 'path' [(FORMAT csv|tsv|jsonl|json, HEADER, DELIMITER 'c', NULL 't')]
//   COPY (select …) TO 'path' […]
//   COPY t [(cols)] FROM 'path' [(FORMAT csv|tsv|jsonl, HEADER, DELIMITER, QUOTE, SKIP, NULL)]
// TO writes through a temporary file renamed over the target at the end, so a failed
// export leaves no partial file; FROM is one INSERT, atomic like any statement. Both need
// the deployment's file_access (DatabaseOptions).
#pragma once

#include <memory>

#include "parser/ast.h"
#include "runtime/executable.h"

namespace quereus {

class DatabaseImpl;
struct PlanSeed;

std::unique_ptr<Executable> plan_copy(DatabaseImpl& db, const ast::CopyStmt& s, const PlanSeed* seed);

}  // namespace quereus
