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

  size_t mark() const { return commit_.size(); }
  void rollback_to(size_t mark) {
    if (mark < commit_.size()) commit_.resize(mark);
  }
  void clear_statement() { statement_.clear(); }
  void clear() {
    statement_.clear();
    commit_.clear();
  }

  // Run (and drop) the statement-end / commit checks; the first failure throws.
  void run_statement_end(TransactionContext& db) { run(db, statement_); }
  void run_commit(TransactionContext& db) { run(db, commit_); }

 private:
  static void run(TransactionContext& db, std::vector<Check>& checks);

  std::vector<Check> statement_;
  std::vector<Check> commit_;
};

}  // namespace quereus
