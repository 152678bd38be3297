// The deferred-constraint queue (see deferred_constraints.h).
#include "transaction/deferred_constraints.h"

#include "main/database_impl.h"
#include "eval/exec_context.h"

namespace quereus {

void DeferredConstraints::run(DatabaseImpl& db, std::vector<Check>& checks) {
  if (checks.empty()) return;
  std::vector<Check> todo;
  todo.swap(checks);
  // A fresh execution: subqueries in the checks read the state as it is now.
  ExecContext ctx;
  ctx.db = &db;
  ctx.generation = db.next_generation();
  for (auto& check : todo) check(ctx);
}

}  // namespace quereus
