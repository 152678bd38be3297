// Parameter types (see param_types.h).
#include "types/param_types.h"

#include "types/logical_type.h"

namespace quereus {

ParamTypes ParamTypes::from_values(std::span<const Value> positional, const std::map<std::string, Value>& named) {
  auto type_of = [](const Value& v) {
    switch (v.type()) {
      case ValueType::kInteger:
      case ValueType::kBigInt: return ParamType{QRS_LT_INTEGER, true};
      case ValueType::kReal: return ParamType{QRS_LT_REAL, true};
      case ValueType::kText: return ParamType{QRS_LT_TEXT, true};
      case ValueType::kBlob: return ParamType{QRS_LT_BLOB, true};
      case ValueType::kBoolean: return ParamType{QRS_LT_BOOLEAN, true};
      case ValueType::kJson: return ParamType{QRS_LT_JSON, true};
      default: return ParamType{QRS_LT_ANY, true};
    }
  };
  ParamTypes out;
  for (size_t i = 0; i < positional.size(); ++i) out.positional[static_cast<int>(i + 1)] = type_of(positional[i]);
  for (auto& [n, v] : named) {
    std::string name = n;
    if (!name.empty() && (name[0] == ':' || name[0] == '$' || name[0] == '@')) name.erase(0, 1);
    out.named[name] = type_of(v);
  }
  return out;
}

bool value_fits_param(const Value& v, const ParamType& t, std::string* why) {
  if (v.is_null()) {
    if (t.nullable) return true;
    *why = std::string("expected ") + logical_type_name(t.type) + " NOT NULL, got NULL";
    return false;
  }
  bool ok;
  switch (t.type) {
    case QRS_LT_ANY: ok = true; break;
    case QRS_LT_INTEGER: ok = v.type() == ValueType::kInteger || v.type() == ValueType::kBigInt; break;
    case QRS_LT_REAL:
    case QRS_LT_NUMERIC:
      ok = v.type() == ValueType::kInteger || v.type() == ValueType::kBigInt || v.type() == ValueType::kReal;
      break;
    case QRS_LT_TEXT:
    case QRS_LT_DATE:
    case QRS_LT_TIME:
    case QRS_LT_DATETIME:
    case QRS_LT_TIMESPAN: ok = v.type() == ValueType::kText; break;
    case QRS_LT_BLOB: ok = v.type() == ValueType::kBlob; break;
    case QRS_LT_BOOLEAN: ok = v.type() == ValueType::kBoolean; break;
    case QRS_LT_JSON: ok = v.type() == ValueType::kJson; break;
    default: ok = true; break;
  }
  if (!ok) *why = std::string("expected ") + logical_type_name(t.type) + ", got " + value_type_name(v.type());
  return ok;
}

}  // namespace quereus
