// tests/fuzz/document_page_reader.cc — the oracle for sync-store's page reader: the reader as
// it was before it streamed (modules/sync-store/json_codec.cc read each page as an nlohmann
// document, then walked it). codec_fuzz checks that the streaming reader accepts and refuses
// exactly what this one does, with the same message. Not built into the module. The value,
// HLC, member, snapshot and origin readers are the module's own (json_codec.h, json_doc):
// only the walk over a whole page is kept here.
#include "document_page_reader.h"

#include "json_codec.h"

#include <map>

#include <nlohmann/json.hpp>

namespace quereus::sync {
namespace {

using nlohmann::json;

using json_doc::At;
using json_doc::bad;
using json_doc::hlc_from;
using json_doc::member;
using json_doc::origin_from;
using json_doc::snapshot_from;
using json_doc::string_member;
using json_doc::value_from_json;

Change change_from(const json& c, const std::string& cp) {
  if (!c.is_object()) bad(cp, "not an object");
  Change ch;
  std::string type = string_member(c, "type", cp);
  if (type == "delete") ch.kind = Change::Kind::kDelete;
  else if (type == "column") ch.kind = Change::Kind::kColumn;
  else if (type == "schema") ch.kind = Change::Kind::kSchema;
  else bad(cp + ".type", "'" + type + "' is none of 'column', 'delete', 'schema'");
  ch.schema = string_member(c, "schema", cp);
  ch.table = string_member(c, "table", cp);
  ch.hlc = hlc_from(member(c, "hlc", cp), At{cp, ".hlc"});
  if (ch.kind == Change::Kind::kSchema) {
    ch.inc = hlc_from(member(c, "inc", cp), At{cp, ".inc"});
    ch.object = string_member(c, "object", cp);
    if (ch.object.empty() || ch.object.size() > 4096) bad(cp + ".object", "empty, or longer than 4096 bytes");
    if (auto it = c.find("text"); it != c.end()) {
      if (!it->is_string()) bad(cp + ".text", "not a string");
      ch.text = it->get<std::string>();
    }
    if (auto it = c.find("drop"); it != c.end()) {
      if (!it->is_boolean()) bad(cp + ".drop", "not a boolean");
      ch.drop = it->get<bool>();
    }
    if (auto it = c.find("born"); it != c.end()) ch.born = hlc_from(*it, At{cp, ".born"});
    if (auto it = c.find("seen"); it != c.end()) ch.seen_delete = hlc_from(*it, At{cp, ".seen"});
    if (auto it = c.find("from"); it != c.end()) {
      if (!it->is_string()) bad(cp + ".from", "not a string");
      ch.from = it->get<std::string>();
    }
    return ch;
  }
  const json& pk = member(c, "pk", cp);
  // Empty for a singleton table's row (`primary key ()`): its key is the table alone.
  if (!pk.is_array()) bad(cp + ".pk", "not an array");
  for (size_t p = 0; p < pk.size(); ++p) ch.pk.push_back(value_from_json(pk[p], At{cp, ".pk", static_cast<long>(p)}));
  if (ch.kind == Change::Kind::kColumn) {
    ch.column = string_member(c, "column", cp);
    ch.value = value_from_json(member(c, "value", cp), At{cp, ".value"});
    if (auto it = c.find("seenDelete"); it != c.end()) ch.seen_delete = hlc_from(*it, At{cp, ".seenDelete"});
  }
  return ch;
}

}  // namespace

std::vector<ChangeSet> document_sets_from_json(std::string_view text, std::optional<SnapshotChunk>* snapshot,
                                               std::optional<PushOrigin>* origin, std::vector<Hlc>* frontier) {
  if (text.size() > kMaxDocumentBytes)
    bad("$", "the document is " + std::to_string(text.size()) + " bytes, above the limit of " +
                 std::to_string(kMaxDocumentBytes));
  json doc = json::parse(text.begin(), text.end(), nullptr, false);
  if (doc.is_discarded()) bad("$", "not JSON");
  const json* sets = &doc;
  if (doc.is_object()) sets = &member(doc, "changeSets", "$");
  if (snapshot && doc.is_object())
    if (auto it = doc.find("snapshot"); it != doc.end() && !it->is_null()) *snapshot = snapshot_from(*it);
  if (origin && doc.is_object())
    if (auto it = doc.find("origin"); it != doc.end() && !it->is_null()) *origin = origin_from(*it);
  if (frontier && doc.is_object())
    if (auto f = doc.find("frontier"); f != doc.end() && !f->is_null()) {
      if (!f->is_array()) bad("$.frontier", "not an array");
      const std::string root = "$";
      for (size_t i = 0; i < f->size(); ++i) frontier->push_back(hlc_from((*f)[i], At{root, ".frontier", static_cast<long>(i)}));
    }
  if (!sets->is_array()) bad("$.changeSets", "not an array");
  std::vector<ChangeSet> out;
  out.reserve(sets->size());
  for (size_t i = 0; i < sets->size(); ++i) {
    const json& s = (*sets)[i];
    const std::string path = "$.changeSets[" + std::to_string(i) + "]";
    if (!s.is_object()) bad(path, "not an object");
    ChangeSet cs;
    auto site = SiteId::parse(string_member(s, "siteId", path));
    if (!site) bad(path + ".siteId", "not a 22-character base64url site id");
    cs.site = *site;
    cs.transaction_id = string_member(s, "transactionId", path);
    cs.hlc = hlc_from(member(s, "hlc", path), At{path, ".hlc"});
    const json& changes = member(s, "changes", path);
    if (!changes.is_array()) bad(path + ".changes", "not an array");
    cs.changes.reserve(changes.size());
    for (size_t k = 0; k < changes.size(); ++k) {
      cs.changes.push_back(change_from(changes[k], path + ".changes[" + std::to_string(k) + "]"));
    }
    if (auto it = s.find("incarnations"); it != s.end()) {
      // [[schema, table, incarnation, {column: birth}?], …]: the rows' tables, by identity,
      // and their columns by birth.
      if (!it->is_array()) bad(path + ".incarnations", "not an array");
      std::map<std::pair<std::string, std::string>, std::pair<Hlc, std::map<std::string, Hlc>>> incs;
      for (size_t k = 0; k < it->size(); ++k) {
        const json& e = (*it)[k];
        const std::string ep = path + ".incarnations[" + std::to_string(k) + "]";
        if (!e.is_array() || (e.size() != 3 && e.size() != 4) || !e[0].is_string() || !e[1].is_string())
          bad(ep, "not [schema, table, incarnation, births?]");
        auto& entry = incs[{e[0].get<std::string>(), e[1].get<std::string>()}];
        entry.first = hlc_from(e[2], At{ep, "[2]"});
        if (e.size() == 4) {
          if (!e[3].is_object()) bad(ep + "[3]", "not an object of column births");
          for (const auto& [column, born] : e[3].items()) entry.second[column] = hlc_from(born, At{ep + "[3]", "." + column});
        }
      }
      for (Change& c : cs.changes) {
        if (c.kind == Change::Kind::kSchema) continue;
        auto f = incs.find({c.schema, c.table});
        if (f == incs.end()) continue;
        c.inc = f->second.first;
        if (c.kind == Change::Kind::kColumn)
          if (auto b = f->second.second.find(c.column); b != f->second.second.end()) c.born = b->second;
      }
    }
    out.push_back(std::move(cs));
  }
  return out;
}

Change document_change_from_json(std::string_view text) {
  json doc = json::parse(text.begin(), text.end(), nullptr, false);
  if (doc.is_discarded()) bad("$", "not JSON");
  return change_from(doc, "$");
}

}  // namespace quereus::sync
