// A data-modifying statement used as a relation: `insert … returning …` (or UPDATE /
// DELETE) as a CTE body, a FROM source, a scalar / IN / EXISTS subquery, a compound leg
// or an INSERT source (sql-dml.md, DML in expression positions).
//
// The write runs exactly once per statement execution, to completion (every RETURNING
// row is drained before the first is handed up), and every reference — a CTE named
// twice, a correlated subquery re-opened per outer row — replays the one buffer.
#pragma once

#include <memory>
#include <vector>

#include "runtime/executable.h"
#include "planner/rel_node.h"

namespace quereus {

// One DML relation's statement and its RETURNING rows for the current execution, shared
// by every plan node that reads it (DmlRelNode, planner/rel_node.h).
struct DmlRun {
  std::shared_ptr<Executable> exec;
  const char* verb = "INSERT";
  bool ran = false;
  uint64_t generation = 0;  // the ExecContext generation the rows belong to
  std::vector<Row> rows;
  // Runs the statement unless it already ran in this execution.
  void ensure(ExecContext& ctx);
};

// Runs the DML members of a statement's own leading WITH clause, in order, before the
// statement's body reads anything (each runs once, referenced or not).
void run_dml_prelude(const std::vector<std::shared_ptr<DmlRun>>& runs, ExecContext& ctx);

}  // namespace quereus
