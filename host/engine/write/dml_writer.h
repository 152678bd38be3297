// DmlWriter: the one write path. Every insert, update and delete — from SQL today,
// from views, lenses and sync ingestion later — goes through it: value coercion to
// the declared types, NOT NULL, the module's update call, conflict outcomes.
#pragma once

#include <memory>
#include <optional>

#include "main/database_impl.h"
#include "catalog/module.h"

namespace quereus {

class ScalarExpr;
struct ExecContext;

// A CHECK constraint bound once per DML plan. `expr` reads the context row (the
// statement's WITH CONTEXT values); one level out the checked row (NEW for insert /
// update, OLD for delete); and two levels out the images row [NEW…, OLD…] for `new.c` /
// `old.c` (NULL where the operation has no image). See ddl/schema_expressions.h.
struct BoundCheck {
  std::string name;
  std::string text;  // the expression as written, quoted in the violation message
  std::shared_ptr<const ScalarExpr> expr;
  bool on_insert = true;
  bool on_update = true;
  bool on_delete = false;
  std::optional<qrs_conflict> on_conflict;  // the declared ON CONFLICT action
  // Contains a subquery: evaluated at COMMIT (at the end of an autocommit statement)
  // over the row images captured when the row was written.
  bool deferred = false;
};

// The per-table bindings a write needs, for writers the engine opens itself (foreign
// key actions). Implemented by main/statement_planner.cc, which binds them for the
// statements' own writers the same way.
// A generated column bound once per DML plan: `expr` reads the row being written (and
// the same row one level out, for `new.c`).
struct BoundGenerated {
  int column = 0;
  std::shared_ptr<const ScalarExpr> expr;
};

struct TableWriteBindings {
  std::vector<BoundCheck> checks;
  std::vector<std::shared_ptr<const ScalarExpr>> defaults;  // null where none
  std::vector<BoundGenerated> generated;                   // in dependency order
};
TableWriteBindings bind_table_writes(DatabaseImpl& db, const TableEntry& table);

struct FkLink;
struct FkWriteState;
class IndexWriter;

class DmlWriter {
 public:
  DmlWriter(DatabaseImpl& db, std::shared_ptr<TableEntry> table);
  // With CHECK constraints, evaluated in `ctx` per written row. `checks` and `ctx` must
  // outlive the writer.
  DmlWriter(DatabaseImpl& db, std::shared_ptr<TableEntry> table, const std::vector<BoundCheck>& checks,
            ExecContext& ctx);
  ~DmlWriter();

  // Each returns the stored row (the deleted row for remove), or nullopt when nothing
  // changed (IGNORE, or a key that does not exist). Throws Error on a violation.
  // `action` is the statement's own OR action; nullopt lets each constraint's declared
  // ON CONFLICT action apply (ABORT when none was declared). A FAIL or ROLLBACK
  // violation is recorded in the context's `failed_action` before the Error is thrown.
  std::optional<Row> insert(Row row, std::optional<ConflictAction> action);
  std::optional<Row> update(const Row& old_row, Row new_row, std::optional<ConflictAction> action);
  std::optional<Row> remove(const Row& old_row);
  // For UPSERT: like insert, but a uniqueness conflict writes nothing, sets `existing` to
  // the stored row and `conflict` to the violated constraint: -1 for the primary key,
  // else the ordinal of the unique index in schema.indexes. `row` is left as prepared
  // (coerced) for writing.
  std::optional<Row> insert_or_conflict(Row& row, std::optional<ConflictAction> action,
                                        std::optional<Row>& existing, int& conflict);
  // The violation message of a uniqueness conflict as insert_or_conflict reports it.
  std::string conflict_message(int conflict) const;
  // The bound DEFAULT of each column (null where none), for NOT NULL … REPLACE, which
  // substitutes the default for a NULL. A default reads the context row and, one level
  // out, the row being written. Must outlive the writer.
  void set_defaults(const std::vector<std::shared_ptr<const ScalarExpr>>& defaults) { defaults_ = &defaults; }
  // The generated columns in dependency order, computed on every insert and update
  // after the written columns are coerced. Must outlive the writer.
  void set_generated(const std::vector<BoundGenerated>& generated) { generated_ = &generated; }
  // The statement's WITH CONTEXT values, one per declared variable.
  void set_context_row(Row row) { context_row_ = std::move(row); }
  // Evaluates the DEFAULT of `column` for `row` (the row being written).
  Value eval_default(int column, const Row& row) const;
  // The UNIQUE violation message for this table's primary key.
  std::string unique_message() const;

  // Converts a value to a column's declared type (the write-side coercion). Throws
  // Error(kMismatch) for a value the type cannot hold, and Error(kRange) for an integer
  // outside int64 that would reach the module as one (INTEGER, NUMERIC, ANY columns).
  static Value coerce(const Value& v, const ColumnSchema& col, const TableSchema& table);

 private:
  // Coerces `row` and enforces NOT NULL; false when the row is to be skipped (IGNORE).
  bool prepare_row(Row& row, std::optional<ConflictAction> action);
  // Enforces the first CHECK applying to `op` that evaluates false; false when the row
  // is to be skipped (IGNORE).
  bool check_row(RowOp op, const Row* new_row, const Row* old_row, std::optional<ConflictAction> action);
  Row key_of(const Row& row) const;
  std::optional<Row> handle(UpdateResult& r, ConflictAction action);
  std::optional<Row> write_insert(Row& row, std::optional<ConflictAction> action, std::optional<Row>* existing,
                                  int* conflict);
  // Resolves the UNIQUE-index conflicts `row` would cause (`self`: its own primary key,
  // whose entries are not conflicts): IGNORE skips the row (false), REPLACE deletes the
  // conflicting rows, UPSERT (existing != null) reports the first one (false), others fail.
  bool resolve_unique(const Row& row, const Row& self, std::optional<ConflictAction> action,
                      std::optional<Row>* existing, int* conflict);
  // REPLACE on the primary key: deletes the row stored at `row`'s key (if any and not
  // `self`) through remove(), so its index entries and dependents follow.
  void evict_key_holder(const Row& row, const Row* self);
  // Throws the CONSTRAINT error `message`, recording a FAIL / ROLLBACK action first.
  [[noreturn]] void fail(ConflictAction action, const std::string& message);

  // FOREIGN KEY enforcement (write/dml_writer_fk.cc). The child side runs before the
  // module write: false when the row is to be skipped (IGNORE). The parent side runs
  // after it, for a removed row or a changed referenced key (`new_row` null: removed;
  // `evicted`: displaced by REPLACE rather than named by the statement).
  bool check_foreign_keys(const Row& new_row, const Row* old_row, std::optional<ConflictAction> action);
  void apply_parent_actions(const Row& old_row, const Row* new_row, bool evicted);
  FkWriteState& fk_state();
  // A self-referencing cascade may have rewritten rows of this table after the statement
  // read them: an update then starts from the stored version, keeping the statement's
  // own changes. -1: the row is gone; 0: `old_row` is current; 1: `current` replaces it
  // (and `new_row` was rebased onto it).
  int refresh_after_self_cascade(const Row& old_row, Row& new_row, Row& current);
  // The writer cascaded writes into `table` go through (this one for the same table).
  DmlWriter& child_writer(const std::shared_ptr<TableEntry>& table);

  DatabaseImpl& db_;
  std::shared_ptr<TableEntry> table_;
  std::shared_ptr<FkWriteState> fk_;  // built at the first foreign-key use
  int depth_ = 0;  // cascade nesting (0: the statement's own writer)
  const std::vector<BoundCheck>* checks_ = nullptr;
  ExecContext* ctx_ = nullptr;
  const std::vector<std::shared_ptr<const ScalarExpr>>* defaults_ = nullptr;
  std::unique_ptr<IndexWriter> indexes_;  // null when the table has no index
  const std::vector<BoundGenerated>* generated_ = nullptr;
  Row context_row_;
};

}  // namespace quereus
