// The transaction coordinator (transaction/coordinator.h).
#include "transaction/coordinator.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "catalog/catalog.h"
#include "common/strings.h"
#include "transaction/assertions.h"

namespace quereus {

void TransactionCoordinator::join(TableEntry& entry) {
  if (entry.joined) return;
  if (!entry.connection_opened) {
    entry.connection = entry.table->open_connection();
    entry.connection_opened = true;
  }
  if (!entry.connection) return;
  entry.connection->begin();
  for (uint32_t d = 1; d <= current_depth(); ++d) entry.connection->savepoint(d);
  entry.joined = true;
  joined_.push_back(&entry);
}

void TransactionCoordinator::forget(TableEntry& entry) {
  noted_.erase(std::remove(noted_.begin(), noted_.end(), &entry), noted_.end());
  if (!entry.joined) return;
  // The table is going away; a rollback its module refuses leaves nothing to undo here.
  try {
    entry.connection->rollback();
  } catch (const std::exception& e) {
    spdlog::warn("table '{}': rollback while dropping it failed: {}", entry.qualified_name(), e.what());
  } catch (...) {
    spdlog::warn("table '{}': rollback while dropping it failed", entry.qualified_name());
  }
  entry.joined = false;
  joined_.erase(std::remove(joined_.begin(), joined_.end(), &entry), joined_.end());
}

void TransactionCoordinator::note_written(TableEntry& entry) {
  if (std::find(noted_.begin(), noted_.end(), &entry) == noted_.end()) noted_.push_back(&entry);
}

void TransactionCoordinator::end_transaction(bool commit) {
  std::vector<TableEntry*> parts;
  parts.swap(joined_);
  noted_.clear();
  Status first_error;
  for (auto* t : parts) {
    t->joined = false;
    try {
      if (commit) t->connection->commit(); else t->connection->rollback();
    } catch (const Error& e) {
      if (first_error.ok()) first_error = e.status();
    }
  }
  // A commit a module refused is a rollback for the observers too (what they flushed
  // went with the transaction).
  if (!commit || !first_error.ok()) observers_.rollback_to(0);
  observers_.reset();
  explicit_ = implicit_ = statement_savepoint_ = savepoint_began_txn_ = false;
  savepoints_.clear();
  savepoint_marks_.clear();
  std::vector<DeferredConstraints::Check> repairs = deferred_.take_repairs();
  std::vector<DeferredConstraints::Check> end = deferred_.take_end();
  deferred_.clear();
  // What the rollback undid under DDL that stays (outside any transaction now).
  if (!commit || !first_error.ok()) DeferredConstraints::run_repairs(db_, repairs);
  DeferredConstraints::run_end(db_, end);
  // A commit a module refused publishes no data: what landed is unknown.
  publish(commit && first_error.ok());
  if (!first_error.ok()) throw Error(first_error.code(), first_error.raw_message());
}

void TransactionCoordinator::publish(bool committed) {
  if (!committed) changes_.clear_data();  // DDL applied at once: its schema events stay
  if (changes_.empty()) return;
  ChangeBatch batch = changes_.take();
  if (!listeners_.any()) return;
  if (holding_) {
    held_.push_back(std::move(batch));
    return;
  }
  delivering_ = true;
  listeners_.deliver(batch);
  delivering_ = false;
}

void TransactionCoordinator::release_publication(bool landed) {
  holding_ = false;
  std::vector<ChangeBatch> batches;
  batches.swap(held_);
  if (!landed) return;
  for (const ChangeBatch& batch : batches) {
    if (!listeners_.any()) return;
    delivering_ = true;
    listeners_.deliver(batch);
    delivering_ = false;
  }
}

uint64_t TransactionCoordinator::on_data_change(DataChangeListener listener) {
  uint64_t id = listeners_.add_data(std::move(listener));
  changes_.set_capturing(true);
  return id;
}

uint64_t TransactionCoordinator::on_schema_change(SchemaChangeListener listener) {
  uint64_t id = listeners_.add_schema(std::move(listener));
  changes_.set_capturing(true);
  return id;
}

uint64_t TransactionCoordinator::on_commit(ChangeBatchListener listener) {
  uint64_t id = listeners_.add_batch(std::move(listener));
  changes_.set_capturing(true);
  return id;
}

bool TransactionCoordinator::unsubscribe(uint64_t id) {
  bool found = listeners_.remove(id);
  changes_.set_capturing(listeners_.any());
  return found;
}

void TransactionCoordinator::commit_transaction() {
  try {
    deferred_.run_commit(db_);
    if (!joined_.empty() || !noted_.empty()) {
      std::vector<TableEntry*> written = joined_;
      for (TableEntry* t : noted_)
        if (std::find(written.begin(), written.end(), t) == written.end()) written.push_back(t);
      assertions_.check(db_, written, assertion_sink_);
    }
    observers_.flush();
  } catch (...) {
    end_transaction(false);
    throw;
  }
  end_transaction(true);
}

void TransactionCoordinator::statement_begin() {
  if (delivering_)
    throw Error(StatusCode::kMisuse, "a change listener may not run statements on the database that notifies it");
  deferred_.clear_statement();
  statement_mark_ = marks();
  if (!explicit_) {
    implicit_ = true;
    return;
  }
  statement_savepoint_ = true;
  uint32_t d = current_depth();
  for (auto* t : joined_) t->connection->savepoint(d);
}

void TransactionCoordinator::statement_commit() {
  // Work deferred to the statement's end (materialized-view rebuilds), then the NO ACTION
  // checks; a failure undoes the statement.
  try {
    observers_.statement_end();
    deferred_.run_statement_end(db_);
  } catch (...) {
    statement_rollback();
    throw;
  }
  if (implicit_ && !explicit_) {
    commit_transaction();
    return;
  }
  if (statement_savepoint_) {
    uint32_t d = current_depth();
    for (auto* t : joined_) t->connection->release_savepoint(d);
    statement_savepoint_ = false;
  }
}

void TransactionCoordinator::commit_statement_in_schema_scope() {
  if (!implicit_ || explicit_) return;
  observers_.statement_end();
  deferred_.run_statement_end(db_);
  commit_transaction();
}

void TransactionCoordinator::statement_rollback() {
  deferred_.clear_statement();
  deferred_.rollback_to(statement_mark_.deferred);
  // A failed statement announces nothing: neither its rows nor its DDL.
  changes_.rollback_data(statement_mark_.changes);
  changes_.retract_schema(statement_mark_.changes);
  observers_.rollback_to(statement_mark_.observed);
  if (implicit_ && !explicit_) {
    end_transaction(false);
    return;
  }
  if (statement_savepoint_) {
    uint32_t d = current_depth();
    for (auto* t : joined_) {
      t->connection->rollback_to_savepoint(d);
      t->connection->release_savepoint(d);
    }
    statement_savepoint_ = false;
    deferred_.run_repairs(db_);
  }
}

void TransactionCoordinator::begin_explicit() {
  if (explicit_) throw Error(StatusCode::kError, "cannot BEGIN: already in a transaction");
  explicit_ = true;
}

void TransactionCoordinator::commit_explicit() {
  if (!explicit_) return;  // COMMIT without a transaction is accepted (reference behaviour)
  commit_transaction();
}

void TransactionCoordinator::rollback_explicit() {
  if (!explicit_) return;
  end_transaction(false);
}

void TransactionCoordinator::savepoint(const std::string& name) {
  if (!explicit_) {
    explicit_ = true;
    savepoint_began_txn_ = true;
  }
  savepoints_.push_back(name);
  savepoint_marks_.push_back(marks());
  uint32_t d = current_depth();
  for (auto* t : joined_) t->connection->savepoint(d);
}

static int find_savepoint(const std::vector<std::string>& sps, const std::string& name) {
  for (int i = static_cast<int>(sps.size()) - 1; i >= 0; --i)
    if (iequals(sps[i], name)) return i;
  return -1;
}

void TransactionCoordinator::release(const std::string& name) {
  int i = find_savepoint(savepoints_, name);
  if (i < 0) throw Error(StatusCode::kError, "no such savepoint: " + name);
  uint32_t target = static_cast<uint32_t>(i) + 1;
  for (uint32_t d = static_cast<uint32_t>(savepoints_.size()); d >= target; --d)
    for (auto* t : joined_) t->connection->release_savepoint(d);
  savepoints_.resize(i);
  savepoint_marks_.resize(i);
  if (savepoints_.empty() && savepoint_began_txn_) {
    commit_transaction();
  }
}

void TransactionCoordinator::rollback_to(const std::string& name) {
  int i = find_savepoint(savepoints_, name);
  if (i < 0) throw Error(StatusCode::kError, "no such savepoint: " + name);
  uint32_t target = static_cast<uint32_t>(i) + 1;
  for (uint32_t d = static_cast<uint32_t>(savepoints_.size()); d > target; --d)
    for (auto* t : joined_) t->connection->release_savepoint(d);
  for (auto* t : joined_) t->connection->rollback_to_savepoint(target);
  savepoints_.resize(i + 1);
  deferred_.rollback_to(savepoint_marks_[i].deferred);
  changes_.rollback_data(savepoint_marks_[i].changes);
  observers_.rollback_to(savepoint_marks_[i].observed);
  savepoint_marks_.resize(i + 1);
  deferred_.run_repairs(db_);
}

void TransactionCoordinator::retract_statement_changes() {
  changes_.rollback_data(statement_mark_.changes);
  changes_.retract_schema(statement_mark_.changes);
}

}  // namespace quereus
