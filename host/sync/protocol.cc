#include "sync/protocol.h"

#include <algorithm>

namespace quereus::syncnet {

namespace {
struct TooDeep {};
}  // namespace

std::optional<nlohmann::json> parse_object_bounded(std::string_view text, std::string* error) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(
        text.begin(), text.end(),
        [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
          if (depth > kMaxJsonDepth) throw TooDeep{};
          return true;
        },
        false);
  } catch (const TooDeep&) {
    *error = "the message nests deeper than " + std::to_string(kMaxJsonDepth) + " levels";
    return std::nullopt;
  }
  if (j.is_discarded()) {
    *error = "the message is not JSON";
    return std::nullopt;
  }
  if (!j.is_object()) {
    *error = "the message is not a JSON object";
    return std::nullopt;
  }
  return j;
}

std::optional<nlohmann::json> parse_message(std::string_view text, std::string* error) {
  std::optional<nlohmann::json> m = parse_object_bounded(text, error);
  if (!m) return m;
  nlohmann::json& j = *m;
  auto t = j.find("type");
  if (t == j.end() || !t->is_string()) {
    *error = "the message has no string \"type\"";
    return std::nullopt;
  }
  return m;
}

nlohmann::json request_id_of(const nlohmann::json& message) {
  auto it = message.find("requestId");
  if (it == message.end()) return nullptr;
  if (it->is_string() && it->get_ref<const std::string&>().size() <= 128) return *it;
  if (it->is_number_integer()) return *it;
  return nullptr;
}

nlohmann::json parse_object(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  return j.is_object() ? j : nlohmann::json::object();
}

bool is_site_id_text(std::string_view s) {
  return s.size() == 22 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
         });
}

std::string with_request_id(std::string message, const nlohmann::json& id) {
  if (!id.is_null() && message.size() > 1) message.insert(1, "\"requestId\":" + safe_dump(id) + ",");
  return message;
}

std::string safe_dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string error_message(std::string_view code, std::string_view message, bool fatal,
                          const nlohmann::json& request_id) {
  nlohmann::json j{{"type", "error"}, {"code", code}, {"message", message}, {"fatal", fatal}};
  if (!request_id.is_null()) j["requestId"] = request_id;
  return safe_dump(j);
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
