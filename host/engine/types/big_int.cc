// Integers outside int64 (see big_int.h): cpp_int arithmetic over canonical Values.
#include "types/big_int.h"

#include <boost/multiprecision/cpp_int.hpp>
#include <cmath>
#include <limits>

namespace quereus::bigint {

namespace {

using BigInt = boost::multiprecision::cpp_int;

BigInt to_big(const Value& v) {
  if (v.type() == ValueType::kBigInt) return BigInt(v.str());
  return BigInt(v.as_int());
}

Value canonical(const BigInt& b) {
  if (b >= std::numeric_limits<int64_t>::min() && b <= std::numeric_limits<int64_t>::max())
    return Value::Integer(b.convert_to<int64_t>());
  return Value::BigInteger(b.str());
}

// The exact integer value of a finite integral double.
BigInt big_of_double(double d) {
  int exp = 0;
  double mant = std::frexp(std::fabs(d), &exp);  // |d| = mant * 2^exp, mant in [0.5, 1)
  BigInt m(static_cast<int64_t>(std::ldexp(mant, 53)));
  exp -= 53;
  if (exp > 0) m <<= exp;
  else if (exp < 0) m >>= -exp;  // the fraction bits: truncation toward zero
  return d < 0 ? BigInt(-m) : m;
}

}  // namespace

Value from_digits(bool negative, std::string_view digits) {
  size_t i = 0;
  while (i + 1 < digits.size() && digits[i] == '0') ++i;
  digits.remove_prefix(i);
  // Up to 19 digits fit in uint64; the value is an int64 unless past ±2^63.
  if (digits.size() <= 19) {
    uint64_t u = 0;
    for (char c : digits) u = u * 10 + static_cast<uint64_t>(c - '0');
    constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    if (!negative && u <= kMax) return Value::Integer(static_cast<int64_t>(u));
    if (negative && u <= kMax + 1) return Value::Integer(static_cast<int64_t>(0 - u));
  }
  std::string text;
  text.reserve(digits.size() + 1);
  if (negative) text += '-';
  text.append(digits);
  return canonical(BigInt(text));
}

Value from_double(double d) {
  double t = std::trunc(d);
  if (t >= -9223372036854775808.0 && t < 9223372036854775808.0) return Value::Integer(static_cast<int64_t>(t));
  return canonical(big_of_double(t));
}

Value arith(char op, const Value& a, const Value& b) {
  BigInt x = to_big(a), y = to_big(b);
  switch (op) {
    case '+': return canonical(x + y);
    case '-': return canonical(x - y);
    case '*': return canonical(x * y);
    case '/': return y == 0 ? Value() : canonical(x / y);
    case '%': return y == 0 ? Value() : canonical(x % y);
  }
  return Value();
}

Value negate(const Value& a) { return canonical(-to_big(a)); }

Value abs(const Value& a) {
  BigInt x = to_big(a);
  return canonical(x < 0 ? BigInt(-x) : x);
}

int compare(const Value& a, const Value& b) {
  bool abig = a.type() == ValueType::kBigInt, bbig = b.type() == ValueType::kBigInt;
  if (!abig && !bbig) return (a.as_int() > b.as_int()) - (a.as_int() < b.as_int());
  // Exactly one is big: it lies beyond every int64, on the side of its sign.
  if (!abig) return b.str()[0] == '-' ? 1 : -1;
  if (!bbig) return a.str()[0] == '-' ? -1 : 1;
  bool aneg = a.str()[0] == '-', bneg = b.str()[0] == '-';
  if (aneg != bneg) return aneg ? -1 : 1;
  // Same sign: canonical text has no leading zeros, so longer magnitude is larger.
  int c;
  if (a.str().size() != b.str().size()) c = a.str().size() < b.str().size() ? -1 : 1;
  else c = a.str().compare(b.str()) < 0 ? -1 : (a.str() == b.str() ? 0 : 1);
  return aneg ? -c : c;
}

int compare_real(const Value& a, double d) {
  if (std::isnan(d)) return 1;
  if (a.type() != ValueType::kBigInt) {
    // int64 against double, exactly.
    int64_t i = a.as_int();
    if (d >= 9223372036854775808.0) return -1;
    if (d < -9223372036854775808.0) return 1;
    double fl = std::floor(d);
    int64_t di = static_cast<int64_t>(fl);
    if (i < di) return -1;
    if (i > di) return 1;
    return fl < d ? -1 : 0;
  }
  bool neg = a.str()[0] == '-';
  if (std::isinf(d)) return d > 0 ? -1 : 1;
  // Every double inside [-2^63, 2^63) lies between the int64 bounds, which a big integer is beyond.
  if (d >= -9223372036854775808.0 && d < 9223372036854775808.0) return neg ? -1 : 1;
  // Past 2^63 a double is integral: compare exactly.
  BigInt x(a.str()), y = big_of_double(d);
  return x < y ? -1 : (x > y ? 1 : 0);
}

bool exact_double(const Value& big, double* d) {
  double r = big.to_double();
  if (!std::isfinite(r)) return false;
  if (BigInt(big.str()) != big_of_double(r)) return false;
  *d = r;
  return true;
}

void Accumulator::add_slow(int64_t v) {
  // Undo the wrapped addition, fold the int64 part into the big part, restart from v.
  int64_t before = static_cast<int64_t>(static_cast<uint64_t>(small_) - static_cast<uint64_t>(v));
  if (!big_) big_ = std::make_unique<Value>(Value::Integer(0));
  *big_ = arith('+', *big_, Value::Integer(before));
  small_ = v;
}

void Accumulator::add(const Value& v) {
  if (v.type() != ValueType::kBigInt) return add(v.as_int());
  if (!big_) big_ = std::make_unique<Value>(Value::Integer(0));
  *big_ = arith('+', *big_, v);
}

Value Accumulator::total() const {
  if (!big_) return Value::Integer(small_);
  return arith('+', *big_, Value::Integer(small_));
}

double Accumulator::to_double() const {
  if (!big_) return static_cast<double>(small_);
  return total().to_double();
}

}  // namespace quereus::bigint
