// Result values → JSON, the shape FORMAT.md §6.2 specifies.
#include "cli/result_json.h"

#include <cmath>

namespace quereus {

nlohmann::ordered_json value_to_json(const Value& v, const JsonRenderOptions& options) {
  using J = nlohmann::ordered_json;
  switch (v.type()) {
    case ValueType::kNull: return nullptr;
    case ValueType::kInteger: return v.as_int();
    case ValueType::kBoolean: return v.as_bool();
    case ValueType::kText: return v.str();
    case ValueType::kReal: {
      const double d = v.as_real();
      if (std::isfinite(d) || !options.nonfinite_as_text) return d;
      return std::isnan(d) ? "NaN" : d > 0 ? "Infinity" : "-Infinity";
    }
    case ValueType::kJson: {
      J j = J::parse(v.str(), nullptr, /*allow_exceptions=*/false);
      return j.is_discarded() ? J(v.str()) : j;
    }
    case ValueType::kBlob: {
      J j = J::object();
      for (size_t i = 0; i < v.str().size(); ++i)
        j[std::to_string(i)] = static_cast<unsigned char>(v.str()[i]);
      return j;
    }
  }
  return nullptr;
}

nlohmann::ordered_json row_to_json(const std::vector<std::string>& names, const Row& row,
                                   const JsonRenderOptions& options) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (size_t i = 0; i < names.size() && i < row.size(); ++i) j[names[i]] = value_to_json(row[i], options);
  return j;
}

std::string json_text(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace quereus
