// The deferred-constraint queue of one transaction (docs/foreign-keys.md, "Deferred
// work"): checks that cannot run when a row is written — NO ACTION parent checks (at
// the end of the statement), DEFERRABLE INITIALLY DEFERRED foreign keys and CHECK
// constraints with subqueries (at COMMIT, or at the end of an autocommit statement).
// Each check is a closure that throws the constraint's error when it fails. Savepoints
// mark the queue; rolling one back drops what was queued after its mark.
#pragma once

#include <functional>
#include <vector>

namespace quereus {

class TransactionContext;
struct ExecContext;

class DeferredConstraints {
 public:
  using Check = std::function<void(ExecContext&)>;

  void at_statement_end(Check c) { statement_.push_back(std::move(c)); }
  void at_commit(Check c) { commit_.push_back(std::move(c)); }
  // Work redone after every rollback inside the transaction (ROLLBACK TO, a failed
  // statement's undo) and after the transaction's own rollback: DDL that escapes the
  // transaction (a CREATE INDEX) re-establishes what the rollback undid under it (the
  // new index's entries for the rows that survive). Kept until the transaction ends.
  void after_rollback(Check c) { repairs_.push_back(std::move(c)); }
  bool has_repairs() const { return !repairs_.empty(); }
  // Work run once when the transaction ends, committed or not, after the repairs (the
  // mark of an index whose validity depended on the transaction's writes is cleared).
  void at_end(Check c) { end_.push_back(std::move(c)); }
  std::vector<Check> take_end() { return std::move(end_); }

  size_t mark() const { return commit_.size(); }
  void rollback_to(size_t mark) {
    if (mark < commit_.size()) commit_.resize(mark);
  }
  void clear_statement() { statement_.clear(); }
  void clear() {
    statement_.clear();
    commit_.clear();
    repairs_.clear();
    end_.clear();
  }

  // Run (and drop) the statement-end / commit checks; the first failure throws.
  void run_statement_end(TransactionContext& db) { run(db, statement_); }
  void run_commit(TransactionContext& db) { run(db, commit_); }
  // Runs every repair, keeping them (a later rollback needs them again). A repair's
  // failure is logged, never thrown: a rollback does not fail.
  void run_repairs(TransactionContext& db);
  // Hands the repairs over (the transaction is ending; the caller runs them once).
  std::vector<Check> take_repairs() { return std::move(repairs_); }
  static void run_repairs(TransactionContext& db, std::vector<Check>& repairs);
  static void run_end(TransactionContext& db, std::vector<Check>& work);

 private:
  static void run(TransactionContext& db, std::vector<Check>& checks);

  std::vector<Check> statement_;
  std::vector<Check> commit_;
  std::vector<Check> repairs_;
  std::vector<Check> end_;
};

}  // namespace quereus
