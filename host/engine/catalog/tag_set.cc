// TagSet (catalog/tag_set.h).
#include "catalog/tag_set.h"

#include "types/json_value.h"

namespace quereus {

namespace {

jsonv::Json as_json(const TagValue& v) {
  return std::visit(
      [](const auto& x) -> jsonv::Json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) return nullptr;
        else return x;
      },
      v);
}

}  // namespace

std::string TagSet::to_json() const {
  if (entries_.empty()) return "";
  jsonv::Json obj = jsonv::Json::object();
  for (const auto& [k, v] : entries_) obj[k] = as_json(v);
  return jsonv::canonical(obj);
}

std::string tag_json(const TagValue& v) { return jsonv::canonical(as_json(v)); }

std::string tag_text(const TagValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  return tag_json(v);
}

}  // namespace quereus
