// DmlWriter: the one write path. Every insert, update and delete — from SQL statements,
// foreign-key actions and view writes today, from materialized-view maintenance, lenses
// and sync ingestion later — goes through DmlWriter::apply (docs/design-writes.md §6).
#pragma once

#include <exception>
#include <map>
#include <memory>
#include <optional>

#include "transaction/write_context.h"
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

// A generated column bound once per DML plan: `expr` reads the row being written (and
// the same row one level out, for `new.c`).
struct BoundGenerated {
  int column = 0;
  std::shared_ptr<const ScalarExpr> expr;
};

// The per-table bindings a write needs: CHECK constraints, the DEFAULT of each column
// (null where none) and the generated columns in dependency order.
struct TableWriteBindings {
  std::vector<BoundCheck> checks;
  std::vector<std::shared_ptr<const ScalarExpr>> defaults;
  std::vector<BoundGenerated> generated;
};

// ON CONFLICT … DO NOTHING | DO UPDATE, bound over the stored (conflicting) row, with the
// proposed row one scope out as `excluded.c` / `new.c`.
struct BoundUpsert {
  static constexpr int kAnyConflict = -2;
  int target = kAnyConflict;  // -1: the primary key; i >= 0: schema.indexes[i]
  bool do_nothing = true;
  std::vector<std::pair<int, std::shared_ptr<const ScalarExpr>>> set;
  std::shared_ptr<const ScalarExpr> where;
};

// A RETURNING clause. Unqualified names read the row the statement produced (NEW for
// INSERT / UPDATE, OLD for DELETE); `new.c` / `old.c` name an image explicitly. The
// images are bound one scope out, so they never collide with the unqualified names:
// they are read through the outer environment, whose row is NEW (INSERT / UPDATE) or
// OLD (DELETE), with OLD appended after NEW for UPDATE.
struct BoundReturning {
  std::vector<std::shared_ptr<const ScalarExpr>> exprs;
  void emit(const Row& row, const Row* old_row, ExecContext& ctx, std::vector<Row>& out) const;
};

// The tables a statement's writes can reach through foreign-key actions (CASCADE, SET
// NULL, SET DEFAULT, transitively), with their bindings: bound when the statement is
// planned, so a cascade never binds anything while it runs. A statement is re-planned
// when the schema version moves, so the set is current whenever it runs.
// A table whose expressions do not bind (a CHECK reading a dropped table, …) keeps its
// error, raised only if an action reaches it — as when bindings were made on first use.
// The determinism gate (determinism.md "Validation Timing") is judged per action, on the
// bodies that action evaluates, and its refusal kept the same way: a cascaded DELETE
// evaluates only the CHECKs that apply to DELETE; SET NULL, SET DEFAULT and ON UPDATE
// CASCADE update the row (its UPDATE CHECKs and generated columns), and SET DEFAULT fires
// the defaults of the key's columns.
struct CascadeTarget {
  TableWriteBindings bindings;
  std::exception_ptr error;
  std::exception_ptr remove_refusal;
  std::exception_ptr update_refusal;
  std::vector<std::exception_ptr> default_refusals;  // per column; empty: none
};
using CascadeBindings = std::map<const TableEntry*, CascadeTarget>;

// One statement's writes to one table, bound once per plan by the statement's planner
// (main/statement_planner.cc) and driven row by row through DmlWriter::apply.
struct TableWritePlan {
  std::shared_ptr<TableEntry> table;
  // The statement's own OR action; nullopt lets each constraint's declared ON CONFLICT
  // action apply (ABORT when none was declared).
  std::optional<ConflictAction> action;
  // The defaults are the statement's: an INSERT binds each for the columns it supplies
  // (a default may read them as `new.c`); UPDATE binds them for NOT NULL … REPLACE.
  TableWriteBindings bindings;
  std::vector<BoundUpsert> upserts;  // INSERT … ON CONFLICT, in clause order
  BoundReturning returning;
  std::shared_ptr<const CascadeBindings> cascades;  // null: no action reaches another row
};

// One row change as a statement produced it.
struct RowChange {
  RowOp op = RowOp::kInsert;
  // UPDATE and DELETE: the row as the statement read it.
  const Row* old_row = nullptr;
  // INSERT: the values in declared column order, those the statement does not supply
  // left NULL; UPDATE: the proposed row (the old row with the SET values).
  Row new_row;
  // INSERT: per column, whether the statement supplied it (the writer fills the others
  // from their defaults). Null: every column was supplied.
  const std::vector<bool>* supplied = nullptr;
  // The row's 1-based mutation ordinal (mutation_ordinal() while its defaults are
  // evaluated); 0: none.
  int64_t ordinal = 0;
};

struct FkLink;
struct FkWriteState;
class IndexWriter;

class DmlWriter {
 public:
  // A writer for one execution of `plan` in `ctx`. `plan` and `ctx` must outlive it.
  DmlWriter(WriteContext& db, const TableWritePlan& plan, ExecContext& ctx);
  ~DmlWriter();

  // The statement's WITH CONTEXT values, one per declared variable.
  void set_context_row(Row row) { context_row_ = std::move(row); }
  // Where the RETURNING rows go (must outlive the writer); none: RETURNING is not run.
  void set_returning_sink(std::vector<Row>* sink) { returning_sink_ = sink; }

  // The one write entry: applies `change` to the table. An INSERT first takes the
  // defaults of the columns it did not supply (under its mutation ordinal); then come
  // coercion to the declared types, generated columns, NOT NULL, CHECK, the child side of
  // the foreign keys, uniqueness (with the statement's or the constraint's conflict
  // action, or the statement's ON CONFLICT clauses), the module write, the index entries,
  // the row observers, the change event, the parent side of the foreign keys (actions on
  // referencing rows) and the RETURNING row. Returns the stored row (the removed row for
  // a delete; the updated row when ON CONFLICT DO UPDATE ran), or nullopt when nothing
  // was written (IGNORE, DO NOTHING, a row already gone). Throws Error on a violation;
  // a FAIL or ROLLBACK violation is recorded in the context's `failed_action` first.
  std::optional<Row> apply(RowChange change);

  // Changes a backing host already realized into a maintained table (materialized-view
  // maintenance: the engine derived the rows, the host wrote them; docs/design-
  // materialized-views.md, "Constraints"). Runs what follows the module write on this
  // path: every CHECK that applies to an insert or an update against each new image (a
  // derived image is neither), the child side of the foreign keys, the index entries and
  // their uniqueness, and the parent side of the foreign keys (actions on referencing
  // rows). The index entries of every old image are removed before any new one is added,
  // so a batch that moves a unique value from one row to another does not collide with
  // itself. Observers and the change log are the caller's. A violation throws
  // CONSTRAINT naming the maintained table ("row derived into maintained table …").
  struct DerivedChange {
    RowOp op = RowOp::kInsert;
    const Row* old_row = nullptr;  // update, delete
    const Row* new_row = nullptr;  // insert, update
  };
  void apply_derived(const std::vector<DerivedChange>& changes);
  // The parent side of the foreign keys for a change written outside this writer (an
  // external row change the host reports): actions on the rows referencing `old_row`
  // (`new_row` null: it was deleted).
  void apply_parent_side(const Row& old_row, const Row* new_row) { apply_parent_actions(old_row, new_row, false); }
  // The checks apply_derived makes of one new image (CHECK, child-side foreign keys), on
  // their own: for a fill that writes the committed rows straight, outside a transaction
  // (a CHECK reading other rows is judged at once).
  static void check_derived_row(WriteContext& db, const TableWritePlan& plan, const Row& row, ExecContext& ctx);

  // Converts a value to a column's declared type (the write-side coercion). Throws
  // Error(kMismatch) for a value the type cannot hold, and Error(kRange) for an integer
  // outside int64 that would reach the module as one (INTEGER, NUMERIC, ANY columns).
  static Value coerce(const Value& v, const ColumnSchema& col, const TableSchema& table);

 private:
  // The writer of a foreign-key action's target (cascades have no upserts or RETURNING).
  DmlWriter(WriteContext& db, std::shared_ptr<TableEntry> table, const TableWriteBindings& bindings,
            std::shared_ptr<const CascadeBindings> cascades, ExecContext& ctx, int depth);

  std::optional<Row> insert(Row row, std::optional<ConflictAction> action);
  std::optional<Row> update(const Row& old_row, Row new_row, std::optional<ConflictAction> action);
  std::optional<Row> remove(const Row& old_row);
  // For UPSERT: like insert, but a uniqueness conflict writes nothing, sets `existing` to
  // the stored row and `conflict` to the violated constraint: -1 for the primary key,
  // else the ordinal of the unique index in schema.indexes. `row` is left as prepared
  // (coerced) for writing.
  std::optional<Row> insert_or_conflict(Row& row, std::optional<ConflictAction> action,
                                        std::optional<Row>& existing, int& conflict);
  // The first ON CONFLICT clause whose target is the violated constraint (or that has no
  // target) handles it; with none, the conflict fails the statement.
  std::optional<Row> resolve_upsert(const Row& existing, const Row& proposed, int conflict);
  // The violation message of a uniqueness conflict as insert_or_conflict reports it.
  std::string conflict_message(int conflict) const;
  // Evaluates the DEFAULT of `column` for `row` (the row being written).
  Value eval_default(int column, const Row& row) const;
  // The UNIQUE violation message for this table's primary key.
  std::string unique_message() const;
  void emit_returning(const Row& row, const Row* old_row);
  // Hands an accepted row change to the row observers (WriteContext::row_observers).
  void observe(RowOp op, const Row* old_row, const Row* new_row);

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
  // The deletions run last, after the other indexes and the primary key (action `pk`;
  // `old_row`: the row an UPDATE rewrites, null for an INSERT) have let the row through.
  bool resolve_unique(const Row& row, const Row& self, std::optional<ConflictAction> action,
                      std::optional<Row>* existing, int* conflict, ConflictAction pk, const Row* old_row);
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
  // The writer cascaded writes into `table` go through (this one for the same table), and
  // the bindings of `table` the statement's plan made for it.
  DmlWriter& child_writer(const std::shared_ptr<TableEntry>& table);
  const TableWriteBindings& cascade_bindings(const TableEntry& table) const;
  const CascadeTarget& cascade_target(const TableEntry& table) const;

  WriteContext& db_;
  std::shared_ptr<TableEntry> table_;
  const TableWritePlan* plan_ = nullptr;  // null for a cascade's writer
  const TableWriteBindings& bindings_;
  std::optional<ConflictAction> action_;
  std::shared_ptr<const CascadeBindings> cascades_;
  ExecContext& ctx_;
  std::shared_ptr<FkWriteState> fk_;  // built at the first foreign-key use
  int depth_ = 0;  // cascade nesting (0: the statement's own writer)
  std::unique_ptr<IndexWriter> indexes_;  // null when the table has no index
  std::vector<Row>* returning_sink_ = nullptr;
  Row context_row_;
};

}  // namespace quereus
