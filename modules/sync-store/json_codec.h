// modules/sync-store/json_codec.h — the JSON forms of change batches and apply results
// (docs/sync-store.md §Wire). Decoding is strict: a malformed document is QRS_FORMAT
// naming the JSON path of the first bad member, and nothing else happens.
#ifndef QUEREUS_MODULES_SYNC_STORE_JSON_CODEC_H_
#define QUEREUS_MODULES_SYNC_STORE_JSON_CODEC_H_

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "change_set.h"

namespace quereus::sync {

// Values: NULL null, INTEGER a JSON integer, REAL a JSON number with a fraction or
// exponent, TEXT a string, BOOLEAN true/false, BLOB {"$blob": base64}, JSON {"$json": text}.
std::string batch_to_json(const ChangeBatch& batch);
nlohmann::json batch_json(const ChangeBatch& batch);  // the same, as a document to add to
// `snapshot`: when given and the document is a snapshot chunk (it has a `snapshot` member:
// {source, after, next, done, frontier?}), that member, checked. `origin`: a push's place in
// its pusher's log; `frontier`: the page's source frontier (a delta page's top-level member).
std::vector<ChangeSet> sets_from_json(std::string_view text, std::optional<SnapshotChunk>* snapshot = nullptr,
                                      std::optional<PushOrigin>* origin = nullptr, std::vector<Hlc>* frontier = nullptr);
std::string result_to_json(const ApplyResult& r);
// One value in the wire form.
std::string value_json(const sdk::Value& v);
nlohmann::json value_json_object(const sdk::Value& v);
// Appends to `out` a string as JSON (quoted, escaped), and a value in the wire form, without
// building a document (the plan an engine-routed apply hands the host is written this way).
// Text that is not UTF-8 throws as nlohmann's dump does.
void append_json_string(std::string& out, std::string_view s);
void append_value_json(std::string& out, const qrs_value& v);
// One change (a quarantined hold keeps its change this way).
std::string change_to_json(const Change& c);
Change change_from_json(std::string_view text);

// The pieces of a walk over a parsed document: the module reads small documents this way
// (a page's snapshot and origin members), and codec_fuzz's oracle (tests/fuzz/
// document_page_reader.cc) reads whole pages with them, so both refuse in the same words.
namespace json_doc {
// A JSON path, spelled out only when an error names it (a page holds many facts).
struct At {
  const std::string& base;
  std::string_view suffix;
  long index = -1;
  std::string str() const;
};
// Throws QRS_FORMAT "sync-store: malformed change batch at <path>: <what> (refused, nothing applied)".
[[noreturn]] void bad(const std::string& path, const std::string& what);
sdk::Value value_from_json(const nlohmann::json& j, const At& at);
Hlc hlc_from(const nlohmann::json& j, const At& at);
const nlohmann::json& member(const nlohmann::json& obj, const char* name, const std::string& path);
std::string string_member(const nlohmann::json& obj, const char* name, const std::string& path);
SnapshotChunk snapshot_from(const nlohmann::json& s);  // a page's `snapshot` member
PushOrigin origin_from(const nlohmann::json& o);       // a page's `origin` member
}  // namespace json_doc

// Documents larger than this are refused before parsing.
inline constexpr size_t kMaxDocumentBytes = 64u << 20;

}  // namespace quereus::sync

#endif  // QUEREUS_MODULES_SYNC_STORE_JSON_CODEC_H_
