// Helpers for the built-in function families: registration shorthands and the
// JavaScript-style value coercions (Number(v), String(v)) the reference's built-ins
// apply to their arguments.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "catalog/registry.h"
#include "catalog/function.h"
#include "types/value.h"

namespace quereus::fnutil {

using Args = std::span<const Value>;

// Pure functions: same result for the same arguments, on every platform.
constexpr uint32_t kPure = kDeterministic | kReplicable;

// Returns the registered function, for its plan-time typing: `.returns(QRS_LT_TEXT)`.
ScalarFunction& add_scalar(Registry& r, const char* name, int argc, std::function<Value(Args)> fn,
                           uint32_t flags = kPure);
// `result`: the declared result type (plan-time typing), QRS_LT_ANY when it follows the input.
void add_aggregate(Registry& r, const char* name, int argc, std::function<std::unique_ptr<AggregateState>()> make,
                   uint32_t flags = kPure, qrs_logical_type result = QRS_LT_ANY);

// Plan-time typing shorthands for registrations (docs: types-inference).
bool numeric_args(ArgTypes types);                 // every argument numeric or unknown
qrs_logical_type first_arg_type(ArgTypes types);   // the result follows argument 0
qrs_logical_type merged_arg_types(ArgTypes types);  // returns one of its arguments verbatim

// JavaScript Number(v): integers, reals and booleans as numbers; text parsed as a whole
// decimal literal after trimming ("" → 0, "Infinity" accepted); NaN otherwise.
double js_number(const Value& v);
// JavaScript String(v) of the reference's native value (reals as JS prints them,
// booleans as true/false, JSON as its canonical text).
std::string js_string(const Value& v);
// A double as the SQL number the reference would hold: INTEGER when integral and within
// ±2^53, else REAL (NaN/Infinity stay REAL).
Value js_number_value(double d);

// UTF-8 code points of `s` (invalid bytes pass through one at a time).
std::vector<std::string> code_points(const std::string& s);

}  // namespace quereus::fnutil
