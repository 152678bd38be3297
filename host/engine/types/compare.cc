#include "types/compare.h"

#include <cmath>
#include <cstring>
#include <functional>

#include "types/json_value.h"
#include "types/big_int.h"

namespace quereus {

int type_rank(ValueType t) {
  switch (t) {
    case ValueType::kNull: return 0;
    case ValueType::kInteger:
    case ValueType::kReal:
    case ValueType::kBoolean:
    case ValueType::kBigInt: return 1;
    case ValueType::kText: return 2;
    case ValueType::kBlob: return 3;
    case ValueType::kJson: return 4;
  }
  return 5;
}

int compare_values(const Value& a, const Value& b, const Collation* coll) {
  int ra = type_rank(a.type()), rb = type_rank(b.type());
  if (ra != rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 0: return 0;
    case 1: {
      bool ai = a.type() != ValueType::kReal, bi = b.type() != ValueType::kReal;
      if (ai && bi) {
        // A big integer's as_int() is saturated, which orders it correctly against every
        // int64 it differs from; only a tie needs the exact comparison.
        int64_t x = a.as_int(), y = b.as_int();
        if (x != y) return x < y ? -1 : 1;
        if (a.type() != ValueType::kBigInt && b.type() != ValueType::kBigInt) return 0;
        return bigint::compare(a, b);
      }
      // An int64 within ±2^53 converts to a double exactly: compared as doubles (NaN ranks
      // below every number). Past that, and for a big integer, exactly through bigint.
      constexpr int64_t kExact = int64_t{1} << 53;
      if (ai && a.type() == ValueType::kInteger && a.as_int() > -kExact && a.as_int() < kExact) {
        const double x = static_cast<double>(a.as_int()), y = b.as_real();
        if (std::isnan(y)) return 1;
        return x < y ? -1 : (x > y ? 1 : 0);
      }
      if (bi && b.type() == ValueType::kInteger && b.as_int() > -kExact && b.as_int() < kExact) {
        const double x = a.as_real(), y = static_cast<double>(b.as_int());
        if (std::isnan(x)) return -1;
        return x < y ? -1 : (x > y ? 1 : 0);
      }
      if (ai) return bigint::compare_real(a, b.as_real());
      if (bi) return -bigint::compare_real(b, a.as_real());
      double x = a.as_real(), y = b.as_real();
      if (std::isnan(x) || std::isnan(y)) return std::isnan(x) ? (std::isnan(y) ? 0 : -1) : 1;
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    case 2: {
      if (coll) return coll->compare(a.str(), b.str());
      int c = a.str().compare(b.str());
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    case 4: return jsonv::compare_text(a.str(), b.str());  // structural, not textual
    default: {
      int c = a.str().compare(b.str());
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
  }
}

size_t hash_value(const Value& v) {
  switch (v.type()) {
    case ValueType::kNull: return 0x9e3779b9;
    case ValueType::kInteger:
    case ValueType::kBoolean: return std::hash<int64_t>()(v.as_int());
    case ValueType::kReal: {
      // An integral real hashes as the integer it equals (int64 or big).
      double d = v.as_real();
      if (d >= -9223372036854775808.0 && d < 9223372036854775808.0 && d == std::floor(d))
        return std::hash<int64_t>()(static_cast<int64_t>(d));
      return std::hash<double>()(d);
    }
    case ValueType::kBigInt: {
      // Equal to a double only when the double holds it exactly: hash as that double.
      double d;
      if (bigint::exact_double(v, &d)) return std::hash<double>()(d);
      return std::hash<std::string>()(v.str());
    }
    case ValueType::kJson: {
      // Structural: a document's text keeps its key order, so hash its canonical form.
      auto j = jsonv::parse(v.str());
      return std::hash<std::string>()(j ? jsonv::canonical(*j) : v.str()) ^ static_cast<size_t>(v.type());
    }
    default: return std::hash<std::string>()(v.str()) ^ static_cast<size_t>(v.type());
  }
}

}  // namespace quereus
