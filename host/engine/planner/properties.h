// Relational properties of plan nodes: functional dependencies, equivalence classes and
// constant bindings over a node's output columns (reference: optimizer-fd.md).
//
// derive_properties() computes them bottom-up from a finished plan. Every claim is sound
// (never over-claimed): equalities count only when they discriminate values (BINARY or
// non-text comparison, no semantic-ordering type such as TIMESPAN across columns), a
// fanning join downgrades the fanned side's uniqueness, and outer joins drop the
// null-padded side's facts. Later features (view updateability, lens proving, MV
// maintenance) read these; query_plan() shows them in its `properties` column.
#pragma once

#include <string>
#include <vector>

#include "planner/rel_node.h"

namespace quereus {

struct FunctionalDependency {
  // `kUnique`: at most one row per determinant tuple (a key). `kDetermination`: only the
  // value claim — rows agreeing on the determinants agree on the dependents.
  enum class Kind { kUnique, kDetermination };
  std::vector<int> determinants;  // output positions; empty: constant (∅ → dependents)
  std::vector<int> dependents;
  Kind kind = Kind::kDetermination;
};

// A column (and its equivalence-class peers) pinned to one value for every row.
struct ConstantBinding {
  std::vector<int> columns;
  Value value;         // the literal, when !parameter
  int parameter = 0;   // 1-based positional parameter, when parameter
  std::string parameter_name;
  bool is_parameter = false;
};

struct RelProperties {
  std::vector<FunctionalDependency> fds;
  std::vector<std::vector<int>> equivalence_classes;  // each sorted, size >= 2
  std::vector<ConstantBinding> constants;
  bool is_set = false;  // no duplicate rows (all columns together are a key)

  // The columns reachable from `cols` through the FDs and equivalence classes.
  std::vector<int> closure(std::vector<int> cols) const;
  // True when `cols` identify at most one row: their closure covers the determinants
  // of a unique FD (or all columns when is_set).
  bool is_unique(const std::vector<int>& cols, size_t column_count) const;
  // A compact JSON rendering for query_plan().properties.
  std::string to_json() const;
};

RelProperties derive_properties(const RelNode& node);
// True when each row of the join's left side meets at most one row of its right side:
// the ON's value-discriminating equalities (and pins) cover a key of the right side.
bool left_meets_at_most_one(const JoinNode& j);
// The same over the match relation: every outer join counted as an inner join (the rows
// where both sides took part). For pairwise questions about what one side's row meets of
// another's ("joins at most one"), which padding does not change.
RelProperties derive_match_properties(const RelNode& node);

}  // namespace quereus
