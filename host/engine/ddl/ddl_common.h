// Pieces every DDL path shares (CREATE TABLE, CREATE INDEX, ALTER TABLE, declared
// schemas): the catalog's own copy of an expression, declared conflict actions, and
// FOREIGN KEY clauses as the catalog records them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "parser/ast.h"
#include "catalog/catalog.h"

namespace quereus {

class DdlContext;

// The column a definition declares, as CREATE TABLE, ALTER TABLE ADD COLUMN and the
// declarative differ all build it: name, type, nullability (the session default, then
// NOT NULL / NULL, with NOT NULL's ON CONFLICT action), DEFAULT, COLLATE (the session's
// default collation for text columns) and GENERATED ALWAYS AS. Constraints that reach
// beyond the column — PRIMARY KEY, UNIQUE, CHECK, REFERENCES — are the caller's, which
// walks cd.constraints for them. Throws on an unknown collation.
ColumnSchema build_column(DdlContext& db, const ast::ColumnDef& cd);

// DATE / TIME / DATETIME / TIMESPAN / JSON compare by their own semantics and take only the
// BINARY collation (schema.md, "Column COLLATE validation"): CREATE TABLE and ALTER alike.
bool takes_binary_only(qrs_logical_type t);

// A catalog-owned deep copy of `e` (ast::clone), so it outlives the statement that
// declared it. Its source sites stay those of the declaring statement's text (the
// persisted DDL text once reloaded): errors found when the CREATE / ALTER binds it point
// into what the user wrote.
std::shared_ptr<const ast::Expr> own_expr(const ast::Expr& e);

// A constraint's declared ON CONFLICT action (ABORT for none), as the schema stores it.
qrs_conflict declared_conflict(ast::ConflictClause c);

// CHECK ON <ops>: the operations the check runs on (empty: the default, insert and update).
void set_check_ops(CheckSchema& ck, const std::vector<ast::RowOp>& ops);

// A parsed FK action as the catalog records it (none written: RESTRICT).
ReferentialAction referential_action(ast::FkAction a);

// A UNIQUE constraint as a message names it: "the UNIQUE constraint 'n'" when it was
// named, else "the UNIQUE constraint on (a, b)".
std::string describe_unique(const TableSchema& ts, const IndexSchema& ix);

// A UNIQUE constraint's structure name rule collides two constraints when both derive
// one name (a written `_uc_…` name, or `_`-joined column names meeting) and at least one
// of them is unnamed (two written names are the duplicate-name rule's business).
bool derives_same_structure(const IndexSchema& existing, const std::string& name, const std::string& derived);

// A FOREIGN KEY clause (column or table level) as the catalog records it, named `name`.
// The parent is not resolved here: it may be declared later.
template <typename Clause>
ForeignKeySchema foreign_key_of(const Clause& c, std::vector<int> columns, const std::string& name,
                                const std::string& child_schema, const std::string& child_table) {
  if (!c.fk_columns.empty() && c.fk_columns.size() != columns.size())
    throw Error(StatusCode::kError, "FK constraint '" + name + "' on table '" + child_table +
                                        "': child column count (" + std::to_string(columns.size()) +
                                        ") does not match parent column count (" +
                                        std::to_string(c.fk_columns.size()) + ")");
  ForeignKeySchema fk;
  fk.name = name;
  fk.columns = std::move(columns);
  fk.referenced_schema = c.fk_table.schema.empty() ? child_schema : to_lower(c.fk_table.schema);
  fk.referenced_table = c.fk_table.name;
  fk.referenced_columns = c.fk_columns;
  fk.on_update = referential_action(c.fk_on_update);
  fk.on_delete = referential_action(c.fk_on_delete);
  fk.deferred = c.fk_deferral.initially == ast::FkDeferral::Initially::kDeferred;
  return fk;
}

}  // namespace quereus
