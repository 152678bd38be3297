// Optimizer: the third stage of the pipeline. Rewrites a bound plan with an ordered
// list of named passes, each of which can be switched off (pragma-style names):
//
//   constant_folding  — folds constant scalar subtrees into literals
//   predicate_pushdown — moves WHERE / ON conjuncts down through joins (into the side
//                        they read, as NULL-extension allows) and plain-column
//                        projections, then offers them to a table's access plan;
//                        conjuncts the module handles leave the residual filter
//   ordering_by_index — drops a SORT when the module's access path already provides
//                        the order
//   hash_join         — marks BINARY column equalities in a join's ON as hash keys;
//                        the hash table is built on the smaller side
//   join_ordering     — orders the relations of a region of inner joins by estimated
//                        cardinality, connected relations first (join_planning.cc)
//   index_nested_loop — re-opens a table scan per outer row with the join equality
//                        pushed into its access plan, when that costs less
//   subquery_decorrelation — turns EXISTS / IN conjuncts of a filter into semi and
//                        anti joins (decorrelate.h)
//   subquery_cache    — over a whole read-only statement (finish_query): computes the
//                        parts of a re-run plan that read nothing of the rows it is re-run
//                        for once per execution (subquery_cache.h)
//
//   planner/ → Optimizer → runtime/
#pragma once

#include <atomic>
#include <cstdint>
#include <set>
#include <string>

#include "planner/rel_node.h"

namespace quereus {

struct OptimizerOptions {
  std::set<std::string> disabled;  // names of passes to skip
  // pragma module_pushdown (default true). False is the reference mode of the conformance
  // suite (docs/conformance-suite.md): every table is read by a full scan offered no
  // filter, ordering or index — each WHERE conjunct stays a residual filter, each ORDER BY
  // a sort, each join a scan — so a query's answer owes nothing to a module's access plan.
  bool module_pushdown = true;
  // Limits::max_length of the database: constant folding leaves a longer TEXT / BLOB
  // result unfolded, so it fails at run time with TOOBIG.
  int64_t max_length = 1'000'000'000;
  // The database's interrupt flag (may be null) and statement_timeout_ms: folding a
  // constant (a long LIKE over literals, say) stops when either fires, and the expression
  // is left to run time, where the statement's own check ends it.
  const std::atomic<bool>* interrupt = nullptr;
  int64_t timeout_ms = 0;
};

class Optimizer {
 public:
  explicit Optimizer(const OptimizerOptions& options) : options_(options) {}
  // Rewrites `root` in place (nodes are not shared with other plans yet) and returns it.
  RelPtr optimize(RelPtr root);
  // The passes over the optimized plan of a whole statement that writes nothing, its
  // subqueries' plans included (subquery_cache); after optimize() on the statement's root,
  // never on a part of one. Rewrites `root` in place and returns it.
  RelPtr finish_query(RelPtr root);

  static const std::vector<std::string>& pass_names();

 private:
  bool enabled(const char* pass) const { return !options_.disabled.count(pass); }
  RelPtr rewrite(RelPtr node);
  RelPtr eliminate_left_joins(RelPtr input, const std::vector<ScalarPtr>& reads, bool under_distinct = false);
  // constant_folding: replaces constant subexpressions of the node's own expressions.
  void fold_node_constants(RelNode& node);
  void plan_access(TableScanNode& scan);
  // predicate_pushdown (with join_ordering and the join algorithms, join_planning.cc):
  // returns a plan equal to `node` filtered by `conjuncts` (predicates over its output),
  // with `node` rewritten and each conjunct placed as far down as is sound.
  RelPtr push_down(RelPtr node, std::vector<ScalarPtr> conjuncts);
  RelPtr push_into_scan(RelPtr scan, std::vector<ScalarPtr> conjuncts);
  RelPtr plan_inner_joins(RelPtr top, std::vector<ScalarPtr> conjuncts);
  RelPtr plan_outer_join(RelPtr join, std::vector<ScalarPtr> conjuncts);
  // hash_join / index_nested_loop: how `join` finds the partners of a row.
  void choose_join_algorithm(JoinNode& join);
  bool use_index_lookup(JoinNode& join);
  const OptimizerOptions& options_;
};

// `input` filtered by the AND of `conjuncts`; `input` itself when there are none.
RelPtr filter_over(RelPtr input, std::vector<ScalarPtr> conjuncts);

// `node`, an optimized plan, filtered by `conjuncts` (WHERE conjuncts over its row that
// read it by slot, such as a correlated subquery): each one that reads one side of a join
// there alone (an inner join's side, an outer join's preserved side) filters that side,
// in the join's row layout, so it runs once per row of that side instead of once per
// joined row; the rest filter `node`. Deterministic conjuncts only (row_slots_read).
RelPtr filter_sunk(RelPtr node, std::vector<ScalarPtr> conjuncts);

// The estimated number of rows a plan yields (planned scans answer with their module's
// estimate; operators scale their inputs by fixed selectivities).
double estimate_rows(const RelNode& n);
// The access-plan request for a scan's pushed filters and requested ordering.
PlanRequest access_request(const TableScanNode& scan);
// Replaces the scan's plan with a plan through one of its table's secondary indexes when
// one is cheaper (sets scan.index, index_filters, index_plan).
void consider_indexes(TableScanNode& scan);

}  // namespace quereus
