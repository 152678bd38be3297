// DECLARE SCHEMA / APPLY SCHEMA (sql-ddl.md §2.0): a stored end-state declaration and its
// application. This is the minimal form: APPLY creates the schema and the declared
// objects that do not exist yet, leaves objects already matching their declaration alone,
// and refuses — before changing anything — what would need the declarative differ
// (altering or dropping existing objects).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "core/executable.h"

namespace quereus {

namespace ast {
struct DeclareSchemaStmt;
struct ApplySchemaStmt;
}  // namespace ast

struct DeclaredSchemas {
  // By lower-case schema name; each owned by the catalog (re-parsed from its text).
  std::map<std::string, std::shared_ptr<const ast::DeclareSchemaStmt>> declared;
  // "schema.name" (lower-case) → the canonical text of the declaration that created the
  // object, so a re-apply of the same declaration is recognised as a no-op.
  std::map<std::string, std::string> applied;
};

std::unique_ptr<Executable> plan_declare_schema(DatabaseImpl& db, const ast::DeclareSchemaStmt& stmt);
std::unique_ptr<Executable> plan_apply_schema(DatabaseImpl& db, const ast::ApplySchemaStmt& stmt);

}  // namespace quereus
