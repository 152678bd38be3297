// Integers outside int64: the arithmetic, conversions and exact comparisons behind
// ValueType::kBigInt (types/value.h). Values go in and come out canonical: an integer
// that fits int64 is always a plain kInteger, and a kBigInt is always outside int64.
//
// The int64 paths never come here except on overflow; big_int.cc does the work with
// boost::multiprecision::cpp_int, which this header keeps out of its includers.
#pragma once

#include <memory>
#include <string_view>

#include "types/value.h"

namespace quereus::bigint {

// The canonical integer spelled by decimal `digits` (leading zeros allowed).
// REQUIRES: digits is non-empty and all '0'..'9'.
Value from_digits(bool negative, std::string_view digits);

// The exact integer of a finite double, truncated toward zero (1e20 → 100000000000000000000).
// REQUIRES: std::isfinite(d).
Value from_double(double d);

// Exact arithmetic over integer operands (kInteger, kBigInt or kBoolean as 0/1).
// op: '+', '-', '*', '/' (truncating toward zero) or '%' (sign of the dividend).
// Division and remainder by zero yield NULL.
Value arith(char op, const Value& a, const Value& b);
Value negate(const Value& a);  // REQUIRES: an integer operand
Value abs(const Value& a);     // REQUIRES: an integer operand

// Exact order of two integer operands, at least one of which may be big.
int compare(const Value& a, const Value& b);
// Exact order of an integer against a double: NaN sorts first, ±Infinity beyond every
// integer. Never rounds the integer through double.
int compare_real(const Value& a, double d);

// For a kBigInt: true when some double equals it exactly (then *d holds that double).
bool exact_double(const Value& big, double* d);

// A running exact integer sum: int64 additions until one overflows, then a big total.
// Used by sum()/total()/avg(); keeps the aggregate's state small when nothing overflows.
class Accumulator {
 public:
  void add(int64_t v) {
    if (__builtin_add_overflow(small_, v, &small_)) [[unlikely]] add_slow(v);
  }
  // REQUIRES: v is an integer (kInteger, kBigInt or kBoolean).
  void add(const Value& v);
  // The exact total (canonical).
  Value total() const;
  double to_double() const;

 private:
  // After an overflowed add(v): small_ holds the wrapped sum.
  void add_slow(int64_t v);
  int64_t small_ = 0;
  std::unique_ptr<Value> big_;  // the part that overflowed int64 (small_ adds to it); rare
};

}  // namespace quereus::bigint
