// Parameter types: the type a prepared statement's parameter is planned with and that
// every execution checks the bound value against (docs/sql-dialect.md, "Parameter types").
// Part of the embedding API (main/database.h); the planner types parameters with them.
#pragma once

#include <map>
#include <span>
#include <string>

#include "quereus/abi.h"
#include "types/value.h"

namespace quereus {

// ANY, the type of a parameter nobody declared, accepts every value.
struct ParamType {
  qrs_logical_type type = QRS_LT_ANY;
  bool nullable = true;
};

struct ParamTypes {
  std::map<int, ParamType> positional;      // by 1-based index
  std::map<std::string, ParamType> named;   // by name without its sigil (":x" -> "x")

  // The types of example values: INTEGER (also beyond int64), REAL, TEXT, BLOB, BOOLEAN,
  // JSON; a NULL example gives a nullable ANY.
  static ParamTypes from_values(std::span<const Value> positional, const std::map<std::string, Value>& named = {});
};

// Whether `v` may be bound to a parameter of type `t`: its physical type must fit (INTEGER
// takes integers; REAL and NUMERIC any number; TEXT and the temporal types text; BLOB,
// BOOLEAN and JSON their own), and NULL only when nullable. Sets *why when it may not.
bool value_fits_param(const Value& v, const ParamType& t, std::string* why);

}  // namespace quereus
