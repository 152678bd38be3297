// ALTER TABLE: one function per arm (alter_table.cc). Each arm computes the table's new
// schema and the module's qrs_schema_change, runs the engine-side validations, calls the
// module's alter_table hook, and only when that succeeded swaps the catalog entry and
// rewrites dependents (CHECKs, foreign keys, defaults, views). A refusal anywhere before
// the swap leaves storage and catalog untouched.
#pragma once

#include <string>

namespace quereus {

class DdlContext;
struct TableEntry;
struct ExecContext;
namespace ast { struct AlterTableStmt; struct Select; }

void alter_table(DdlContext& db, const ast::AlterTableStmt& s, ExecContext& ctx);

// Runs every validation `alter_table` would (the arm's plan) and changes nothing: throws
// the error the statement would fail with. For callers that run several arms as one step
// (a maintained table's reshape) and check them all before the first lands.
void check_alter_table(DdlContext& db, const ast::AlterTableStmt& s, ExecContext& ctx);

// The first CHECK, DEFAULT or generated column of another table that reads `target`
// through a subquery, described for a refusal ("it is referenced by …"); empty when none.
std::string expression_dependent_of(DdlContext& db, const TableEntry& target);

// The first CHECK, DEFAULT or generated column that reads the view `schema.name`, or
// reaches the table or view through a chain of views, described for a refusal ("it is
// referenced by …" / "… reaches it through view 'v'"); empty when none. `self` (a table
// being dropped) is skipped: its own expressions go with it.
std::string expression_dependent_via_views(DdlContext& db, bool view, const std::string& schema,
                                           const std::string& name, const TableEntry* self);

// Rewrites a view's or maintained table's body as a rename would (a table RENAME TO when `column_from` is
// empty, else a RENAME COLUMN of `schema.table` from `column_from`), without touching the
// catalog; whether anything changed. The declarative differ compares a live view with its
// declaration across the renames of the same diff.
bool rename_in_view_body(DdlContext& db, const std::string& view_schema, ast::Select& body,
                         const std::string& schema, const std::string& table, const std::string& column_from,
                         const std::string& to);

}  // namespace quereus
