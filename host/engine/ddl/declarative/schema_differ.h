// The declarative schema differ's table stage: the ALTER TABLE statements that migrate an
// existing table to its declaration (APPLY / DIFF SCHEMA, ddl/declarative/declared_schema.cc).
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "parser/ast.h"
#include "catalog/table_schema.h"

namespace quereus {

class DdlContext;

// One ALTER TABLE step: the statement APPLY runs (its table left for the caller to set)
// and the text DIFF shows after `ALTER TABLE <table> ` ("ADD COLUMN y INTEGER", …).
struct MigrationStep {
  std::unique_ptr<ast::AlterTableStmt> stmt;
  std::string text;
};

struct TableMigration {
  // In the order they must run: ADD COLUMN, ALTER COLUMN, DROP CONSTRAINT, ALTER PRIMARY
  // KEY, ADD CONSTRAINT, DROP COLUMN.
  std::vector<MigrationStep> actions;
  // Lower-case names of named constraints dropped and re-added (their tags come with the
  // re-add, so no separate tag-drift statement is due).
  std::set<std::string> readded;
};

// APPLY SCHEMA … OPTIONS (rename_policy = …) (sql-ddl.md "Rename detection"): use the
// "quereus.id" / "quereus.previous_name" hints (allow, the default), additionally refuse a
// name change without one (require-hint), or ignore them (deny: drop + create).
enum class RenamePolicy { kAllow, kRequireHint, kDeny };

// A declared object's rename hints: its "quereus.id" (a string), and the names of its
// comma-separated "quereus.previous_name" list, trimmed.
std::optional<std::string> rename_hint_id(const ast::TagList& tags);
std::vector<std::string> rename_hint_names(const ast::TagList& tags);

// The ALTER actions turning `live` into `decl` (the declared CREATE TABLE). A difference
// no ALTER expresses safely (a module, a generated column, a column rename hint, …)
// is refused UNSUPPORTED, naming the table and what differs; nothing is guessed.
// Tag-only differences are not listed here (the caller migrates them with SET TAGS).
// A declared column carrying a rename hint that names a live column is migrated by
// RENAME COLUMN (unless `policy` is kDeny).
TableMigration diff_table(DdlContext& db, const TableSchema& live, const ast::CreateTableStmt& decl,
                          RenamePolicy policy = RenamePolicy::kAllow);

}  // namespace quereus
