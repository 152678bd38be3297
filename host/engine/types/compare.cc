#include "types/compare.h"

#include <cmath>
#include <cstring>
#include <functional>

#include "functions/json_value.h"

namespace quereus {

int type_rank(ValueType t) {
  switch (t) {
    case ValueType::kNull: return 0;
    case ValueType::kInteger:
    case ValueType::kReal:
    case ValueType::kBoolean: return 1;
    case ValueType::kText: return 2;
    case ValueType::kBlob: return 3;
    case ValueType::kJson: return 4;
  }
  return 5;
}

static int compare_int_real(int64_t i, double d) {
  if (std::isnan(d)) return 1;  // NaN sorts smallest
  if (d >= 9223372036854775808.0) return -1;
  if (d < -9223372036854775808.0) return 1;
  double fl = std::floor(d);
  int64_t di = static_cast<int64_t>(fl);
  if (i < di) return -1;
  if (i > di) return 1;
  return fl < d ? -1 : 0;
}

int compare_values(const Value& a, const Value& b, const Collation* coll) {
  int ra = type_rank(a.type()), rb = type_rank(b.type());
  if (ra != rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 0: return 0;
    case 1: {
      bool ai = a.type() != ValueType::kReal, bi = b.type() != ValueType::kReal;
      if (ai && bi) return a.as_int() < b.as_int() ? -1 : (a.as_int() > b.as_int() ? 1 : 0);
      if (ai) return compare_int_real(a.as_int(), b.as_real());
      if (bi) return -compare_int_real(b.as_int(), a.as_real());
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
  switch (type_rank(v.type())) {
    case 0: return 0x9e3779b9;
    case 1: {
      double d = v.to_double();
      if (v.type() != ValueType::kReal) return std::hash<int64_t>()(v.as_int());
      if (d == std::floor(d) && std::fabs(d) < 9.2e18) return std::hash<int64_t>()(static_cast<int64_t>(d));
      return std::hash<double>()(d);
    }
    default: return std::hash<std::string>()(v.str()) ^ static_cast<size_t>(v.type());
  }
}

}  // namespace quereus
