// Result values → JSON, the shape FORMAT.md §6.2 specifies.
#include "io/result_json.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <unordered_map>

namespace quereus {

nlohmann::ordered_json value_to_json(const Value& v, const JsonRenderOptions& options) {
  using J = nlohmann::ordered_json;
  switch (v.type()) {
    case ValueType::kNull: return nullptr;
    case ValueType::kInteger: return v.as_int();
    case ValueType::kBigInt: {
      // A JSON number: exact up to 2^64 - 1, the nearest double beyond (json_value_text
      // and row_json_text write every digit).
      if (v.str()[0] != '-' && v.str().size() <= 20) {
        errno = 0;
        unsigned long long u = std::strtoull(v.str().c_str(), nullptr, 10);
        if (errno == 0) return static_cast<uint64_t>(u);
      }
      return v.to_double();
    }
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
      // The keys are distinct by construction: appended directly (operator[] searches the
      // ordered object first, which made a large blob quadratic — a 1 MiB blob took minutes).
      J j = J::object();
      auto& members = j.get_ref<J::object_t&>();
      members.reserve(v.str().size());
      for (size_t i = 0; i < v.str().size(); ++i)
        members.emplace_back(std::to_string(i), static_cast<unsigned char>(v.str()[i]));
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

std::string json_value_text(const Value& v, const JsonRenderOptions& options) {
  if (v.type() == ValueType::kBigInt) return v.str();
  return json_text(value_to_json(v, options));
}

std::string row_json_text(const std::vector<std::string>& names, const Row& row, const JsonRenderOptions& options) {
  size_t n = std::min(names.size(), row.size());
  bool big = false;
  for (size_t i = 0; i < n; ++i) big = big || row[i].type() == ValueType::kBigInt;
  if (!big) return json_text(row_to_json(names, row, options));
  // As row_to_json: a repeated name keeps its first position and takes the last value.
  std::vector<size_t> order;
  std::unordered_map<std::string, size_t> last;
  for (size_t i = 0; i < n; ++i) {
    auto [it, fresh] = last.try_emplace(names[i], i);
    if (fresh) order.push_back(i);
    else it->second = i;
  }
  std::string out = "{";
  for (size_t i : order) {
    if (out.size() > 1) out += ',';
    out += json_text(nlohmann::ordered_json(names[i]));
    out += ':';
    out += json_value_text(row[last[names[i]]], options);
  }
  return out + "}";
}

}  // namespace quereus
