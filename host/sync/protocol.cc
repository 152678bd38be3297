#include "sync/protocol.h"

#include <algorithm>

namespace quereus::syncnet {

std::optional<nlohmann::json> parse_message(std::string_view text, std::string* error) {
  nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded()) {
    *error = "the message is not JSON";
    return std::nullopt;
  }
  if (!j.is_object()) {
    *error = "the message is not a JSON object";
    return std::nullopt;
  }
  auto t = j.find("type");
  if (t == j.end() || !t->is_string()) {
    *error = "the message has no string \"type\"";
    return std::nullopt;
  }
  return j;
}

std::string error_message(std::string_view code, std::string_view message, bool fatal,
                          const nlohmann::json& request_id) {
  nlohmann::json j{{"type", "error"}, {"code", code}, {"message", message}, {"fatal", fatal}};
  if (!request_id.is_null()) j["requestId"] = request_id;
  return j.dump();
}

std::string with_type(std::string_view type, std::string_view object_json) {
  std::string out = "{\"type\":\"";
  out += type;
  out += '"';
  size_t i = object_json.find('{');
  std::string_view rest = i == std::string_view::npos ? std::string_view("}") : object_json.substr(i + 1);
  size_t j = rest.find_first_not_of(" \t\r\n");
  if (j != std::string_view::npos && rest[j] != '}') out += ',';
  out += rest;
  return out;
}

}  // namespace quereus::syncnet
