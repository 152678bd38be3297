#include "types/value.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace quereus {

const char* value_type_name(ValueType t) {
  switch (t) {
    case ValueType::kNull: return "null";
    case ValueType::kInteger: return "integer";
    case ValueType::kReal: return "real";
    case ValueType::kText: return "text";
    case ValueType::kBlob: return "blob";
    case ValueType::kBoolean: return "boolean";
    case ValueType::kJson: return "json";
    case ValueType::kBigInt: return "integer";
  }
  return "null";
}

double Value::to_double() const {
  switch (type_) {
    case ValueType::kInteger:
    case ValueType::kBoolean: return static_cast<double>(i_);
    case ValueType::kReal: return r_;
    case ValueType::kBigInt: return std::strtod(s_.c_str(), nullptr);  // correctly rounded
    default: return 0;
  }
}

bool Value::truthy(bool* is_null) const {
  *is_null = false;
  switch (type_) {
    case ValueType::kNull: *is_null = true; return false;
    case ValueType::kInteger:
    case ValueType::kBoolean: return i_ != 0;
    case ValueType::kReal: return r_ != 0;
    case ValueType::kBigInt: return true;  // never zero
    case ValueType::kText: {
      // Text is truthy when its leading number is non-zero (SQLite rule).
      double d = std::strtod(s_.c_str(), nullptr);
      return d != 0;
    }
    case ValueType::kBlob: return false;
    case ValueType::kJson: return s_ != "null" && s_ != "false" && s_ != "0";
  }
  return false;
}

std::string format_real(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  if (d == 0) return "0";
  // Shortest representation that round-trips, in the style of JS Number#toString.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string s(buf, res.ptr);
  auto e = s.find('e');
  if (e == std::string::npos) return s;
  // to_chars gives "1e+21" / "1e-07"; JS prints exponents without leading zeros and uses
  // plain notation for 1e-7 < |d| < 1e21.
  int exp = std::atoi(s.c_str() + e + 1);
  std::string mant = s.substr(0, e);
  if (exp >= -6 && exp < 21) {
    // Expand to plain notation.
    bool neg = mant[0] == '-';
    if (neg) mant.erase(0, 1);
    std::string digits;
    int point = 1;
    for (char c : mant) {
      if (c == '.') continue;
      digits += c;
    }
    auto dot = mant.find('.');
    point = dot == std::string::npos ? static_cast<int>(mant.size()) : static_cast<int>(dot);
    point += exp;
    std::string out;
    if (point <= 0) {
      out = "0." + std::string(-point, '0') + digits;
    } else if (point >= static_cast<int>(digits.size())) {
      out = digits + std::string(point - digits.size(), '0');
    } else {
      out = digits.substr(0, point) + "." + digits.substr(point);
    }
    return neg ? "-" + out : out;
  }
  return mant + "e" + (exp >= 0 ? "+" : "-") + std::to_string(std::abs(exp));
}

std::string utf8_lossy(std::string_view bytes) {
  static const char kReplacement[] = "\xEF\xBF\xBD";
  std::string out;
  out.reserve(bytes.size());
  size_t i = 0, n = bytes.size();
  auto byte = [&](size_t k) { return static_cast<unsigned char>(bytes[k]); };
  while (i < n) {
    unsigned char c = byte(i);
    // Continuation bytes the lead byte announces; -1 for a byte that cannot lead.
    int need = c < 0x80                  ? 0
               : c >= 0xC2 && c <= 0xDF ? 1
               : c >= 0xE0 && c <= 0xEF ? 2
               : c >= 0xF0 && c <= 0xF4 ? 3
                                        : -1;
    if (need < 0) { out += kReplacement; ++i; continue; }
    // The second byte's range depends on the lead byte (no overlongs, no surrogates).
    unsigned char lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
    unsigned char hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
    size_t k = 1;
    for (; k <= static_cast<size_t>(need); ++k) {
      if (i + k >= n) break;
      unsigned char b = byte(i + k);
      if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) break;
    }
    // Valid: copy the sequence. Invalid: one U+FFFD for the k bytes of its maximal prefix.
    if (k > static_cast<size_t>(need)) out.append(bytes.substr(i, k));
    else out += kReplacement;
    i += k;
  }
  return out;
}

std::string Value::to_text() const {
  switch (type_) {
    case ValueType::kNull: return "";
    case ValueType::kInteger: return std::to_string(i_);
    case ValueType::kReal: return format_real(r_);
    case ValueType::kBoolean: return i_ ? "true" : "false";
    case ValueType::kText:
    case ValueType::kBlob:
    case ValueType::kJson:
    case ValueType::kBigInt: return s_;
  }
  return "";
}

bool Value::operator==(const Value& o) const {
  if (type_ != o.type_) return false;
  switch (type_) {
    case ValueType::kNull: return true;
    case ValueType::kInteger:
    case ValueType::kBoolean: return i_ == o.i_;
    case ValueType::kReal: return r_ == o.r_ || (std::isnan(r_) && std::isnan(o.r_));
    default: return s_ == o.s_;
  }
}

}  // namespace quereus
