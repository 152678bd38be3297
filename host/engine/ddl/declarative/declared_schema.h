// DECLARE SCHEMA / APPLY SCHEMA (sql-ddl.md §2.0): a stored end-state declaration and its
// application. This is the minimal form: APPLY creates the schema and the declared
// objects that do not exist yet, leaves objects already matching their declaration alone,
// drops the schema's tables and views the declaration no longer names, and refuses —
// before changing anything — what would need the full differ (altering existing objects).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "runtime/executable.h"
#include "catalog/ddl_origin.h"
#include "catalog/lens.h"

namespace quereus {

class DdlContext;

namespace ast {
struct DeclareSchemaStmt;
struct DeclareLensStmt;
struct ApplySchemaStmt;
struct DiffSchemaStmt;
struct ExplainSchemaStmt;
}  // namespace ast

struct DeclaredSchemas {
  // By lower-case schema name; each owned by the catalog (a deep copy of the statement).
  std::map<std::string, std::shared_ptr<const ast::DeclareSchemaStmt>> declared;
  // "schema.name" (lower-case) → the canonical text of the declaration that created the
  // object, so a re-apply of the same declaration is recognised as a no-op.
  std::map<std::string, std::string> applied;
  // DECLARE LENS blocks by lower-case logical schema name (main/lenses.h).
  std::map<std::string, std::shared_ptr<const ast::DeclareLensStmt>> lenses;
  // The deployed lens of each applied logical schema.
  std::map<std::string, std::shared_ptr<const LensDeployment>> deployments;
  // Set by open-time reconciliation around its first APPLY of each schema: the apply
  // creates the missing tables and runs the differ's structural ALTERs, but not the ones
  // that materialize constraints (ADD CONSTRAINT, ALTER PRIMARY KEY, SET NOT NULL), nor
  // indexes, views, drops or seeds — the prepare_constraints repairs run between the two
  // (docs/reconciliation.md).
  bool structure_phase_only = false;
};

std::unique_ptr<Executable> plan_declare_schema(DdlContext& db, const ast::DeclareSchemaStmt& stmt);
// DECLARE SCHEMA itself: records the declaration (in the module's catalog too, unless it
// comes from there).
void declare_schema(DdlContext& db, const ast::DeclareSchemaStmt& s, DdlOrigin origin = DdlOrigin::kStatement);
std::unique_ptr<Executable> plan_apply_schema(DdlContext& db, const ast::ApplySchemaStmt& stmt);
// DIFF SCHEMA: the DDL APPLY SCHEMA would run, one `ddl` row per statement.
std::unique_ptr<Executable> plan_diff_schema(DdlContext& db, const ast::DiffSchemaStmt& stmt);

// EXPLAIN SCHEMA name: one row `info` = "hash:<12 hex digits>", the SHA-256 of the
// declaration's canonical text (item order and tags do not move it).
std::unique_ptr<Executable> plan_explain_schema(DdlContext& db, const ast::ExplainSchemaStmt& stmt);

}  // namespace quereus
