// Function descriptors: built-in and plugin scalar and aggregate functions.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>

#include "types/value.h"

namespace quereus {

enum FunctionFlags : uint32_t {
  kDeterministic = 1u << 0,  // same as QRS_FUNC_DETERMINISTIC
  kReplicable = 1u << 1,     // same as QRS_FUNC_REPLICABLE
};

struct ScalarFunction {
  std::string name;  // lower-case
  int num_args = -1; // -1: variadic
  uint32_t flags = kDeterministic;
  // Throws quereus::Error on failure.
  std::function<Value(std::span<const Value>)> call;
  std::shared_ptr<void> keepalive;  // plugin library / user data
};

// Per-group state of an aggregate.
class AggregateState {
 public:
  virtual ~AggregateState() = default;
  virtual void step(std::span<const Value> args) = 0;
  virtual Value final() = 0;
};

struct AggregateFunction {
  std::string name;  // lower-case
  int num_args = -1;
  uint32_t flags = kDeterministic;
  std::function<std::unique_ptr<AggregateState>()> make_state;
  std::shared_ptr<void> keepalive;
};

class DatabaseImpl;

// A table-valued function: fixed output columns, rows produced from its arguments.
struct TableFunctionColumn {
  std::string name;
  uint32_t type = 0;  // qrs_logical_type
  bool nullable = true;
};

struct TableFunction {
  std::string name;  // lower-case
  int num_args = 0;  // -1: variadic; otherwise the maximum (min_args..num_args accepted)
  int min_args = 0;
  uint32_t flags = kDeterministic;
  std::vector<TableFunctionColumn> columns;
  // Produces the rows; throws quereus::Error. `db` is the calling database.
  std::function<std::vector<Row>(DatabaseImpl& db, std::span<const Value> args)> rows;
};

}  // namespace quereus
