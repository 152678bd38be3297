// Function descriptors: built-in and plugin scalar and aggregate functions.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>

#include "quereus/abi.h"
#include "types/value.h"

namespace quereus {

class Collation;
struct ExecContext;

enum FunctionFlags : uint32_t {
  kDeterministic = 1u << 0,  // same as QRS_FUNC_DETERMINISTIC
  kReplicable = 1u << 1,     // same as QRS_FUNC_REPLICABLE
  // Engine-only: reads the row being produced (mutation_ordinal()); deterministic for the
  // schema gate, but never folded to a constant at plan time.
  kPerRow = 1u << 16,
  // Engine-only, on a function registered non-deterministic: it reads the clock or the
  // process time zone only when an argument asks ('now', the 'localtime' modifier), so the schema gate judges each call by its arguments (determinism.md
  // "Strict-mode behaviour": `date('now')` is rejected, `date('2020-01-01')` is not).
  kClockArgs = 1u << 17,
};

using ArgTypes = std::span<const qrs_logical_type>;

// How a write through a view inverts a scalar function (vu-inverses.md, "Scalar
// Invertibility"; plugins declare it through qrs_scalar_function_def since SDK 1.8).
struct Invertibility {
  enum class Kind { kOpaque, kPassthrough, kInverse };
  Kind kind = Kind::kOpaque;
  int arg = 0;          // the argument the result passes through or inverts to
  std::string inverse;  // kInverse: g(v, the other arguments in order) = that argument
};

struct ScalarFunction {
  std::string name;  // lower-case
  int num_args = -1; // -1: variadic
  uint32_t flags = kDeterministic;
  // Throws quereus::Error on failure.
  std::function<Value(std::span<const Value>)> call;
  std::shared_ptr<void> keepalive;  // plugin library / user data

  // Plan-time typing (docs: types-inference): the result type the planner announces is
  // `infer_type(argument types)` when set, else `return_type` (ANY: unknown).
  qrs_logical_type return_type = QRS_LT_ANY;
  std::function<qrs_logical_type(ArgTypes)> infer_type;
  // Plan-time argument gate: false fails planning with "Invalid argument types for
  // function <name>". Unset: every argument type is accepted.
  std::function<bool(ArgTypes)> accepts;
  // Comparison builtins (nullif, greatest, least) compare their arguments as one group,
  // the way `=` would: the planner converts a copy of each argument into a comparison
  // key and resolves one collation. Called instead of `call` with the raw arguments,
  // their keys, and that collation (null: BINARY); returns one of the raw arguments.
  std::function<Value(std::span<const Value> args, std::span<const Value> keys, const Collation* collation)>
      compare_call;
  // A function that reads the statement's run (mutation_ordinal()): called instead of
  // `call` with the arguments and the run's context (an empty one outside a statement).
  std::function<Value(std::span<const Value> args, const ExecContext& ctx)> context_call;
  // Writes through a view: opaque (read-only) unless declared.
  Invertibility invertibility;
  // An access-form recognizer (SDK 1.11; docs/decompositions.md "Auxiliary access"): a
  // WHERE conjunct calling this function with argument `form_column_arg` a column and
  // `form_value_arg` free of the row is a predicate of access form `access_form`.
  std::string access_form;  // lower-case; empty: none
  int form_column_arg = 0;
  int form_value_arg = 1;

  // A function returning one of its arguments verbatim, from this index on (coalesce,
  // ifnull, greatest, least: 0; iif, choose: 1): the planner announces their common type,
  // a NULL literal yielding to the others (types-inference.md "Common type resolution").
  // -1: not such a function.
  int picks_from = -1;

  ScalarFunction& returns(qrs_logical_type t) { return_type = t; return *this; }
  ScalarFunction& picks(int from) { picks_from = from; return *this; }
  ScalarFunction& infers(std::function<qrs_logical_type(ArgTypes)> f) { infer_type = std::move(f); return *this; }
  ScalarFunction& accepting(std::function<bool(ArgTypes)> f) { accepts = std::move(f); return *this; }
  ScalarFunction& comparing(decltype(compare_call) f) { compare_call = std::move(f); return *this; }
};

// Per-group state of an aggregate.
class AggregateState {
 public:
  virtual ~AggregateState() = default;
  virtual void step(std::span<const Value> args) = 0;
  virtual Value final() = 0;
  // The collation of the first argument (null: BINARY), set before the first step by
  // aggregates that compare text (min, max).
  virtual void set_collation(const Collation* /*collation*/) {}
  // The algebra (aggregate-algebra.md; SDK 1.9 for plugins), called only when the
  // function's AggregateAlgebra declares it. `other` is a state of the same function.
  virtual void merge(const AggregateState& /*other*/);
  virtual void negate();
  virtual void decode(const Value& /*stored*/);
};

// What of the algebra an aggregate's states implement: merge folds two states into one
// (a commutative monoid), negate makes a state's group inverse (absent: tighten-only),
// decode rebuilds a state from its stored final value (exact: also under retractions).
struct AggregateAlgebra {
  bool merge = false;
  bool negate = false;
  bool decode = false;
  bool decode_exact = false;
};

struct AggregateFunction {
  std::string name;  // lower-case
  int num_args = -1;
  uint32_t flags = kDeterministic;
  // The declared result type (qrs_logical_type): QRS_LT_ANY when it follows the input
  // (sum, min, max) or is not declared (plugin aggregates).
  uint32_t result_type = 0;
  std::function<std::unique_ptr<AggregateState>()> make_state;
  std::shared_ptr<void> keepalive;
  AggregateAlgebra algebra = {};
};

class DatabaseImpl;
struct ExecContext;

// A table-valued function: fixed output columns, rows produced from its arguments.
struct TableFunctionColumn {
  std::string name;
  uint32_t type = 0;  // qrs_logical_type
  bool nullable = true;
  // What the function's source calls it, when that differs from `name` (read_jsonl: the
  // object key, which may repeat a name in another case or be empty).
  std::string source = {};
};

// A cursor over one call's rows (TableFunction::open).
class TableFunctionCursor {
 public:
  virtual ~TableFunctionCursor() = default;
  virtual bool next(Row& out) = 0;
};

struct TableFunction {
  std::string name;  // lower-case
  int num_args = 0;  // -1: variadic; otherwise the maximum (min_args..num_args accepted)
  int min_args = 0;
  uint32_t flags = kDeterministic;
  std::vector<TableFunctionColumn> columns;
  // Unique keys of one call's rows (output positions): a call never returns two rows
  // equal on one of them. Empty: none known.
  std::vector<std::vector<int>> keys;
  // Produces the rows; throws quereus::Error. `db` is the calling database.
  std::function<std::vector<Row>(DatabaseImpl& db, std::span<const Value> args)> rows;
  // Optional, for output columns that depend on the arguments (read_csv's header): called
  // when a call is planned, with the arguments' values (each argument must then be closed,
  // see planner/scalar_expr.h is_closed); its columns replace `columns` for that call.
  std::function<std::vector<TableFunctionColumn>(DatabaseImpl& db, std::span<const Value> args)> shape;
  // Optional streaming form of `rows` (one row in memory at a time), given the columns the
  // call was planned with and the run's context. Takes precedence over `rows`.
  std::function<std::unique_ptr<TableFunctionCursor>(DatabaseImpl& db, ExecContext& ctx, std::span<const Value> args,
                                                     std::span<const TableFunctionColumn> columns)>
      open;
};

}  // namespace quereus
