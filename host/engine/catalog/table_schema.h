// TableSchema: the catalog's description of one table.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "quereus/abi.h"
#include "types/collation.h"
#include "types/value.h"
#include "catalog/tag_set.h"

namespace quereus {

namespace ast { struct Expr; }
struct Derivation;  // catalog/derivation.h

struct ColumnSchema {
  std::string name;        // display casing
  std::string type_name;   // as declared ("" when none)
  qrs_logical_type logical_type = QRS_LT_ANY;
  bool not_null = true;
  bool primary_key = false;
  std::shared_ptr<const Collation> collation;  // never null
  // Declared with a COLLATE clause (not defaulted): ranks above a defaulted collation
  // when a comparison resolves its collation (types.md).
  bool collation_declared = false;
  std::shared_ptr<const ast::Expr> default_expr;  // may be null
  // NOT NULL … ON CONFLICT: the action a statement without its own OR clause takes.
  std::optional<qrs_conflict> not_null_conflict;
  // GENERATED ALWAYS AS (expr) [STORED | VIRTUAL]: computed on every write from the row
  // being written (both kinds are stored; VIRTUAL is the default). Null when not generated.
  std::shared_ptr<const ast::Expr> generated_expr;
  bool generated_stored = false;
  TagSet tags;  // WITH TAGS (also below)

  bool generated() const { return generated_expr != nullptr; }
};

// A WITH CONTEXT (name type [NULL]) mutation-context variable: a per-statement value
// that DEFAULT and CHECK expressions read (as `name` or `context.name`).
struct ContextVariable {
  std::string name;
  std::string type_name;
  qrs_logical_type logical_type = QRS_LT_ANY;
  bool not_null = true;
};

struct KeyColumn {
  int column = 0;
  bool desc = false;
};

// A foreign key's referential action (docs/foreign-keys.md).
enum class ReferentialAction { kRestrict, kCascade, kSetNull, kSetDefault, kNoAction };

// The catalog's spelling of an action (introspection, schema signatures): restrict,
// cascade, setNull, setDefault, noAction.
inline const char* referential_action_name(ReferentialAction a) {
  switch (a) {
    case ReferentialAction::kCascade: return "cascade";
    case ReferentialAction::kSetNull: return "setNull";
    case ReferentialAction::kSetDefault: return "setDefault";
    case ReferentialAction::kNoAction: return "noAction";
    case ReferentialAction::kRestrict: break;
  }
  return "restrict";
}

// True for the actions that write the referencing rows (CASCADE, SET NULL, SET DEFAULT).
inline bool writes_referencing_rows(ReferentialAction a) {
  return a == ReferentialAction::kCascade || a == ReferentialAction::kSetNull || a == ReferentialAction::kSetDefault;
}

// A FOREIGN KEY declaration (recorded for introspection; the parent is resolved when
// it is used, so it may be declared later or not at all).
struct ForeignKeySchema {
  std::string name;                   // CONSTRAINT name, or the minted `_fk_<table>_<cols>`
  std::vector<int> columns;           // child column indexes
  std::string referenced_schema;      // lower-case
  std::string referenced_table;       // as written
  std::vector<std::string> referenced_columns;  // as written; empty: the parent's primary key
  ReferentialAction on_update = ReferentialAction::kRestrict;
  ReferentialAction on_delete = ReferentialAction::kRestrict;
  bool deferred = false;              // INITIALLY DEFERRED
  TagSet tags;
};

// A row-local CHECK constraint: a written row passes when `expr` is true or NULL. Bare
// names read the checked row (NEW for insert / update, OLD for delete); `new.c` / `old.c`
// read a row image, NULL where the operation has none.
struct CheckSchema {
  std::string name;  // CONSTRAINT name, or the minted `_check_<column>` / `_check_<n>`
  // False for an unnamed CREATE TABLE CHECK: `name` is the engine's own then, listed as
  // NULL and not addressable by ALTER CONSTRAINT (ALTER TABLE ADD mints a real name).
  bool named = true;
  std::shared_ptr<const ast::Expr> expr;
  bool on_insert = true;  // CHECK ON …; the default is insert and update
  bool on_update = true;
  bool on_delete = false;
  std::optional<qrs_conflict> on_conflict;  // CHECK … ON CONFLICT, when declared
  TagSet tags;
};

// A secondary index: a CREATE [UNIQUE] INDEX, or the structure that enforces a UNIQUE
// constraint. The engine keeps its entries in a companion table of the same module (see
// docs/design-writes.md §2), keyed by (index columns ‖ primary key).
struct IndexColumn {
  int column = 0;
  bool desc = false;
  std::shared_ptr<const Collation> collation;  // the column's, unless the index says COLLATE
};

struct IndexSchema {
  std::string name;  // display casing; an unnamed UNIQUE constraint gets `_uc_<cols>`
  std::vector<IndexColumn> columns;
  bool unique = false;
  // Partial index: only rows for which this is true have an entry (and are unique).
  std::shared_ptr<const ast::Expr> where;
  // Backs a UNIQUE constraint rather than a CREATE INDEX: not addressable by DROP INDEX,
  // hidden from schema() / index_info(), listed by unique_constraint_info().
  bool constraint = false;
  bool constraint_named = false;  // CONSTRAINT <name> was written
  std::optional<qrs_conflict> on_conflict;  // UNIQUE … ON CONFLICT, when declared
  // A CREATE INDEX's tags; for a UNIQUE constraint, the constraint's tags.
  TagSet tags;
  // A UNIQUE constraint whose tags set "quereus.expose_implicit_index" = true shows
  // this structure as an index (schema(), index_info(), ALTER INDEX … TAGS); these are
  // that index's own tags, kept apart from the constraint's (docs/tags.md).
  TagSet exposed_index_tags;
};

struct TableSchema {
  std::string schema_name;  // lower-case
  std::string name;         // display casing
  std::string module_name;  // as registered
  std::vector<ColumnSchema> columns;
  std::vector<KeyColumn> primary_key;  // all columns when none declared
  bool primary_key_declared = false;
  // PRIMARY KEY … ON CONFLICT: the action a statement without its own OR clause takes.
  std::optional<qrs_conflict> pk_conflict;
  TagSet primary_key_tags;  // PRIMARY KEY … WITH TAGS
  std::vector<std::pair<std::string, Value>> module_options;
  std::vector<ForeignKeySchema> foreign_keys;
  std::vector<CheckSchema> checks;  // column-level first, in declaration order
  std::vector<IndexSchema> indexes;  // UNIQUE constraints first, then CREATE INDEX order
  std::vector<ContextVariable> context;  // WITH CONTEXT (…)
  // The generated columns in dependency order (a column after every generated column its
  // expression reads), fixed at CREATE TABLE.
  std::vector<int> generated_order;
  TagSet tags;  // the table's WITH TAGS
  // A maintained table's derivation (a materialized view); null for an ordinary table.
  std::shared_ptr<const Derivation> derivation;

  // Returns the column index of `name` (case-insensitive) or -1.
  int find_column(std::string_view name) const;
};

// The position in `ix` of table column `column` under the column's own collation — the
// index column a filter or an ordering on the column can use — or -1 when none (an index
// may hold a column twice, under different collations).
inline int index_position(const TableSchema& t, const IndexSchema& ix, int column) {
  for (size_t k = 0; k < ix.columns.size(); ++k)
    if (ix.columns[k].column == column && ix.columns[k].collation == t.columns[static_cast<size_t>(column)].collation)
      return static_cast<int>(k);
  return -1;
}

}  // namespace quereus
