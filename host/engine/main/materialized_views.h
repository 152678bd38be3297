// The statements of materialized views and maintained tables (materialized-views.md):
// CREATE TABLE … MAINTAINED AS, CREATE / REFRESH / DROP MATERIALIZED VIEW. A materialized
// view is one table with a derivation (catalog/derivation.h); maintained/maintenance.h
// keeps it equal to its body. These executors live in main/ because they drive the table
// DDL of ddl/, which still takes the database itself (docs/architecture.md "Layout").
#pragma once

#include "catalog/ddl_origin.h"
#include "parser/ast.h"

#include <memory>

namespace quereus {

class DatabaseImpl;
struct TableEntry;
struct TableWritePlan;
struct ExecContext;

// CREATE TABLE … MAINTAINED [(cols)] AS <body>: the declared shape must be the body's
// (names, types, nullability, primary key); the table is created in its module (which
// must be a backing host) and filled from the body, all or nothing. From the stored
// catalog (origin kStoredCatalog) it connects to the existing storage and refills it.
void create_maintained_table(DatabaseImpl& db, const ast::CreateTableStmt& s, ExecContext& ctx,
                             DdlOrigin origin = DdlOrigin::kStatement, bool sugar = false);

// The last resort of a reopen: a stored maintained table whose body no longer derives
// its shape (a source ALTER froze it before the database closed) or no longer plans is
// connected with its rows and derivation as they are, unmaintained (frozen or stale,
// materialized_view_info() says which) until a REFRESH reshapes it, rather than failing
// the open.
void adopt_maintained_table(DatabaseImpl& db, const ast::CreateTableStmt& s, ExecContext& ctx);

// CREATE MATERIALIZED VIEW: the table form with the shape derived from the body.
void create_materialized_view(DatabaseImpl& db, const ast::CreateMaterializedViewStmt& s, ExecContext& ctx);

// REFRESH MATERIALIZED VIEW: re-evaluates the body and brings the stored rows to it.
// When the body's output moved under the view (a source ALTER), the table is reshaped in
// place first (trailing columns added or dropped, types, collations and nullability
// changed; a moved primary key or column is refused with the table untouched).
void refresh_materialized_view(DatabaseImpl& db, const ast::RefreshMaterializedViewStmt& s, ExecContext& ctx);

// The write plan materialized-view maintenance enforces on maintained table `view` (its
// CHECKs, foreign keys, indexes and the cascades of the keys referencing it); null when
// there is nothing to enforce. Installed into the MaintenanceManager (main/statement_planner.cc).
std::shared_ptr<const TableWritePlan> bind_maintained_writes(DatabaseImpl& db, const std::shared_ptr<TableEntry>& view);
// The write plan of a write the engine makes itself to `table` (its CHECKs, defaults,
// generated columns and the foreign-key cascades its writes can reach), ABORT on conflict.
std::shared_ptr<const TableWritePlan> bind_table_write_plan(DatabaseImpl& db, const std::shared_ptr<TableEntry>& table);

// ALTER TABLE … SET MAINTAINED [(cols)] AS <body>: attaches a derivation to a plain table
// (or replaces a maintained table's): the table's shape must be the body's; its rows are
// reconciled with the body's by keyed diff (derived content wins) in the statement's
// transaction, and a failure restores the prior derivation.
void set_maintained(DatabaseImpl& db, const ast::AlterTableStmt& s, ExecContext& ctx);
// ALTER TABLE … DROP MAINTAINED: the table keeps its rows and becomes an ordinary table.
void drop_maintained(DatabaseImpl& db, const ast::AlterTableStmt& s);

// DROP MATERIALIZED VIEW [IF EXISTS]: drops the maintained table (DROP TABLE does the same).
void drop_materialized_view(DatabaseImpl& db, const ast::DropStmt& s);

}  // namespace quereus
