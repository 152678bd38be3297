// DDL of secondary indexes and UNIQUE constraints: CREATE [UNIQUE] INDEX, DROP INDEX,
// and the indexes a CREATE TABLE's UNIQUE constraints declare. The entries live in
// companion tables (write/indexes.h).
#pragma once

#include <memory>
#include <string>

#include "ddl/ddl_context.h"
#include "catalog/ddl_origin.h"
#include "parser/ast.h"

namespace quereus {

struct ExecContext;

// Adds the index enforcing each UNIQUE constraint of `s` to `ts.indexes` (columns
// resolved, names minted `_uc_<cols>` when unnamed). Call once the columns exist.
void add_unique_constraints(DdlContext& db, const ast::CreateTableStmt& s, TableSchema& ts);

// CREATE TABLE: constraint names (CHECK, UNIQUE, FOREIGN KEY) share one namespace per
// table, so two constraints of the same name (case-insensitively, of any kinds) are
// refused with "duplicate constraint name '<name>'": DROP / RENAME CONSTRAINT could
// never tell them apart.
void check_constraint_names(const TableSchema& ts);

// Creates the (empty) companion tables of a new table's indexes.
void create_index_storage(DdlContext& db, TableEntry& table, ExecContext& ctx, DdlOrigin origin);

// CREATE [UNIQUE] INDEX. `tags` is the evaluated WITH TAGS. From the
// stored catalog, the companion is connected (it holds its entries) and nothing recorded.
void create_index(DdlContext& db, const ast::CreateIndexStmt& s, const TagSet& tags, ExecContext& ctx,
                  DdlOrigin origin = DdlOrigin::kStatement);

// Inside a transaction, an index built there (CREATE INDEX, ADD CONSTRAINT UNIQUE, an
// ALTER that rebuilds the table's indexes) outlives a rollback that undoes the entries
// its build wrote for the transaction's rows: registers, per companion of `table` built
// now, a repair that reconciles it after every rollback. When the rollback revived rows
// a unique index does not allow (a duplicate the transaction had deleted), the index is
// dropped with a warning, never left violated. Outside a transaction: nothing to do.
// A unique index is also marked unvalidated in the catalog until the transaction ends
// (committed or not): a crash in between leaves rows the durable build did not check,
// and the next open validates it (validate_unvalidated_index).
void repair_indexes_after_rollback(DdlContext& db, TableEntry& table, size_t first = 0);

// Brings index `i` of `table` in line with the table's rows; a unique index the rows
// violate is dropped (in its own schema change) with a warning naming `why`. Returns
// whether the index was kept.
bool reconcile_or_drop_index(DdlContext& db, TableEntry& table, size_t i, ExecContext& ctx, const std::string& why);

// DROP INDEX [IF EXISTS] name.
void drop_index(DdlContext& db, const ast::DropStmt& s);

// Destroys the companion tables of a table being dropped.
void drop_table_indexes(DdlContext& db, TableEntry& table);

// The table in `schema` owning the index `name` (case-insensitive), and its ordinal in
// schema.indexes; null when no table has one. `user_only` skips UNIQUE constraints'
// indexes (which are not user objects).
std::shared_ptr<TableEntry> find_index(DdlContext& db, const std::string& schema, const std::string& name,
                                       size_t* ordinal, bool user_only = false);

}  // namespace quereus
