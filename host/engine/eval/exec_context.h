// Per-execution state shared by the operators and expressions of one statement run.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "quereus/abi.h"
#include "common/interrupt.h"
#include "eval/memory_budget.h"
#include "types/value.h"

namespace quereus {

namespace io {
struct ReadProgress;
}

class DatabaseImpl;

struct ExecContext {
  DatabaseImpl* db = nullptr;
  const std::vector<Value>* params = nullptr;  // 1-based positions at index-1
  const std::map<std::string, Value>* named_params = nullptr;  // by name, no sigil
  uint64_t generation = 0;                     // bumps per execution (subquery caches)
  // The conflict action of the violation that is ending the statement: FAIL keeps the
  // statement's earlier writes, ROLLBACK also rolls back the enclosing transaction.
  qrs_conflict failed_action = QRS_CONFLICT_ABORT;
  // Database::interrupt() and statement_timeout_ms; long-running loops call
  // interrupt.poll(). Armed by the statement that owns this context.
  InterruptCheck interrupt;
  // Limits::max_length of the database: the largest TEXT or BLOB a function or operator
  // may produce (TOOBIG beyond).
  int64_t max_length = 1'000'000'000;
  // Limits::max_statement_memory: what the rows the operators buffer may hold. Armed by
  // the statement that owns this context (unarmed: unbounded).
  MemoryBudget memory;
  // mutation_ordinal(): the 1-based ordinal of the row an INSERT is producing, set while
  // that row's column defaults are evaluated (vu-mutation-context.md); 0 otherwise.
  int64_t mutation_ordinal = 0;
  // COPY … FROM: where the file being read stands (file, line, rows), kept by the file
  // functions' cursors (main/file_functions.cc) while the statement runs; null otherwise.
  io::ReadProgress* read_progress = nullptr;
};

// Sets the context's mutation ordinal for its lifetime, restoring the enclosing one (a
// nested write, such as a foreign-key action, shares the context and keeps the outer
// row's ordinal afterwards).
class MutationOrdinalScope {
 public:
  MutationOrdinalScope(ExecContext& ctx, int64_t ordinal) : ctx_(ctx), saved_(ctx.mutation_ordinal) {
    ctx.mutation_ordinal = ordinal;
  }
  ~MutationOrdinalScope() { ctx_.mutation_ordinal = saved_; }
  MutationOrdinalScope(const MutationOrdinalScope&) = delete;
  MutationOrdinalScope& operator=(const MutationOrdinalScope&) = delete;

 private:
  ExecContext& ctx_;
  int64_t saved_;
};

// The budget of the context, or null (nothing counted) without one.
inline MemoryBudget* memory_budget(ExecContext* ctx) { return ctx ? &ctx->memory : nullptr; }

// Polls the context's interrupt check when there is a context.
inline void poll_interrupt(ExecContext* ctx) {
  if (ctx) ctx->interrupt.poll();
}

// The row an expression is evaluated against, chained to the enclosing queries' rows
// (for correlated references: level 1 = the immediately enclosing query).
struct EvalEnv {
  const Row* row = nullptr;
  const EvalEnv* outer = nullptr;
  ExecContext* ctx = nullptr;
};

}  // namespace quereus
