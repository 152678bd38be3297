// The declarative schema differ's table stage: the ALTER TABLE statements that migrate an
// existing table to its declaration (APPLY / DIFF SCHEMA, ddl/declarative/declared_schema.cc).
#pragma once

#include <memory>
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

// The ALTER actions turning `live` into `decl` (the declared CREATE TABLE). A difference
// no ALTER expresses safely (a module, a generated column, a column rename hint, …)
// is refused UNSUPPORTED, naming the table and what differs; nothing is guessed.
// Tag-only differences are not listed here (the caller migrates them with SET TAGS).
TableMigration diff_table(DdlContext& db, const TableSchema& live, const ast::CreateTableStmt& decl);

}  // namespace quereus
