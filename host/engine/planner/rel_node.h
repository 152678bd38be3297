// Relational plan nodes. The planner builds them from the AST, the optimizer
// rewrites them (optimizer/), and each one instantiates its runtime Operator
// (runtime/operators.cc). Nodes are immutable once optimized; per-execution state
// lives in the Operator.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "planner/scalar_expr.h"
#include "eval/exec_context.h"
#include "catalog/module.h"

namespace quereus {

struct TableEntry;

// One output column of a node. `id` is minted once by the planner and forwarded by
// nodes that pass the column through.
struct Attribute {
  int id = 0;
  std::string name;
  qrs_logical_type type = QRS_LT_ANY;
  const Collation* collation = nullptr;
  CollationSource collation_source = CollationSource::kDefault;
  bool nullable = true;
};

enum class RelKind {
  kTableScan, kValues, kSingleRow, kFilter, kProject, kJoin, kAggregate, kSort, kLimit,
  kDistinct, kSetOp, kWorkingTable, kRecursiveCte, kWindow, kTableFunction, kSemiJoin,
  kCache,  // CacheNode: made by the optimizer's subquery_cache pass
  kDml,  // DmlRelNode; its run and operator in write/dml_relation.h
  kTrace,  // runtime/execution_trace.h TraceNode: only in an instrumented copy of a plan,
           // which the runtime alone sees (no optimizer pass or listing walks one)
};

// A stateful iterator over one execution of a plan node.
class Operator {
 public:
  virtual ~Operator() = default;
  // (Re)starts the iteration. `outer` is the environment of the enclosing query
  // (null at top level); correlated expressions read it.
  virtual void open(const EvalEnv& outer) = 0;
  // Produces the next row into `out`; false when exhausted.
  virtual bool next(Row& out) = 0;
};

class RelNode {
 public:
  explicit RelNode(RelKind k) : kind(k) {}
  virtual ~RelNode() = default;
  virtual std::unique_ptr<Operator> instantiate() const = 0;
  // One line describing this node for query plans ("SCAN main.t (pk eq seek)").
  virtual std::string describe() const = 0;
  virtual std::vector<const RelNode*> children() const { return {}; }

  RelKind kind;
  std::vector<Attribute> columns;
  // Unique keys: each a set of output column positions whose values identify a row.
  // An empty key ([]) means at most one row. Sound but not complete.
  std::vector<std::vector<int>> keys;
};
using RelPtr = std::shared_ptr<RelNode>;

// A filter pushed into a table access: column op value(s).
struct PushedFilter {
  int column = 0;
  qrs_filter_op op = QRS_OP_EQ;
  ScalarPtr value;               // EQ/GT/GE/LT/LE
  std::vector<ScalarPtr> in_list;  // IN
  // IN over an uncorrelated subquery (`column IN (select …)`): the SubqueryScalar whose
  // member values, computed once per execution, are the IN list at open.
  ScalarPtr in_subquery;
  // QRS_OP_FORM (SDK 1.11, planner/access_forms.h): the form's name, `value` its argument,
  // and the conjunct it was read from.
  std::string form;
  ScalarPtr form_source;
};

struct TableScanNode : RelNode {
  TableScanNode() : RelNode(RelKind::kTableScan) {}
  std::unique_ptr<Operator> instantiate() const override;
  std::string describe() const override;
  std::shared_ptr<TableEntry> table;
  std::vector<PushedFilter> filters;  // offered to the module
  std::vector<OrderSpec> ordering;    // requested
  PlanResult plan;                    // the module's answer (for the whole scan)
  bool planned = false;
  // Read through a secondary index: schema.indexes[index]'s companion table is scanned
  // with the filters `index_filters` names (mapped onto the index columns) under
  // `index_plan`, and each entry's row is fetched by primary key. -1: the table itself.
  int index = -1;
  std::vector<int> index_filters;
  PlanResult index_plan;
  bool read_committed = false;        // committed.<table>: the last committed state
};

struct ValuesNode : RelNode {
  ValuesNode() : RelNode(RelKind::kValues) {}
  std::unique_ptr<Operator> instantiate() const override;
  std::string describe() const override { return "VALUES (" + std::to_string(rows.size()) + " rows)"; }
  std::vector<std::vector<ScalarPtr>> rows;
};

struct SingleRowNode : RelNode {
  SingleRowNode() : RelNode(RelKind::kSingleRow) { keys.push_back({}); }
  std::unique_ptr<Operator> instantiate() const override;
  std::string describe() const override { return "SINGLE ROW"; }
};

struct FilterNode : RelNode {
  FilterNode() : RelNode(RelKind::kFilter) {}
  std::unique_ptr<Operator> instantiate() const override;
  std::string describe() const override { return "FILTER"; }
  std::vector<const RelNode*> children() const override { return {input.get()}; }
  RelPtr input;
  ScalarPtr predicate;
};

struct ProjectNode : RelNode {
  ProjectNode() : RelNode(RelKind::kProject) {}
  std::unique_ptr<Operator> instantiate() const override;
  std::string describe() const override { return "PROJECT"; }
  std::vector<const RelNode*> children() const override { return {input.get()}; }
  RelPtr input;
  std::vector<ScalarPtr> exprs;
};

struct JoinNode : RelNode {
  JoinNode() : RelNode(RelKind::kJoin) {}
  std::unique_ptr<Operator> instantiate() const override;
  std::string describe() const override;
  std::vector<const RelNode*> children() const override { return {left.get(), right.get()}; }
  ast::JoinKind join = ast::JoinKind::kInner;
  RelPtr left, right;
  ScalarPtr on;  // over the concatenated row; may be null
  // Set by the optimizer's hash_join pass: (left slot, right slot) pairs of BINARY
  // equalities in ON. The operator then probes a hash table instead of looping; ON is
  // still evaluated on each candidate pair.
  std::vector<std::pair<int, int>> equi_keys;
  // hash_join on an inner join: hash the left rows and stream the right ones (the left
  // side is estimated much smaller). Output rows then come in right-side order.
  bool build_left = false;
  // index_nested_loop (inner and left joins): `right` (a table scan, possibly under its
  // residual filter and a projection) is re-opened per left row with the left row at
  // level 1, as a correlated subquery is; its scan seeks on a level-1 column. ON is still
  // evaluated on each pair.
  bool index_lookup = false;
  // JOIN LATERAL: `right` reads the left row (level 1) and always runs as index_lookup
  // does; never flattened into a join-ordering region nor hashed.
  bool lateral = false;
  // Existence flags (`… on … exists right as hasB`): one NOT NULL boolean column per
  // entry, appended after both sides' columns in this order. A flag is true when its
  // side took part in the row and false on a row null-extended on that side. Derived
  // from the match itself, never from re-evaluating ON; never part of a key.
  enum class Side { kLeft, kRight };
  std::vector<Side> existence;
};

// A semi join (each left row that has a match on the right, once) or an anti join (each
// left row that has none). Made by the optimizer's subquery_decorrelation pass from
// EXISTS / IN conjuncts of a WHERE; outputs the left row only, so it never duplicates a
// row. Not a JoinNode: its output is not the concatenation of its sides.
//
// `on` and the key expressions are evaluated in the subquery's own frame: level 0 is the
// right row, level 1 the left row (followed by `probes`), level 2 on the join's outer
// rows. `right` is opened once per open of the join with an empty row standing at level 1,
// so it may read the outer rows (level 2 on) but never the left row.
struct SemiJoinNode : RelNode {
  SemiJoinNode() : RelNode(RelKind::kSemiJoin) {}
  std::unique_ptr<Operator> instantiate() const override;
  std::string describe() const override;
  std::vector<const RelNode*> children() const override { return {left.get(), right.get()}; }
  bool anti = false;
  RelPtr left, right;
  // Evaluated over each left row (level 0 = the left row); `on` reads them at left slots
  // n, n + 1, … where n is the left width (an IN's probe operand).
  std::vector<ScalarPtr> probes;
  ScalarPtr on;  // may be null: any right row matches
  // Hash keys: pairs of expressions equal under BINARY whenever `on` holds — `left` reads
  // only the left row and outer rows, `right` only the right row and outer rows. The
  // right rows are hashed once; `on` is still evaluated on each candidate.
  struct Key {
    ScalarPtr left, right;
  };
  std::vector<Key> equi;
  // NOT IN: the index in `equi` of the membership key. A NULL on either side of it may
  // still satisfy `on` (`x IS NULL OR y IS NULL OR x = y`), so such rows are candidates
  // for every probe. -1 for other joins.
  int null_aware_key = -1;
  // `right` reads no outer row: its rows are computed once per statement execution.
  bool right_constant = false;
};

struct AggregateCall {
  const AggregateFunction* fn = nullptr;
  std::vector<ScalarPtr> args;
  bool distinct = false;
  bool star = false;
};

struct AggregateNode : RelNode {
  AggregateNode() : RelNode(RelKind::kAggregate) {}
  std::unique_ptr<Operator> instantiate() const override;
  std::string describe() const override { return "AGGREGATE"; }
  std::vector<const RelNode*> children() const override { return {input.get()}; }
  RelPtr input;
  std::vector<ScalarPtr> group_by;    // output slots [0, n)
  std::vector<AggregateCall> aggs;    // output slots [n, n + m)
};

struct SortKey {
  ScalarPtr expr;
  bool desc = false;
  bool nulls_first = true;  // the engine's default: NULLs first in both directions
};

struct SortNode : RelNode {
  SortNode() : RelNode(RelKind::kSort) {}
  std::unique_ptr<Operator> instantiate() const override;
  std::string describe() const override { return "SORT"; }
  std::vector<const RelNode*> children() const override { return {input.get()}; }
  RelPtr input;
  std::vector<SortKey> sort_keys;
};

struct LimitNode : RelNode {
  LimitNode() : RelNode(RelKind::kLimit) {}
  std::unique_ptr<Operator> instantiate() const override;
  std::string describe() const override { return "LIMIT"; }
  std::vector<const RelNode*> children() const override { return {input.get()}; }
  RelPtr input;
  ScalarPtr limit, offset;  // either may be null
};

struct DistinctNode : RelNode {
  DistinctNode() : RelNode(RelKind::kDistinct) {}
  std::unique_ptr<Operator> instantiate() const override;
  std::string describe() const override { return "DISTINCT"; }
  std::vector<const RelNode*> children() const override { return {input.get()}; }
  RelPtr input;
};

struct SetOpNode : RelNode {
  SetOpNode() : RelNode(RelKind::kSetOp) {}
  std::unique_ptr<Operator> instantiate() const override;
  std::string describe() const override;
  std::vector<const RelNode*> children() const override { return {left.get(), right.get()}; }
  ast::CompoundOp op = ast::CompoundOp::kUnion;
  RelPtr left, right;
  // Membership flags (`union exists left as inA …`): one NOT NULL boolean column per
  // entry, appended after the data columns; true when the row is a member of that
  // operand. Never part of the de-duplication.
  std::vector<JoinNode::Side> membership;
};

// The rows of the previous iteration of a recursive CTE, read by its recursive term.
struct WorkingTableNode : RelNode {
  WorkingTableNode() : RelNode(RelKind::kWorkingTable) {}
  std::unique_ptr<Operator> instantiate() const override;
  std::string describe() const override { return "WORKING TABLE " + name; }
  std::string name;
  std::shared_ptr<std::vector<Row>> rows;  // filled by the RecursiveCteNode per iteration
  // A row set bound for a whole execution (Planner::bind_rows: a view write's captures),
  // not a recursive CTE's changing iteration: readers may index it once per execution.
  bool bound = false;
};

// WITH RECURSIVE: runs `initial`, then `recursive` over the previous iteration's rows
// until an iteration adds nothing. UNION (not ALL) drops rows already produced.
struct RecursiveCteNode : RelNode {
  RecursiveCteNode() : RelNode(RelKind::kRecursiveCte) {}
  std::unique_ptr<Operator> instantiate() const override;
  std::string describe() const override { return "RECURSIVE CTE " + name; }
  std::vector<const RelNode*> children() const override { return {initial.get(), recursive.get()}; }
  std::string name;
  bool union_all = true;
  // Iterations of the recursive term before the statement fails: the engine's bound, or the
  // WITH clause's OPTION (MAXRECURSION n) (0: no bound).
  static constexpr int64_t kDefaultMaxIterations = 1000000;
  int64_t max_iterations = kDefaultMaxIterations;
  bool explicit_limit = false;
  RelPtr initial, recursive;
  std::shared_ptr<std::vector<Row>> working;  // shared with the WorkingTableNode
};

// One window function call: fn(args) OVER (PARTITION BY … ORDER BY … frame).
struct WindowCall {
  std::string name;                          // lower-case
  const AggregateFunction* aggregate = nullptr;  // aggregate used as a window function
  std::vector<ScalarPtr> args;
  bool distinct = false;
  std::vector<ScalarPtr> partition_by;
  std::vector<SortKey> order_by;
  bool has_frame = false;
  int unit = 0;  // ast::WindowFrame::Unit
  int start_kind = 0, end_kind = 2;  // ast::FrameBound::Kind
  ScalarPtr start_offset, end_offset;
  int exclude = 0;  // ast::WindowFrame::Exclude
};

// Appends one column per window call to its input rows. Rows come out in the order
// of the first call's (partition, order) sort.
struct WindowNode : RelNode {
  WindowNode() : RelNode(RelKind::kWindow) {}
  std::unique_ptr<Operator> instantiate() const override;
  std::string describe() const override { return "WINDOW (" + std::to_string(calls.size()) + " functions)"; }
  std::vector<const RelNode*> children() const override { return {input.get()}; }
  RelPtr input;
  std::vector<WindowCall> calls;
};

// A table-valued function call in FROM.
struct TableFunctionNode : RelNode {
  TableFunctionNode() : RelNode(RelKind::kTableFunction) {}
  std::unique_ptr<Operator> instantiate() const override;
  std::string describe() const override { return "TABLE FUNCTION " + fn->name; }
  const TableFunction* fn = nullptr;
  std::vector<ScalarPtr> args;
  // The call's output columns: fn->columns, or what fn->shape returned at plan time.
  std::vector<TableFunctionColumn> shape;
};

// The rows of one common table expression for one statement execution, shared by the
// CacheNode of every reference to it (see CacheNode::shared).
struct SharedRows {
  uint64_t generation = 0;  // the ExecContext generation `rows` belong to
  bool complete = false;    // `rows` holds all of that execution's rows
  bool too_large = false;   // past the cache's bounds: each reference runs its own input
  std::vector<Row> rows;
};

// The rows of `input`, computed once per statement execution and replayed by every later
// open of the node in that execution (optimizer/subquery_cache.h places it over a subtree
// of a re-run plan — a correlated subquery's, an inner side re-opened per outer row — that
// reads nothing of the rows it is re-run for). The input runs only as far as its readers
// have read; a reader past the rows kept so far continues it. Too many rows to keep (see
// the operator) and the node falls back to re-running its input at every open.
//
// With `shared` set (the planner puts one over each reference of a CTE named more than
// once, or hinted MATERIALIZED: sql-select.md 3.7, "results are cached if accessed more
// than once"), the rows belong to every CacheNode holding that buffer: the first of them
// opened in an execution runs its input to the end, and all of them replay those rows, so
// the references agree even over a non-deterministic body. The optimizer moves no
// predicate below such a node.
struct CacheNode : RelNode {
  CacheNode() : RelNode(RelKind::kCache) {}
  std::unique_ptr<Operator> instantiate() const override;
  std::string describe() const override { return shared ? "CACHE (shared)" : "CACHE"; }
  std::vector<const RelNode*> children() const override { return {input.get()}; }
  RelPtr input;
  std::shared_ptr<SharedRows> shared;
};

// A data-modifying statement used as a relation (write/dml_relation.h): reads the
// RETURNING rows of its one run, which every reference shares.
struct DmlRun;
struct DmlRelNode : RelNode {
  DmlRelNode() : RelNode(RelKind::kDml) {}
  std::unique_ptr<Operator> instantiate() const override;
  std::string describe() const override;
  std::shared_ptr<DmlRun> run;
};

// Renders the plan tree, one node per line, indented by depth.
std::string explain_plan(const RelNode& root);

// Calls `fn` on each expression `n` evaluates itself (not its inputs'), with how many
// frames below `n`'s own row it runs: 1 for a semi join's condition and keys (evaluated
// against the right row), 0 for the rest.
void for_each_expression(const RelNode& n, const std::function<void(const ScalarPtr&, int)>& fn);

// The expressions of for_each_expression, listed (query_plan()'s scalar rows).
std::vector<const ScalarExpr*> node_expressions(const RelNode& n);

// Whether running `n` writes: a data-modifying statement used as a relation, in the tree
// or in a subquery one of its expressions runs.
bool plan_writes(const RelNode& n);

}  // namespace quereus
