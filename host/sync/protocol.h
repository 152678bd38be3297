// The sync wire protocol between peers and a hub (docs/sync-network.md): JSON messages in
// WebSocket text frames, one object per frame with a "type". Version 1, strict equality:
// a peer and a hub of different versions refuse each other before anything else happens.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace quereus::syncnet {

inline constexpr int kProtocolVersion = 1;

// Close codes (WebSocket application range) for the fatal errors.
inline constexpr uint16_t kCloseAuthFailed = 4001;
inline constexpr uint16_t kCloseMissingDatabase = 4002;
inline constexpr uint16_t kCloseVersionMismatch = 4003;
inline constexpr uint16_t kCloseTooSlow = 4008;
inline constexpr uint16_t kCloseProtocolError = 4009;

// Error codes carried by {"type":"error","code":…,"message":…,"fatal":…}.
namespace code {
inline constexpr const char* kAuthFailed = "AUTH_FAILED";
inline constexpr const char* kMissingDatabase = "MISSING_DATABASE_ID";
inline constexpr const char* kAlreadyAuthenticated = "ALREADY_AUTHENTICATED";
inline constexpr const char* kVersionMismatch = "PROTOCOL_VERSION_MISMATCH";
inline constexpr const char* kNotAuthenticated = "NOT_AUTHENTICATED";
inline constexpr const char* kUnknownMessage = "UNKNOWN_MESSAGE";
inline constexpr const char* kMessageError = "MESSAGE_ERROR";
inline constexpr const char* kWrongSite = "WRONG_SITE";
inline constexpr const char* kApplyError = "APPLY_CHANGES_ERROR";
inline constexpr const char* kGetChangesError = "GET_CHANGES_ERROR";
inline constexpr const char* kTooLarge = "MESSAGE_TOO_LARGE";
}  // namespace code

// Nesting deeper than this is refused while parsing (a deeply nested document would
// otherwise cost stack in every later copy and dump).
inline constexpr int kMaxJsonDepth = 32;

// A parsed message: an object with a string "type", nested at most kMaxJsonDepth deep.
// Anything else is a MESSAGE_ERROR whose text `error` receives.
std::optional<nlohmann::json> parse_message(std::string_view text, std::string* error);
// The same without the "type" requirement: a JSON object nested at most kMaxJsonDepth deep.
std::optional<nlohmann::json> parse_object_bounded(std::string_view text, std::string* error);

// A message's requestId when it is a string of at most 128 bytes or an integer; null
// otherwise (ignored).
nlohmann::json request_id_of(const nlohmann::json& message);

// A JSON object from a trusted producer (the module's replies); {} when it is not one.
nlohmann::json parse_object(std::string_view text);

// 22 characters of base64url: the text form of a site id.
bool is_site_id_text(std::string_view s);

// `message` (a JSON object's text) with `"requestId": id` first, when id is not null.
std::string with_request_id(std::string message, const nlohmann::json& id);

// JSON text of `j`; invalid UTF-8 in strings is replaced, never thrown.
std::string safe_dump(const nlohmann::json& j);

std::string error_message(std::string_view code, std::string_view message, bool fatal,
                          const nlohmann::json& request_id = nullptr);

// `{"type":"T",` + the rest of `object_json` (a JSON object's text, as the module returns
// it): the reply without parsing and re-serializing a large page.
std::string with_type(std::string_view type, std::string_view object_json);

}  // namespace quereus::syncnet
