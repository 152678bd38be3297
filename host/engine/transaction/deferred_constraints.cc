// The deferred-constraint queue (see deferred_constraints.h).
#include "transaction/deferred_constraints.h"

#include <spdlog/spdlog.h>

#include "transaction/transaction_context.h"
#include "eval/exec_context.h"

namespace quereus {

void DeferredConstraints::run(TransactionContext& db, std::vector<Check>& checks) {
  if (checks.empty()) return;
  std::vector<Check> todo;
  todo.swap(checks);
  // A fresh execution: subqueries in the checks read the state as it is now.
  ExecContext ctx;
  db.open_execution(ctx);
  for (auto& check : todo) check(ctx);
}

void DeferredConstraints::run_repairs(TransactionContext& db) { run_repairs(db, repairs_); }

namespace {

// Runs each of `work` in one fresh execution, logging (never throwing) a failure as `what`.
void run_logged(TransactionContext& db, std::vector<DeferredConstraints::Check>& work, const char* what) {
  if (work.empty()) return;
  ExecContext ctx;
  db.open_execution(ctx);
  for (auto& w : work) {
    try {
      w(ctx);
    } catch (const std::exception& e) {
      spdlog::error("{} failed: {}", what, e.what());
    }
  }
}

}  // namespace

void DeferredConstraints::run_end(TransactionContext& db, std::vector<Check>& work) {
  run_logged(db, work, "work at the end of a transaction");
}

void DeferredConstraints::run_repairs(TransactionContext& db, std::vector<Check>& repairs) {
  run_logged(db, repairs, "repair after a rollback");
}

}  // namespace quereus
