// DDL of tables: CREATE TABLE (the declaration turned into a TableSchema, the module's
// storage created — or, reopening a persistent database, connected —, the companions of
// its indexes, the catalog entry and its persisted text) and DROP TABLE.
#pragma once

#include "catalog/table_schema.h"
#include "catalog/ddl_origin.h"
#include "parser/ast.h"

namespace quereus {

class DdlContext;
struct ExecContext;

// The TableSchema a CREATE TABLE declares in `schema`: columns, PRIMARY KEY, CHECK,
// FOREIGN KEY and UNIQUE constraints (names minted where none was written), tags, module
// and module options, and the WITH CONTEXT variables. Validates what it can without the
// table existing (constraint names, FK collations against a known parent, schema
// expressions); creates nothing.
TableSchema build_table_schema(DdlContext& db, const ast::CreateTableStmt& s, const std::string& schema);

// From the stored catalog the module's table and index companions are connected, not
// created, and nothing is recorded in the catalog.
void create_table(DdlContext& db, const ast::CreateTableStmt& s, ExecContext& ctx,
                  DdlOrigin origin = DdlOrigin::kStatement);
// DROP TABLE [IF EXISTS]: refused while an assertion reads the table, or (with foreign
// keys enforced) while another table's rows reference its rows.
void drop_table(DdlContext& db, const ast::DropStmt& s);

}  // namespace quereus
