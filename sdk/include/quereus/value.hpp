// quereus/value.hpp — owned SQL values, rows, collations and the engine's value ordering.
//
// A Value owns its bytes; qrs_value (abi.h) is the borrowed C view that crosses the
// boundary. Convert with Value::from_c (deep copy) and Value::to_c (view, no copy).
#ifndef QUEREUS_VALUE_HPP_
#define QUEREUS_VALUE_HPP_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "quereus/abi.h"
#include "quereus/error.hpp"

namespace quereus::sdk {

// The physical type of a value; the numbers equal qrs_value_type.
enum class ValueType : uint32_t {
  kNull = QRS_TYPE_NULL,
  kInteger = QRS_TYPE_INTEGER,  // exact int64
  kReal = QRS_TYPE_REAL,        // IEEE double
  kText = QRS_TYPE_TEXT,        // well-formed UTF-8
  kBlob = QRS_TYPE_BLOB,        // bytes, may contain 0x00
  kBoolean = QRS_TYPE_BOOLEAN,  // true / false
  kJson = QRS_TYPE_JSON         // canonical JSON text
};

// One SQL value that owns its data. Cheap to move; copying copies the bytes.
//
// Values are built with the named constructors (Value::integer(5), Value::text("a"), …);
// a default-constructed Value is NULL. Logical types (DATE, TIME, …) travel as their
// canonical physical form, exactly as in abi.h.
// Thread safety: a const Value may be read from several threads.
class Value {
 public:
  Value() noexcept = default;  // NULL

  static Value null() noexcept { return Value(); }
  static Value integer(int64_t v) noexcept { Value r(ValueType::kInteger); r.num_.i = v; return r; }
  static Value real(double v) noexcept { Value r(ValueType::kReal); r.num_.d = v; return r; }
  static Value boolean(bool v) noexcept { Value r(ValueType::kBoolean); r.num_.i = v ? 1 : 0; return r; }
  static Value text(std::string s) { return Value(ValueType::kText, std::move(s)); }
  static Value blob(std::string bytes) { return Value(ValueType::kBlob, std::move(bytes)); }
  static Value blob(std::span<const uint8_t> bytes) {
    return Value(ValueType::kBlob, std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  }
  // REQUIRES: `canonical` is the engine's canonical JSON text (not validated here).
  static Value json(std::string canonical) { return Value(ValueType::kJson, std::move(canonical)); }

  // Deep-copies a C value. Throws Error(QRS_MISMATCH) for an unknown type tag.
  static Value from_c(const qrs_value& v);

  // A borrowed C view of this value. For TEXT/BLOB/JSON, u.str points into this Value:
  // valid until the Value is modified, moved from or destroyed.
  qrs_value to_c() const noexcept;

  ValueType type() const noexcept { return type_; }
  bool is_null() const noexcept { return type_ == ValueType::kNull; }
  // INTEGER, REAL or BOOLEAN: the values that order together as numbers.
  bool is_numeric() const noexcept {
    return type_ == ValueType::kInteger || type_ == ValueType::kReal || type_ == ValueType::kBoolean;
  }

  // Typed accessors. Each throws Error(QRS_MISMATCH) when the type differs.
  int64_t as_integer() const { check(ValueType::kInteger); return num_.i; }
  double as_real() const { check(ValueType::kReal); return num_.d; }
  bool as_boolean() const { check(ValueType::kBoolean); return num_.i != 0; }
  // TEXT or JSON text.
  std::string_view as_text() const {
    if (type_ != ValueType::kText && type_ != ValueType::kJson) check(ValueType::kText);
    return bytes_;
  }
  // The payload bytes of TEXT, BLOB and JSON; empty for the other types.
  std::string_view bytes() const noexcept { return bytes_; }

  // Identity: same type and same payload (reals by ==, so NaN != NaN). This is NOT the SQL
  // comparison: Value::integer(1) != Value::real(1.0) here, while compare_values says 0.
  friend bool operator==(const Value& a, const Value& b) noexcept {
    if (a.type_ != b.type_) return false;
    switch (a.type_) {
      case ValueType::kNull: return true;
      case ValueType::kReal: return a.num_.d == b.num_.d;
      case ValueType::kInteger:
      case ValueType::kBoolean: return a.num_.i == b.num_.i;
      default: return a.bytes_ == b.bytes_;
    }
  }

  // A short SQL-literal-like rendering for messages and test output ("NULL", "42", "'a'",
  // "x'00ff'", "true", "json'{}'").
  std::string debug_string() const;

 private:
  explicit Value(ValueType t) noexcept : type_(t) {}
  Value(ValueType t, std::string bytes) noexcept : type_(t), bytes_(std::move(bytes)) {}
  void check(ValueType want) const {
    if (type_ != want) throw Error::mismatch("value " + debug_string() + " has the wrong type");
  }

  ValueType type_ = ValueType::kNull;
  union {
    int64_t i;
    double d;
  } num_{0};
  std::string bytes_;  // TEXT, BLOB, JSON payload
};

// A row: cells in column order.
using Row = std::vector<Value>;
// A shared immutable row. Tables hand rows to the host by sharing them (RowBatch::add,
// UpdateResult), so a module that stores RowPtrs yields rows without copying.
using RowPtr = std::shared_ptr<const Row>;

inline RowPtr make_row(Row row) { return std::make_shared<const Row>(std::move(row)); }

// Deep-copies a C row.
inline Row row_from_c(const qrs_row& row) {
  Row out;
  out.reserve(row.count);
  for (uint32_t i = 0; i < row.count; ++i) out.push_back(Value::from_c(row.cells[i]));
  return out;
}

// A text collation: a name plus a total-order comparison function.
//
// A default-constructed Collation is BINARY (memcmp, then shorter first). One built from a
// qrs_collation_ref copies the name and keeps the host's (user, compare) pair, which stays
// valid for as long as the table or call that received it (collations are never unloaded
// while a table using them lives).
// Thread safety: compare is pure and may be called from any thread.
class Collation {
 public:
  Collation() = default;
  explicit Collation(const qrs_collation_ref& ref)
      : name_(ref.name.data ? std::string(ref.name.data, ref.name.len) : std::string("BINARY")),
        user_(ref.user),
        fn_(ref.compare) {
    if (name_.empty()) name_ = "BINARY";
  }
  Collation(std::string name, qrs_collation_compare_fn fn, void* user)
      : name_(std::move(name)), user_(user), fn_(fn) {}

  // Upper-case canonical name, e.g. "BINARY", "NOCASE".
  const std::string& name() const noexcept { return name_; }
  bool is_binary() const noexcept { return fn_ == nullptr; }

  // <0, 0, >0 (normalized to -1, 0, 1).
  int compare(std::string_view a, std::string_view b) const {
    int c = fn_ ? fn_(user_, a.data(), a.size(), b.data(), b.size()) : binary_compare(a, b);
    return (c > 0) - (c < 0);
  }

  qrs_collation_ref to_c() const noexcept {
    return qrs_collation_ref{sizeof(qrs_collation_ref), {name_.data(), name_.size()}, user_, fn_};
  }

  // memcmp over the common prefix, then the shorter string first. Also the BLOB order.
  static int binary_compare(std::string_view a, std::string_view b) noexcept {
    size_t n = a.size() < b.size() ? a.size() : b.size();
    int c = n ? std::memcmp(a.data(), b.data(), n) : 0;
    if (c != 0) return c < 0 ? -1 : 1;
    return (a.size() > b.size()) - (a.size() < b.size());
  }

 private:
  std::string name_ = "BINARY";
  void* user_ = nullptr;
  qrs_collation_compare_fn fn_ = nullptr;
};

// The engine's total order over values, returning -1, 0 or 1:
//
//   NULL  <  numbers  <  TEXT  <  BLOB  <  JSON
//
//   - NULL equals NULL (a key order, not SQL three-valued logic: callers that implement
//     `=`/`<` must treat a NULL operand as "no match" themselves).
//   - Numbers: INTEGER and REAL compare by exact mathematical value (9007199254740993 >
//     9007199254740992.0); BOOLEAN sorts with the numbers as 0 (false) and 1 (true), so
//     true == 1 == 1.0. NaN sorts below every other number and equals NaN.
//   - TEXT compares under `collation` (BINARY by default).
//   - BLOB compares bytewise (memcmp, then shorter first).
//   - JSON compares bytewise over its canonical text (not the structural JSON order).
int compare_values(const qrs_value& a, const qrs_value& b, const Collation& collation = {});
inline int compare_values(const Value& a, const Value& b, const Collation& collation = {}) {
  return compare_values(a.to_c(), b.to_c(), collation);
}

// ---------------------------------------------------------------------------------------
// Implementation
// ---------------------------------------------------------------------------------------

namespace detail {

inline std::string_view str_of(const qrs_value& v) noexcept {
  return v.u.str.data ? std::string_view(v.u.str.data, v.u.str.len) : std::string_view();
}

// The ordering class of a value (see compare_values).
inline int value_rank(uint32_t type) noexcept {
  switch (type) {
    case QRS_TYPE_NULL: return 0;
    case QRS_TYPE_INTEGER:
    case QRS_TYPE_REAL:
    case QRS_TYPE_BOOLEAN: return 1;
    case QRS_TYPE_TEXT: return 2;
    case QRS_TYPE_BLOB: return 3;
    default: return 4;  // JSON (and unknown tags, kept total)
  }
}

// Exact comparison of an int64 with a double.
inline int compare_int_real(int64_t i, double d) noexcept {
  if (std::isnan(d)) return 1;
  if (d < -9223372036854775808.0) return 1;
  if (d >= 9223372036854775808.0) return -1;
  double t = std::trunc(d);
  auto ti = static_cast<int64_t>(t);
  if (i != ti) return i < ti ? -1 : 1;
  return d > t ? -1 : (d < t ? 1 : 0);
}

inline int compare_numbers(const qrs_value& a, const qrs_value& b) noexcept {
  bool a_real = a.type == QRS_TYPE_REAL, b_real = b.type == QRS_TYPE_REAL;
  auto as_int = [](const qrs_value& v) -> int64_t {
    return v.type == QRS_TYPE_BOOLEAN ? (v.u.boolean != 0 ? 1 : 0) : v.u.integer;
  };
  if (!a_real && !b_real) {
    int64_t x = as_int(a), y = as_int(b);
    return (x > y) - (x < y);
  }
  if (a_real && b_real) {
    double x = a.u.real, y = b.u.real;
    bool xn = std::isnan(x), yn = std::isnan(y);
    if (xn || yn) return xn && yn ? 0 : (xn ? -1 : 1);  // NaN first
    return (x > y) - (x < y);
  }
  return a_real ? -compare_int_real(as_int(b), a.u.real) : compare_int_real(as_int(a), b.u.real);
}

}  // namespace detail

inline int compare_values(const qrs_value& a, const qrs_value& b, const Collation& collation) {
  int ra = detail::value_rank(a.type), rb = detail::value_rank(b.type);
  if (ra != rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 0: return 0;
    case 1: return detail::compare_numbers(a, b);
    case 2: return collation.compare(detail::str_of(a), detail::str_of(b));
    case 3: return Collation::binary_compare(detail::str_of(a), detail::str_of(b));
    // JSON: the host expresses JSON's structural order as the member's collation.
    default: return collation.compare(detail::str_of(a), detail::str_of(b));
  }
}

// True when `a` and `b` are the same value byte for byte: the same type tag and the same
// payload. Stricter than compare_values: INTEGER 5 and REAL 5.0 differ, so do REAL -0.0 and
// 0.0 (the bit patterns), and TEXT 'a' and 'A' under any collation. This is the "value-
// identical" of abi.h's apply_maintenance (a backing host writes nothing for such a row).
inline bool identical(const qrs_value& a, const qrs_value& b) noexcept {
  if (a.type != b.type) return false;
  switch (a.type) {
    case QRS_TYPE_NULL: return true;
    case QRS_TYPE_INTEGER: return a.u.integer == b.u.integer;
    case QRS_TYPE_REAL: return std::memcmp(&a.u.real, &b.u.real, sizeof(double)) == 0;
    case QRS_TYPE_BOOLEAN: return (a.u.boolean != 0) == (b.u.boolean != 0);
    default: return detail::str_of(a) == detail::str_of(b);
  }
}

// True when two rows have the same cell count and every cell is identical().
inline bool identical(std::span<const qrs_value> a, std::span<const qrs_value> b) noexcept {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!identical(a[i], b[i])) return false;
  return true;
}

// Cells rendered for a message, e.g. "(1, 'a')" (Value::debug_string per cell; an unknown
// type tag as "?"). For naming a key in an error.
inline std::string describe_cells(std::span<const qrs_value> cells);

inline Value Value::from_c(const qrs_value& v) {
  switch (v.type) {
    case QRS_TYPE_NULL: return Value();
    case QRS_TYPE_INTEGER: return integer(v.u.integer);
    case QRS_TYPE_REAL: return real(v.u.real);
    case QRS_TYPE_BOOLEAN: return boolean(v.u.boolean != 0);
    case QRS_TYPE_TEXT: return text(std::string(detail::str_of(v)));
    case QRS_TYPE_BLOB: return blob(std::string(detail::str_of(v)));
    case QRS_TYPE_JSON: return json(std::string(detail::str_of(v)));
    default: throw Error::mismatch("unknown qrs_value type tag " + std::to_string(v.type));
  }
}

inline qrs_value Value::to_c() const noexcept {
  qrs_value v{};
  v.type = static_cast<uint32_t>(type_);
  switch (type_) {
    case ValueType::kNull: break;
    case ValueType::kReal: v.u.real = num_.d; break;
    case ValueType::kInteger: v.u.integer = num_.i; break;
    case ValueType::kBoolean: v.u.boolean = static_cast<int32_t>(num_.i); break;
    default: v.u.str = qrs_string{bytes_.data(), bytes_.size()}; break;
  }
  return v;
}

inline std::string Value::debug_string() const {
  static constexpr char kHex[] = "0123456789abcdef";
  switch (type_) {
    case ValueType::kNull: return "NULL";
    case ValueType::kInteger: return std::to_string(num_.i);
    case ValueType::kReal: return std::to_string(num_.d);
    case ValueType::kBoolean: return num_.i ? "true" : "false";
    case ValueType::kText: return "'" + bytes_ + "'";
    case ValueType::kJson: return "json'" + bytes_ + "'";
    case ValueType::kBlob: {
      std::string s = "x'";
      for (char ch : bytes_) {
        auto c = static_cast<unsigned char>(ch);
        (s += kHex[c >> 4]) += kHex[c & 15];
      }
      return s + "'";
    }
  }
  return "?";
}

inline std::string describe_cells(std::span<const qrs_value> cells) {
  std::string s = "(";
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i) s += ", ";
    s += cells[i].type > QRS_TYPE_JSON ? std::string("?") : Value::from_c(cells[i]).debug_string();
  }
  return s + ")";
}

}  // namespace quereus::sdk

#endif  // QUEREUS_VALUE_HPP_
