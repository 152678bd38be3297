// WriteContext: what the write path (write/) may reach of the database it writes to — the
// current transaction's change log and deferred-constraint queue, the catalog, the
// participants of the transaction, and the row observers. DatabaseImpl (main/)
// implements it; the write path includes this header, never main/ (docs/design-writes.md
// §6, docs/architecture.md "Layout").
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "catalog/catalog.h"
#include "transaction/change_events.h"
#include "transaction/deferred_constraints.h"

namespace quereus {

namespace ast {
struct Expr;
}
class ScalarExpr;

// A row change the module has accepted, as the write path saw it. `old_row` is null for
// an insert, `new_row` null for a delete; both are the full stored images (declared
// column order, generated columns computed).
struct ObservedChange {
  const TableEntry& table;
  RowOp op;
  const Row* old_row;
  const Row* new_row;
  // The change's number in the current transaction (0, 1, 2, …): what rollback_to
  // counts in.
  uint64_t seq;
};

// The seam materialized-view maintenance, lens fan-out bookkeeping and sync capture hook
// into: the write path calls every registered observer, in registration order, after the
// module accepted a row change and before the change event is recorded — inside the
// statement, so an observer that throws fails the statement like a constraint and its
// savepoint undoes the row. An observer that writes to tables does so inside the
// statement and needs nothing else; one that buffers follows the transaction:
// - `rollback_to(seq)`: the changes numbered `seq` and after were undone (a failed
//   statement, ROLLBACK TO a savepoint, or — with 0 — the transaction's rollback);
// - `statement_end()`: a statement's writes are all done and it is about to complete
//   (before its end-of-statement checks); work deferred to the statement's end runs here,
//   inside the statement (a throw fails it, and its savepoint undoes it all);
// - `flush()`: the commit pipeline's step after the deferred checks and assertions and
//   before the modules commit; a throw rolls the transaction back.
class RowObserver {
 public:
  virtual ~RowObserver() = default;
  virtual void on_row(const ObservedChange& change) = 0;
  virtual void rollback_to(uint64_t seq) { (void)seq; }
  virtual void statement_end() {}
  virtual void flush() {}
};

// The registered row observers and the number of the next observed change. The write
// path calls observe(); the transaction coordinator (transaction/coordinator.h) drives
// the rest in step with the transaction.
class RowObservers {
 public:
  void add(RowObserver* o) { observers_.push_back(o); }
  void remove(RowObserver* o) {
    for (auto it = observers_.begin(); it != observers_.end(); ++it)
      if (*it == o) {
        observers_.erase(it);
        return;
      }
  }
  void observe(const TableEntry& table, RowOp op, const Row* old_row, const Row* new_row) {
    if (observers_.empty()) return;
    ObservedChange change{table, op, old_row, new_row, observed_++};
    for (RowObserver* o : observers_) o->on_row(change);
  }
  // The number the next observed change gets (a savepoint's or statement's mark).
  uint64_t mark() const { return observed_; }
  void rollback_to(uint64_t mark) {
    if (mark >= observed_) return;
    observed_ = mark;
    for (RowObserver* o : observers_) o->rollback_to(mark);
  }
  void flush() {
    for (RowObserver* o : observers_) o->flush();
  }
  void statement_end() {
    for (RowObserver* o : observers_) o->statement_end();
  }
  // The transaction ended (its changes flushed and committed, or rolled back).
  void reset() { observed_ = 0; }

 private:
  std::vector<RowObserver*> observers_;
  uint64_t observed_ = 0;
};

class WriteContext {
 public:
  virtual ~WriteContext() = default;

  // The current transaction's change events and deferred-constraint queue.
  virtual ChangeLog& changes() = 0;
  virtual DeferredConstraints& deferred() = 0;
  // The catalog (foreign-key parents, inbound keys, index companions).
  virtual Catalog& catalog() = 0;
  // Moves with every schema change; per-table caches keyed on it are rebuilt.
  virtual uint64_t schema_version() const = 0;
  // pragma foreign_keys.
  virtual bool foreign_keys_enforced() const = 0;
  // An explicit transaction is open.
  virtual bool in_transaction() const = 0;
  // Makes `table` a participant of the current transaction (begin + savepoint replay);
  // `forget` removes a dropped one.
  virtual void join(TableEntry& table) = 0;
  virtual void forget(TableEntry& table) = 0;
  // A fresh execution generation (caches keyed on one execution).
  virtual uint64_t next_generation() = 0;
  // Binds `expr` over the columns of `table` (a partial index's WHERE), resolving names
  // the way the table's own schema-authored expressions do.
  virtual std::shared_ptr<const ScalarExpr> bind_row_expr(const TableEntry& table, const ast::Expr& expr) = 0;

  // ---- row observers (not owned; an observer stays registered until removed)
  void add_row_observer(RowObserver* o) { observers_.add(o); }
  void remove_row_observer(RowObserver* o) { observers_.remove(o); }
  // The write path's call, for each accepted row change.
  void observe(const TableEntry& table, RowOp op, const Row* old_row, const Row* new_row) {
    observers_.observe(table, op, old_row, new_row);
  }

 protected:
  // The transaction coordinator's handle on the observers.
  RowObservers& row_observers() { return observers_; }

 private:
  RowObservers observers_;
};

}  // namespace quereus
