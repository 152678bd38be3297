// Optimizer: the third stage of the pipeline. Rewrites a bound plan with an ordered
// list of named passes, each of which can be switched off (pragma-style names):
//
//   constant_folding  — folds constant scalar subtrees into literals
//   predicate_pushdown — offers WHERE conjuncts over a table to its module's access
//                        plan; conjuncts the module handles leave the residual filter
//   ordering_by_index — drops a SORT when the module's access path already provides
//                        the order
//   hash_join         — marks BINARY column equalities in a join's ON as hash keys
//
//   planner/ → Optimizer → runtime/
#pragma once

#include <set>
#include <string>

#include "planner/rel_node.h"

namespace quereus {

struct OptimizerOptions {
  std::set<std::string> disabled;  // names of passes to skip
};

class Optimizer {
 public:
  explicit Optimizer(const OptimizerOptions& options) : options_(options) {}
  // Rewrites `root` in place (nodes are not shared with other plans yet) and returns it.
  RelPtr optimize(RelPtr root);

  static const std::vector<std::string>& pass_names();

 private:
  bool enabled(const char* pass) const { return !options_.disabled.count(pass); }
  RelPtr rewrite(RelPtr node);
  // constant_folding: replaces constant subexpressions of the node's own expressions.
  void fold_node_constants(RelNode& node);
  void plan_access(TableScanNode& scan);
  const OptimizerOptions& options_;
};

// Splits a predicate into its AND-ed conjuncts.
void split_conjuncts(const ScalarPtr& e, std::vector<ScalarPtr>& out);

}  // namespace quereus
