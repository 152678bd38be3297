// Value: one SQL value as the engine holds it (physical type + payload).
//
// Logical types (DATE, TIME, …) are carried by their canonical physical form; JSON is
// held as canonical JSON text (structural equality is canonical-text equality).
//
// INTEGER has two physical forms: kInteger (int64) for every value that fits, and kBigInt
// (exact decimal text) only for values outside int64 — the canonical form, kept by every
// operation (types/big_int.h). Both are logically INTEGER: typeof() is 'integer' and they
// order, hash and compare with each other and with reals by numeric value.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace quereus {

enum class ValueType : uint8_t { kNull, kInteger, kReal, kText, kBlob, kBoolean, kJson, kBigInt };

const char* value_type_name(ValueType t);  // "null", "integer", "real", "text", … (kBigInt: "integer")

class Value {
 public:
  Value() = default;
  // Copies carry the text payload only for the types that have one: an integer, real,
  // boolean or NULL copies its 16 bytes and nothing else (row copies are the hot path of
  // joins and projections). Assignment of such a value keeps this value's buffer.
  Value(const Value& o) : type_(o.type_), i_(o.i_) {
    if (o.has_bytes()) s_ = o.s_;
  }
  Value& operator=(const Value& o) {
    type_ = o.type_;
    i_ = o.i_;
    if (o.has_bytes()) s_ = o.s_;
    return *this;
  }
  Value(Value&&) noexcept = default;
  Value& operator=(Value&&) noexcept = default;
  static Value Integer(int64_t v) { Value x; x.type_ = ValueType::kInteger; x.i_ = v; return x; }
  static Value Real(double v) { Value x; x.type_ = ValueType::kReal; x.r_ = v; return x; }
  static Value Boolean(bool v) { Value x; x.type_ = ValueType::kBoolean; x.i_ = v ? 1 : 0; return x; }
  static Value Text(std::string v) { Value x; x.type_ = ValueType::kText; x.s_ = std::move(v); return x; }
  static Value Blob(std::string bytes) { Value x; x.type_ = ValueType::kBlob; x.s_ = std::move(bytes); return x; }
  // `canonical` must already be canonical JSON text.
  static Value Json(std::string canonical) { Value x; x.type_ = ValueType::kJson; x.s_ = std::move(canonical); return x; }
  // REQUIRES: `digits` is the canonical decimal text of an integer outside int64 ('-' then
  // digits without leading zeros). Build big integers through types/big_int.h, which
  // normalizes; this is its raw constructor.
  static Value BigInteger(std::string digits) {
    Value x;
    x.type_ = ValueType::kBigInt;
    x.i_ = digits[0] == '-' ? INT64_MIN : INT64_MAX;
    x.s_ = std::move(digits);
    return x;
  }

  ValueType type() const { return type_; }
  bool is_null() const { return type_ == ValueType::kNull; }
  bool is_numeric() const {
    return type_ == ValueType::kInteger || type_ == ValueType::kReal || type_ == ValueType::kBigInt;
  }
  bool is_integer() const { return type_ == ValueType::kInteger || type_ == ValueType::kBigInt; }
  // Whether str() is the payload: text, blob, JSON or a big integer's digits.
  bool has_bytes() const {
    return type_ == ValueType::kText || type_ == ValueType::kBlob || type_ == ValueType::kJson ||
           type_ == ValueType::kBigInt;
  }

  // REQUIRES: the matching type. For a kBigInt, as_int() is the value saturated to int64
  // (INT64_MAX or INT64_MIN), which is what callers wanting a clamped count get.
  int64_t as_int() const { return i_; }
  double as_real() const { return r_; }
  bool as_bool() const { return i_ != 0; }
  // Text, blob bytes, JSON text, or a big integer's decimal text.
  const std::string& str() const { return s_; }

  // Numeric view: integer, real and boolean as double (a big integer correctly rounded).
  double to_double() const;
  // SQL truthiness: NULL → nullopt-like (returns false with *is_null = true).
  bool truthy(bool* is_null) const;

  // Text rendering used by CAST(… AS TEXT), the table printer and string functions.
  std::string to_text() const;

  bool operator==(const Value& o) const;  // identical type and payload (BINARY)

  // In-place assignment that keeps this value's payload buffer (no allocation when it is
  // large enough): the hot path that copies rows out of a module's batches.
  void assign_integer(int64_t v) { type_ = ValueType::kInteger; i_ = v; }
  void assign_real(double v) { type_ = ValueType::kReal; r_ = v; }
  void assign_boolean(bool v) { type_ = ValueType::kBoolean; i_ = v ? 1 : 0; }
  void assign_null() { type_ = ValueType::kNull; }
  // REQUIRES: t is kText, kBlob or kJson (JSON text must already be canonical).
  void assign_bytes(ValueType t, std::string_view bytes) { type_ = t; s_.assign(bytes.data(), bytes.size()); }

 private:
  ValueType type_ = ValueType::kNull;
  union {
    int64_t i_ = 0;
    double r_;
  };
  std::string s_;
};

using Row = std::vector<Value>;

// Formats a double as the reference engine prints numbers (shortest round-trip,
// integral values without a fraction: 1.0 → "1", 0.1 → "0.1", 1e21 → "1e+21").
std::string format_real(double d);

// Blob bytes read as UTF-8 text the way a WHATWG decoder does: each maximal invalid
// sequence becomes U+FFFD (so the conversion is total, and lossy).
std::string utf8_lossy(std::string_view bytes);

}  // namespace quereus
