// TransactionCoordinator: one database's transaction state and its rules — autocommit's
// implicit transaction, BEGIN / COMMIT / ROLLBACK, named savepoints, the statement
// savepoint that makes each statement atomic inside an explicit transaction, the tables
// that joined the transaction (each module connection is begun and given the open
// savepoint depth when it joins), and the commit pipeline:
//
//   deferred checks → assertions → row observers' flush (maintenance) → module commit
//   (each joined table) → publish the change batch to the listeners.
//
// A failure before the modules commit rolls the transaction back and rethrows; after it,
// only delivery remains, contained per listener. The coordinator owns the current
// transaction's change log, deferred-constraint queue and listeners; it reaches the rest
// of the database (assertions' violation queries, the deferred checks' re-planning)
// through TransactionContext. DatabaseImpl (main/) owns one and forwards to it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "transaction/change_events.h"
#include "transaction/deferred_constraints.h"
#include "transaction/transaction_context.h"

namespace quereus {

class Assertions;
struct AssertionViolation;
struct TableEntry;

class TransactionCoordinator {
 public:
  TransactionCoordinator(TransactionContext& db, Assertions& assertions, RowObservers& observers)
      : db_(db), assertions_(assertions), observers_(observers) {}

  // An explicit transaction (BEGIN, or a SAVEPOINT outside one) is open.
  bool in_explicit() const { return explicit_; }
  // Some transaction, implicit or explicit, is open.
  bool active() const { return explicit_ || implicit_; }

  DeferredConstraints& deferred() { return deferred_; }
  ChangeLog& changes() { return changes_; }

  // ---- participants
  // Makes `entry` a participant of the current transaction (begin + savepoint replay).
  void join(TableEntry& entry);
  // Removes a dropped table from the participants (its pending writes are rolled back).
  void forget(TableEntry& entry);
  // A table whose rows changed outside the engine's writes (the ingestion seam): the
  // commit's assertion check treats it as written.
  void note_written(TableEntry& entry);
  // While set (the ingestion seam's report mode, around its own commit), the commit's
  // violated assertions are appended to `sink` instead of failing it.
  void set_assertion_sink(std::vector<AssertionViolation>* sink) { assertion_sink_ = sink; }

  // ---- statements
  // Brackets one statement: opens an implicit transaction in autocommit mode, or a
  // statement savepoint inside an explicit one. Refused while listeners are being told
  // of a commit (a listener may not run statements on the database that notifies it).
  void statement_begin();
  // Ends the statement, keeping its writes: the work deferred to the statement's end,
  // its NO ACTION checks, then (autocommit) the commit pipeline. A failure undoes the
  // statement and rethrows.
  void statement_commit();
  void statement_rollback();
  // For a DDL statement that also writes rows: in autocommit, commits the statement's
  // rows now (inside its schema-change scope); inside an explicit transaction the rows
  // wait for its COMMIT.
  void commit_statement_in_schema_scope();
  // The open statement announces nothing: its data events are dropped and its schema
  // events retracted (a failed schema change).
  void retract_statement_changes();

  // ---- transaction control statements
  void begin_explicit();
  void commit_explicit();    // without a transaction: accepted, nothing to do
  void rollback_explicit();  // likewise
  void savepoint(const std::string& name);
  void release(const std::string& name);
  void rollback_to(const std::string& name);
  // Rolls back whatever transaction is open (a failed schema change's reload, the
  // database's close). Throws the first module's refusal after rolling back the rest.
  void abort() {
    if (active()) end_transaction(false);
  }

  // ---- publication inside a schema-change scope
  // While a scope is open, what commits inside it (a DDL statement's rows, a sync page's
  // rows) reaches the disk only when the scope lands: its batches wait, and are told to the
  // listeners when the scope lands (`landed`) or dropped when it rolls back.
  void hold_publication() { holding_ = true; }
  void release_publication(bool landed);

  // ---- listeners (Database::on_data_change and friends)
  uint64_t on_data_change(DataChangeListener listener);
  uint64_t on_schema_change(SchemaChangeListener listener);
  uint64_t on_commit(ChangeBatchListener listener);
  bool unsubscribe(uint64_t id);

 private:
  struct Marks {
    size_t deferred = 0;
    ChangeLog::Mark changes;
    uint64_t observed = 0;  // RowObservers::mark()
  };
  Marks marks() const { return {deferred_.mark(), changes_.mark(), observers_.mark()}; }
  uint32_t current_depth() const {
    return static_cast<uint32_t>(savepoints_.size()) + (statement_savepoint_ ? 1 : 0);
  }
  void commit_transaction();
  void end_transaction(bool commit);
  // Hands the events of the transaction that just ended to the listeners.
  void publish(bool committed);

  TransactionContext& db_;
  Assertions& assertions_;
  RowObservers& observers_;

  DeferredConstraints deferred_;
  ChangeLog changes_;
  ChangeListeners listeners_;
  bool delivering_ = false;  // listeners are running: statements are refused
  bool holding_ = false;     // hold_publication: committed batches wait in held_
  std::vector<ChangeBatch> held_;

  bool explicit_ = false;
  bool implicit_ = false;
  bool savepoint_began_txn_ = false;
  bool statement_savepoint_ = false;
  std::vector<std::string> savepoints_;
  std::vector<Marks> savepoint_marks_;  // per named savepoint
  Marks statement_mark_;                // at the open statement's start
  std::vector<TableEntry*> joined_;
  std::vector<TableEntry*> noted_;  // note_written, until the transaction ends
  std::vector<AssertionViolation>* assertion_sink_ = nullptr;
};

}  // namespace quereus
