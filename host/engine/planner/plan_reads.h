// What a plan or an expression reads besides its own rows: the enclosing rows (frames) it
// reaches, the columns of each, and whether it calls something whose answer may change
// from one evaluation to the next. The planner asks it when it binds a subquery (one over
// random() runs per evaluation); the optimizer's decorrelation and subquery_cache passes
// build on it.
#pragma once

#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "planner/rel_node.h"

namespace quereus {

inline bool is_subquery(ScalarKind k) {
  return k == ScalarKind::kInSubquery || k == ScalarKind::kExists || k == ScalarKind::kSubquery;
}

// The frames an expression or plan reads, relative to a starting frame: 0 is the row the
// expression is evaluated on, 1 the enclosing query's row, and so on. `unknown` is set on
// a plan node this pass does not know (it then declines).
struct FrameRefs {
  std::set<int> frames;
  std::set<int> row_slots;  // the columns of the starting frame's row that are read
  std::set<std::pair<int, int>> columns;  // every (frame, slot) read at or above the start
  bool unknown = false;
  bool nondeterministic = false;  // calls a function that is not deterministic
  // For plan_reads (the subquery_cache pass); decorrelation does not read them.
  bool per_row = false;            // a per-row function or a non-deterministic table function
  bool volatile_call = false;      // a non-deterministic call that may differ call to call
  bool working_table = false;      // a recursive CTE's working table: new rows each iteration
  bool correlated_subquery = false;  // a subquery re-run for each row it is evaluated on
  bool reads(int frame) const { return frames.count(frame) > 0; }
};

// Adds what `e` (evaluated `shift` frames deeper than the starting frame) or the plan `n`
// reads to `out`.
void collect_reads(const ScalarPtr& e, int shift, FrameRefs& out);
void collect_reads(const RelNode& n, int shift, FrameRefs& out);
FrameRefs frames_of(const ScalarPtr& e);

// What a plan reads besides its own rows (the subquery_cache pass, subquery_cache.h).
struct PlanReads {
  bool outer = false;              // a row of the frames it is opened under: correlated
  bool unknown = false;            // a node the walk does not know (a DML relation, …)
  bool nondeterministic = false;   // a non-deterministic or per-row function, or table function
  // Rows that may differ from one run to the next: a call that may (random(), a clock
  // function given 'now'; not `date(d)` over a DATE column), a per-row function or a
  // non-deterministic table function.
  bool volatile_rows = false;
  bool working_table = false;      // a recursive CTE's working table (other rows each iteration)
  bool correlated_subquery = false;  // a subquery re-run for each row it is evaluated on
};
PlanReads plan_reads(const RelNode& n);

// The columns a subquery's plan reads from the rows it is evaluated under, as (frame, slot):
// frame 0 is the row the subquery expression is evaluated on, 1 that row's outer row, and
// so on. Nullopt when equal inputs may still give other rows: a non-deterministic or
// per-row function or table function, a recursive CTE's working table, a node the walk
// does not know (a DML relation).
std::optional<std::vector<std::pair<int, int>>> correlation_inputs(const RelNode& plan);

// The slots of the row `e` is evaluated on that it reads, the correlated references of its
// subqueries (at any depth) included. False, with `slots` unspecified, when that is not
// known (a plan node the walk does not know) or `e` calls a non-deterministic function.
bool row_slots_read(const ScalarPtr& e, std::vector<int>& slots);

}  // namespace quereus
