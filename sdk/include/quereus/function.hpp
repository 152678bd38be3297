// quereus/function.hpp — the C++ shapes of plugin functions and collations.
//
// Register them with Registrar::add_scalar / add_aggregate / add_collation. Flags are the
// QRS_FUNC_* and QRS_COLLATION_* bits of abi.h; a function flagged QRS_FUNC_REPLICABLE
// must give bit-identical results on every platform and version (no locale, no clock, no
// platform-dependent float formatting), because synced peers compare its results.
#ifndef QUEREUS_FUNCTION_HPP_
#define QUEREUS_FUNCTION_HPP_

#include <functional>
#include <memory>
#include <span>
#include <string_view>

#include "quereus/error.hpp"
#include "quereus/value.hpp"

namespace quereus::sdk {

// A scalar function: arguments in, one value out. Throw Error to fail the statement
// (e.g. Error::mismatch for a bad argument type). Called concurrently from several
// threads: the callable must be thread-safe (a pure function is).
using ScalarFunction = std::function<Value(std::span<const Value> args)>;

// How a write through a view inverts a scalar function (abi.h, QRS_INVERT_*; SDK 1.8).
// Pass one to Registrar::add_scalar:
//   Invertibility::passthrough(0)            label(x, 'tag') is x in value
//   Invertibility::inverse(0, "from_cents")  to_cents(x) = v  ⇔  x = from_cents(v)
// The default is opaque: a view column over the function is read-only.
struct Invertibility {
  uint32_t kind = QRS_INVERT_OPAQUE;
  int32_t arg = 0;
  std::string_view inverse;  // INVERSE: the inverse function's name (must outlive the call)

  static Invertibility opaque() { return {}; }
  static Invertibility passthrough(int32_t arg) { return {QRS_INVERT_PASSTHROUGH, arg, {}}; }
  static Invertibility inverse_by(int32_t arg, std::string_view fn) { return {QRS_INVERT_INVERSE, arg, fn}; }
};

// An access-form recognizer (SDK 1.11, abi.h qrs_scalar_function_def.access_form): a
// WHERE conjunct `fn(…)` whose argument `column_arg` is a column and `value_arg` free of
// the row is a predicate of access form `form` over that column, e.g.
//   AccessFormCall{"contains", 0, 1}   trigram_match(body, 'abc') — "body contains 'abc'"
// The engine offers it to the column's table as a FilterOp::kForm filter and routes reads
// of a logical table through an auxiliary that advertises the form. The function must be
// true exactly for the rows the module's form filter admits.
struct AccessFormCall {
  std::string_view form;  // empty: the function is no recognizer (must outlive the call)
  int32_t column_arg = 0;
  int32_t value_arg = 1;
};

// The state of one aggregate group. step folds one row's arguments, finish returns the
// result (it may be called once, after the last step; the state is destroyed afterwards).
// Thread safety: one state is used by one thread at a time.
class Aggregate {
 public:
  Aggregate() = default;
  Aggregate(const Aggregate&) = delete;
  Aggregate& operator=(const Aggregate&) = delete;
  virtual ~Aggregate() = default;

  virtual void step(std::span<const Value> args) = 0;
  virtual Value finish() = 0;

  // SDK 1.9, the aggregate's algebra (docs/sdk.md "Aggregate algebra"; the laws are in
  // abi.h at qrs_aggregate_function_def). Called only when declared in the
  // AggregateAlgebra passed to Registrar::add_aggregate; finish() may then be called more
  // than once. `other` is a state the same factory made.
  virtual void merge(const Aggregate& /*other*/) { throw Error::unsupported("aggregate merge not implemented"); }
  virtual void negate() { throw Error::unsupported("aggregate negate not implemented"); }
  virtual void decode(const Value& /*stored*/) { throw Error::unsupported("aggregate decode not implemented"); }
};

// What of the algebra an aggregate implements (SDK 1.9). negate and decode need merge.
struct AggregateAlgebra {
  bool merge = false;
  bool negate = false;
  bool decode = false;
  bool decode_exact = false;  // decode holds under retractions too (count's does, sum's not)
};

// Makes a fresh state per group. Must be thread-safe and never return nullptr.
using AggregateFactory = std::function<std::unique_ptr<Aggregate>()>;

// A collation: <0, 0, >0 like memcmp over UTF-8 text. It must be a total order, pure,
// thread-safe and must not throw (if it throws, the SDK answers with BINARY order for that
// call, which breaks the total order: treat a throw as a bug).
using CollationFunction = std::function<int(std::string_view a, std::string_view b)>;

}  // namespace quereus::sdk

#endif  // QUEREUS_FUNCTION_HPP_
