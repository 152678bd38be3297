// modules/sync-store/json_codec.cc — JSON change batches (nlohmann/json).
#include "json_codec.h"

#include <algorithm>
#include <charconv>
#include <map>

#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

namespace quereus::sync {
namespace {

using nlohmann::json;

sdk::Error refusal(const std::string& path, const std::string& what) {
  return sdk::Error(QRS_FORMAT, "sync-store: malformed change batch at " + path + ": " + what +
                                    " (refused, nothing applied)");
}


json value_to_json(const sdk::Value& v) {
  switch (v.type()) {
    case sdk::ValueType::kNull: return nullptr;
    case sdk::ValueType::kInteger: return v.as_integer();
    case sdk::ValueType::kReal: {
      // JSON has no NaN or infinities: tagged, so they never arrive as null.
      const double d = v.as_real();
      if (std::isnan(d)) return json{{"$real", "NaN"}};
      if (std::isinf(d)) return json{{"$real", d > 0 ? "Infinity" : "-Infinity"}};
      return d;
    }
    case sdk::ValueType::kText: return std::string(v.as_text());
    case sdk::ValueType::kBoolean: return v.as_boolean();
    case sdk::ValueType::kBlob: return json{{"$blob", base64(v.bytes())}};
    case sdk::ValueType::kJson: return json{{"$json", std::string(v.bytes())}};
  }
  return nullptr;
}

}  // namespace

namespace json_doc {

std::string At::str() const {
  std::string s = base;
  s += suffix;
  if (index >= 0) s += "[" + std::to_string(index) + "]";
  return s;
}

[[noreturn]] void bad(const std::string& path, const std::string& what) { throw refusal(path, what); }

sdk::Value value_from_json(const json& j, const At& at) {
  switch (j.type()) {
    case json::value_t::null: return sdk::Value::null();
    case json::value_t::boolean: return sdk::Value::boolean(j.get<bool>());
    case json::value_t::number_integer: return sdk::Value::integer(j.get<int64_t>());
    case json::value_t::number_unsigned: {
      uint64_t u = j.get<uint64_t>();
      if (u > static_cast<uint64_t>(INT64_MAX)) bad(at.str(), "an integer beyond 64 bits");
      return sdk::Value::integer(static_cast<int64_t>(u));
    }
    case json::value_t::number_float: return sdk::Value::real(j.get<double>());
    case json::value_t::string: return sdk::Value::text(j.get<std::string>());
    case json::value_t::object: {
      if (j.size() == 1 && j.contains("$blob") && j["$blob"].is_string()) {
        auto raw = base64_decode(j["$blob"].get<std::string>());
        if (!raw) bad(at.str() + ".$blob", "not base64");
        return sdk::Value::blob(std::move(*raw));
      }
      if (j.size() == 1 && j.contains("$json") && j["$json"].is_string()) return sdk::Value::json(j["$json"].get<std::string>());
      if (j.size() == 1 && j.contains("$real") && j["$real"].is_string()) {
        const std::string r = j["$real"].get<std::string>();
        if (r == "NaN") return sdk::Value::real(std::numeric_limits<double>::quiet_NaN());
        if (r == "Infinity") return sdk::Value::real(std::numeric_limits<double>::infinity());
        if (r == "-Infinity") return sdk::Value::real(-std::numeric_limits<double>::infinity());
        bad(at.str() + ".$real", "'" + r + "' is none of NaN, Infinity, -Infinity");
      }
      bad(at.str(), "an object that is neither {\"$blob\": …} nor {\"$json\": …}");
    }
    default: bad(at.str(), "not a value");
  }
}

Hlc hlc_from(const json& j, const At& at) {
  if (!j.is_string()) bad(at.str(), "an HLC must be a base64 string");
  auto h = Hlc::parse(j.get<std::string>());
  if (!h) bad(at.str(), "not the base64 of a 30-byte HLC");
  return *h;
}

const json& member(const json& obj, const char* name, const std::string& path) {
  auto it = obj.find(name);
  if (it == obj.end()) bad(path, std::string("missing member '") + name + "'");
  return *it;
}

std::string string_member(const json& obj, const char* name, const std::string& path) {
  const json& v = member(obj, name, path);
  if (!v.is_string()) bad(path + "." + name, "not a string");
  return v.get<std::string>();
}

SnapshotChunk snapshot_from(const json& s) {
  const std::string path = "$.snapshot";
  if (!s.is_object()) bad(path, "not an object");
  SnapshotChunk c;
  auto site = SiteId::parse(string_member(s, "source", path));
  if (!site) bad(path + ".source", "not a 22-character base64url site id");
  c.source = *site;
  for (auto [name, out] : {std::pair{"after", &c.after}, std::pair{"next", &c.next}}) {
    std::optional<std::string> k = base64_decode(string_member(s, name, path));
    if (!k) bad(path + "." + name, "not base64");
    *out = std::move(*k);
  }
  const json& done = member(s, "done", path);
  if (!done.is_boolean()) bad(path + ".done", "not a boolean");
  c.done = done.get<bool>();
  if (auto k = s.find("keyEpoch"); k != s.end()) {
    if (!k->is_string()) bad(path + ".keyEpoch", "not a string");
    c.key_epoch = k->get<std::string>();
  }
  if (auto h = s.find("holds"); h != s.end()) {
    if (!h->is_boolean()) bad(path + ".holds", "not a boolean");
    c.holds = h->get<bool>();
  }
  if (auto f = s.find("frontier"); f != s.end()) {
    if (!f->is_array()) bad(path + ".frontier", "not an array");
    for (size_t i = 0; i < f->size(); ++i)
      c.frontier.push_back(hlc_from((*f)[i], At{path, ".frontier", static_cast<long>(i)}));
  }
  return c;
}

PushOrigin origin_from(const json& o) {
  const std::string path = "$.origin";
  if (!o.is_object()) bad(path, "not an object");
  PushOrigin p;
  auto site = SiteId::parse(string_member(o, "site", path));
  if (!site) bad(path + ".site", "not a 22-character base64url site id");
  p.site = *site;
  for (auto [name, out] : {std::pair{"after", &p.after}, std::pair{"through", &p.through}}) {
    const json& v = member(o, name, path);
    if (!v.is_number_unsigned()) bad(path + "." + name, "not a log position (an unsigned integer)");
    *out = v.get<uint64_t>();
  }
  if (p.through < p.after) bad(path + ".through", "before `after`");
  return p;
}

}  // namespace json_doc

using json_doc::At;
using json_doc::bad;
using json_doc::hlc_from;
using json_doc::member;
using json_doc::origin_from;
using json_doc::snapshot_from;
using json_doc::string_member;
using json_doc::value_from_json;

void append_json_string(std::string& out, std::string_view s) {
  for (unsigned char c : s)
    if (c >= 0x80) {  // nlohmann's dump checks the UTF-8 (and throws as before on bad bytes)
      out += json(std::string(s)).dump();
      return;
    }
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += "\\u00";
          out.push_back(kHex[(c >> 4) & 0xF]);
          out.push_back(kHex[c & 0xF]);
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

void append_value_json(std::string& out, const qrs_value& v) {
  auto bytes = [&] { return std::string_view(v.u.str.data, v.u.str.len); };
  switch (v.type) {
    case QRS_TYPE_INTEGER: {
      char buf[24];
      out.append(buf, std::to_chars(buf, buf + sizeof buf, v.u.integer).ptr);
      return;
    }
    case QRS_TYPE_REAL: {
      const double d = v.u.real;
      if (std::isnan(d)) out += "{\"$real\":\"NaN\"}";
      else if (std::isinf(d)) out += d > 0 ? "{\"$real\":\"Infinity\"}" : "{\"$real\":\"-Infinity\"}";
      else {
        // The shortest text that reads back as `d`, always with a fraction or an exponent
        // (a reader takes "2" for an INTEGER).
        char buf[32];
        char* end = std::to_chars(buf, buf + sizeof buf, d).ptr;
        out.append(buf, end);
        if (std::string_view(buf, end - buf).find_first_of(".e") == std::string_view::npos) out += ".0";
      }
      return;
    }
    case QRS_TYPE_TEXT: append_json_string(out, bytes()); return;
    case QRS_TYPE_BOOLEAN: out += v.u.boolean ? "true" : "false"; return;
    case QRS_TYPE_BLOB:
      out += "{\"$blob\":\"";
      out += base64(bytes());
      out += "\"}";
      return;
    case QRS_TYPE_JSON:
      out += "{\"$json\":";
      append_json_string(out, bytes());
      out += "}";
      return;
    default: out += "null"; return;
  }
}

std::string value_json(const sdk::Value& v) { return value_to_json(v).dump(); }
nlohmann::json value_json_object(const sdk::Value& v) { return value_to_json(v); }

static json change_object(const Change& c) {
  json o{{"type", c.kind == Change::Kind::kDelete   ? "delete"
                  : c.kind == Change::Kind::kSchema ? "schema"
                                                    : "column"},
         {"schema", c.schema},
         {"table", c.table},
         {"hlc", c.hlc.text()}};
  if (c.kind == Change::Kind::kSchema) {
    o["inc"] = c.inc.text();
    o["object"] = c.object;
    if (!c.text.empty()) o["text"] = c.text;
    if (c.drop) o["drop"] = true;
    if (c.born) o["born"] = c.born->text();
    if (c.seen_delete) o["seen"] = c.seen_delete->text();
    if (!c.from.empty()) o["from"] = c.from;
    return o;
  }
  json pk = json::array();
  for (const sdk::Value& v : c.pk) pk.push_back(value_to_json(v));
  o["pk"] = std::move(pk);
  if (c.kind == Change::Kind::kColumn) {
    o["column"] = c.column;
    o["value"] = value_to_json(c.value);
    if (c.seen_delete) o["seenDelete"] = c.seen_delete->text();
  }
  return o;
}

std::string change_to_json(const Change& c) { return change_object(c).dump(); }

std::string batch_to_json(const ChangeBatch& batch) { return batch_json(batch).dump(); }

json batch_json(const ChangeBatch& batch) {
  json sets = json::array();
  for (const ChangeSet& s : batch.sets) {
    json changes = json::array();
    // The incarnation of each table whose rows the set holds, once per set, with the birth
    // of each column its facts name (a column is known by its birth across renames).
    std::map<std::pair<std::string, std::string>, std::pair<Hlc, std::map<std::string, Hlc>>> incs;
    for (const Change& c : s.changes) {
      changes.push_back(change_object(c));
      if (c.kind == Change::Kind::kSchema || c.inc == Hlc{}) continue;
      auto& entry = incs[std::make_pair(c.schema, c.table)];
      entry.first = c.inc;
      if (c.kind == Change::Kind::kColumn && c.born) entry.second.emplace(c.column, *c.born);
    }
    json set{{"siteId", s.site.text()}, {"transactionId", s.transaction_id}, {"hlc", s.hlc.text()},
             {"changes", std::move(changes)}};
    if (!incs.empty()) {
      json list = json::array();
      for (const auto& [t, e] : incs) {
        json item = json::array({t.first, t.second, e.first.text()});
        if (!e.second.empty()) {
          json births = json::object();
          for (const auto& [column, born] : e.second) births[column] = born.text();
          item.push_back(std::move(births));
        }
        list.push_back(std::move(item));
      }
      set["incarnations"] = std::move(list);
    }
    sets.push_back(std::move(set));
  }
  json out{{"changeSets", std::move(sets)}, {"cursor", batch.cursor}, {"hasMore", batch.has_more}};
  if (batch.snapshot_required) out["snapshotRequired"] = true;
  if (batch.origin)
    out["origin"] = {{"site", batch.origin->site.text()}, {"after", batch.origin->after}, {"through", batch.origin->through}};
  if (!batch.frontier.empty()) {
    json f = json::array();
    for (const Hlc& h : batch.frontier) f.push_back(h.text());
    out["frontier"] = std::move(f);
  }
  return out;
}

// ---- Reading pages: a streaming parse straight into change sets.
//
// nlohmann's SAX parser lexes exactly as its document parser does (strings, numbers,
// strictness); the reader below builds the change sets as the events come, with no document
// of the page (a 100,000-fact page's document cost more than the rest of reading it, and its
// free as much again). It refuses exactly what the document reader refused, with the same
// message: each object's members are checked when it closes, on each member's last value (a
// repeated member counts once, the last, as in a document), in the order the document
// reader checked them; the first failure is kept, and thrown only once the whole text has
// parsed (a syntax error anywhere still reads "not JSON"). The rare members that are not
// facts (snapshot, origin, frontier, incarnations) and any value that is not a scalar where
// a fact expects one are built as small documents and checked by the helpers above.
// The oracle is the document reader itself: tests/fuzz/codec_fuzz.cc compares the two.
namespace {

// Builds one small document from the events of one value.
class DomBuilder {
 public:
  void scalar(json v) { place(std::move(v)); }
  void open(bool object) { stack_.push_back(place(object ? json(json::value_t::object) : json(json::value_t::array))); }
  void key(const std::string& k) { element_ = &(*stack_.back())[k]; }  // a repeated key: the last value
  void close() { stack_.pop_back(); }
  bool complete() const { return stack_.empty(); }
  json take() { return std::move(root_); }

 private:
  json* place(json v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    json& top = *stack_.back();
    if (top.is_array()) {
      top.push_back(std::move(v));
      return &top.back();
    }
    *element_ = std::move(v);
    return element_;
  }
  json root_;
  std::vector<json*> stack_;  // the open containers, outermost first
  json* element_ = nullptr;   // the member the next value of the innermost object goes to
};

class PageReader {
 public:
  // kPage: a page (sets_from_json). kChange: one change object (change_from_json).
  enum class Mode { kPage, kChange };
  // `facts_at_most`: an upper bound on the page's changes, which the first set's list
  // reserves (a page is often one big transaction: its list then never grows and moves).
  PageReader(Mode mode, bool want_snapshot, bool want_origin, bool want_frontier, size_t facts_at_most = 0)
      : mode_(mode), want_{want_snapshot, want_origin, want_frontier}, facts_at_most_(facts_at_most) {}

  // The SAX interface (nlohmann::json::sax_parse). The host's plan reader (host/engine/main/
  // sync_apply.cc) has the same scalar callbacks: a deliberate copy, since the module includes
  // only sdk/include/ and the SDK does not carry nlohmann's types.
  bool null() { return scalar(Scalar{Scalar::kNull}); }
  bool boolean(bool b) {
    Scalar s{Scalar::kBool};
    s.b = b;
    return scalar(s);
  }
  bool number_integer(int64_t i) {
    Scalar s{Scalar::kInt};
    s.i = i;
    return scalar(s);
  }
  bool number_unsigned(uint64_t u) {
    Scalar s{Scalar::kUint};
    s.u = u;
    return scalar(s);
  }
  bool number_float(double d, const std::string&) {
    Scalar s{Scalar::kFloat};
    s.d = d;
    return scalar(s);
  }
  bool string(std::string& text) {
    Scalar s{Scalar::kString};
    s.s = &text;
    return scalar(s);
  }
  bool binary(json::binary_t&) { return false; }  // never from JSON text
  bool start_object(std::size_t) { return open(true); }
  bool start_array(std::size_t) { return open(false); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(std::string& k) {
    if (skip_) return true;
    if (in_dom_) {
      dom_.key(k);
      return true;
    }
    frames_.back().member = member_of(frames_.back().kind, k);
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const json::exception&) { return false; }

  // After a successful parse: the change sets, or the first failure the document reader
  // would have reported.
  std::vector<ChangeSet> sets(std::optional<SnapshotChunk>* snapshot, std::optional<PushOrigin>* origin,
                              std::vector<Hlc>* frontier) {
    if (root_object_) {
      if (!have_sets_) bad("$", "missing member 'changeSets'");
      const Slot& sn = slots_[kSnapshot];
      if (snapshot && sn.present && !sn.dom.is_null()) *snapshot = snapshot_from(sn.dom);
      const Slot& o = slots_[kOrigin];
      if (origin && o.present && !o.dom.is_null()) *origin = origin_from(o.dom);
      const Slot& f = slots_[kFrontier];
      if (frontier && f.present && !f.dom.is_null()) {
        if (!f.dom.is_array()) bad("$.frontier", "not an array");
        const std::string root = "$";
        for (size_t i = 0; i < f.dom.size(); ++i)
          frontier->push_back(hlc_from(f.dom[i], At{root, ".frontier", static_cast<long>(i)}));
      }
    }
    if (sets_not_array_) bad("$.changeSets", "not an array");
    if (set_error_) throw *set_error_;
    return std::move(sets_);
  }
  Change change() {
    if (change_error_) throw *change_error_;
    return std::move(changes_.front());
  }

 private:
  enum class Frame { kRoot, kTop, kSets, kSet, kChanges, kChange, kPk };
  // The members read, of a page, a set and a change; kOther is any other (skipped).
  enum Member : uint8_t {
    kOther,
    kChangeSets, kSnapshot, kOrigin, kFrontier,                     // the page
    kSiteId, kTransactionId, kSetHlc, kChangesMember, kIncarnations,  // a set
    kType, kSchema, kTable, kHlc, kInc, kObject, kText, kDrop, kBorn, kSeen, kFrom, kPk, kColumn, kValue,
    kSeenDelete,  // a change
    kMemberCount
  };
  struct Open {
    Frame kind;
    Member member = kOther;
  };
  struct Scalar {
    enum Kind { kNull, kBool, kInt, kUint, kFloat, kString } kind;
    bool b = false;
    int64_t i = 0;
    uint64_t u = 0;
    double d = 0;
    std::string* s = nullptr;
    json to_json() const {
      switch (kind) {
        case kNull: return nullptr;
        case kBool: return b;
        case kInt: return i;
        case kUint: return u;
        case kFloat: return d;
        case kString: return *s;
      }
      return nullptr;
    }
  };
  // A member's last value: a string kept as it is (the common case), anything else as a
  // small document.
  struct Slot {
    bool present = false;
    bool is_string = false;
    std::string str;
    json dom;
  };

  static Member member_of(Frame f, const std::string& k) {
    switch (f) {
      case Frame::kTop:
        if (k == "changeSets") return kChangeSets;
        if (k == "snapshot") return kSnapshot;
        if (k == "origin") return kOrigin;
        if (k == "frontier") return kFrontier;
        return kOther;
      case Frame::kSet:
        if (k == "changes") return kChangesMember;
        if (k == "siteId") return kSiteId;
        if (k == "transactionId") return kTransactionId;
        if (k == "hlc") return kSetHlc;
        if (k == "incarnations") return kIncarnations;
        return kOther;
      case Frame::kChange:
        switch (k.size()) {
          case 2: return k == "pk" ? kPk : kOther;
          case 3: return k == "hlc" ? kHlc : k == "inc" ? kInc : kOther;
          case 4: return k == "type" ? kType : k == "text" ? kText : k == "drop" ? kDrop : k == "born" ? kBorn
                         : k == "seen" ? kSeen : k == "from" ? kFrom : kOther;
          case 5: return k == "table" ? kTable : k == "value" ? kValue : kOther;
          case 6: return k == "schema" ? kSchema : k == "column" ? kColumn : k == "object" ? kObject : kOther;
          case 10: return k == "seenDelete" ? kSeenDelete : kOther;
          default: return kOther;
        }
      default: return kOther;
    }
  }

  // Paths, spelled out only when a check fails.
  std::string set_path() const { return "$.changeSets[" + std::to_string(set_index_) + "]"; }
  std::string change_path() const {
    return mode_ == Mode::kChange ? std::string("$") : set_path() + ".changes[" + std::to_string(change_index_) + "]";
  }

  // A scalar where a fact's value is read (a key value or a column's value).
  sdk::Value value_of(const Scalar& s, const char* suffix, long index) {
    switch (s.kind) {
      case Scalar::kNull: return sdk::Value::null();
      case Scalar::kBool: return sdk::Value::boolean(s.b);
      case Scalar::kInt: return sdk::Value::integer(s.i);
      case Scalar::kUint:
        if (s.u > static_cast<uint64_t>(INT64_MAX)) {
          const std::string cp = change_path();
          bad(At{cp, suffix, index}.str(), "an integer beyond 64 bits");
        }
        return sdk::Value::integer(static_cast<int64_t>(s.u));
      case Scalar::kFloat: return sdk::Value::real(s.d);
      case Scalar::kString: return sdk::Value::text(*s.s);
    }
    return sdk::Value::null();
  }
  sdk::Value value_of(const json& j, const char* suffix, long index) {
    const std::string cp = change_path();
    return value_from_json(j, At{cp, suffix, index});
  }
  // A key value or a column's value is read as it comes; a failure is kept (the first of a
  // key, by position) and thrown if the change is read.
  template <class V>
  void take_value(const V& v) {
    const bool pk = frames_.back().kind == Frame::kPk;
    try {
      if (pk) {
        pk_.push_back(value_of(v, ".pk", static_cast<long>(pk_.size())));
      } else {
        value_ = value_of(v, ".value", -1);
      }
    } catch (const sdk::Error& e) {
      if (pk) {
        if (!pk_error_) pk_error_ = e;
        pk_.emplace_back();
      } else {
        value_error_ = e;
      }
    }
  }

  void store(Slot& slot, const Scalar& s) {
    slot.present = true;
    slot.is_string = s.kind == Scalar::kString;
    if (slot.is_string) slot.str.assign(*s.s);
    else slot.dom = s.to_json();
  }
  void store_document(Slot& slot, const Scalar& s) {
    slot.present = true;
    slot.is_string = false;
    slot.dom = s.to_json();
  }
  void begin_dom(Slot* slot) {
    in_dom_ = true;
    dom_slot_ = slot;
  }
  void end_dom() {
    in_dom_ = false;
    if (dom_slot_) {
      dom_slot_->present = true;
      dom_slot_->is_string = false;
      dom_slot_->dom = dom_.take();
    } else {
      take_value(dom_.take());
    }
  }
  void skip_value() { skip_ = 1; }

  void reset_set() {
    for (int m = kSiteId; m <= kIncarnations; ++m) slots_[m].present = false;
    have_changes_ = changes_not_array_ = false;
    changes_.clear();
    change_error_.reset();
    change_index_ = 0;
  }
  void reset_change() {
    for (int m = kType; m < kMemberCount; ++m) slots_[m].present = false;
    have_pk_ = pk_not_array_ = false;
    pk_.clear();
    pk_error_.reset();
    have_value_ = false;
    value_error_.reset();
  }

  // A value begins where the innermost open object or array is: a scalar (`s`), or an
  // object or array (`s` null, `object` says which). Returns whether to descend into it.
  void begin_value(const Scalar* s, bool object) {
    Open& top = frames_.back();
    switch (top.kind) {
      case Frame::kRoot:
        if (mode_ == Mode::kChange) {
          if (s || !object) {
            change_error_ = refusal("$", "not an object");
            if (!s) skip_value();
            return;
          }
          reset_change();
          frames_.push_back({Frame::kChange});
          return;
        }
        if (s) {
          sets_not_array_ = true;
        } else if (object) {
          root_object_ = true;
          frames_.push_back({Frame::kTop});
        } else {
          frames_.push_back({Frame::kSets});
        }
        return;
      case Frame::kTop:
        switch (top.member) {
          case kChangeSets:
            have_sets_ = true;
            sets_.clear();
            set_error_.reset();
            set_index_ = 0;
            sets_not_array_ = s || object;
            if (!s) {
              if (object) skip_value();
              else frames_.push_back({Frame::kSets});
            }
            return;
          case kSnapshot:
          case kOrigin:
          case kFrontier:
            if (!want_[top.member - kSnapshot]) break;
            if (s) store_document(slots_[top.member], *s);
            else begin_dom(&slots_[top.member]);
            return;
          default: break;
        }
        if (!s) skip_value();
        return;
      case Frame::kSets:
        if (!s && object) {
          reset_set();
          frames_.push_back({Frame::kSet});
          return;
        }
        if (!set_error_) set_error_ = refusal(set_path(), "not an object");
        ++set_index_;
        if (!s) skip_value();
        return;
      case Frame::kSet:
        switch (top.member) {
          case kChangesMember:
            have_changes_ = true;
            changes_.clear();
            change_error_.reset();
            change_index_ = 0;
            changes_not_array_ = s || object;
            if (!s) {
              if (object) {
                skip_value();
              } else {
                if (set_index_ == 0) changes_.reserve(facts_at_most_);
                frames_.push_back({Frame::kChanges});
              }
            }
            return;
          case kSiteId:
          case kTransactionId:
          case kSetHlc:
          case kIncarnations:
            if (s) store(slots_[top.member], *s);
            else begin_dom(&slots_[top.member]);
            return;
          default:
            if (!s) skip_value();
            return;
        }
      case Frame::kChanges:
        if (!s && object) {
          reset_change();
          frames_.push_back({Frame::kChange});
          return;
        }
        if (!change_error_) change_error_ = refusal(change_path(), "not an object");
        ++change_index_;
        if (!s) skip_value();
        return;
      case Frame::kChange:
        switch (top.member) {
          case kPk:
            have_pk_ = true;
            pk_.clear();
            pk_error_.reset();
            pk_not_array_ = s || object;
            if (!s) {
              if (object) skip_value();
              else frames_.push_back({Frame::kPk});
            }
            return;
          case kValue:
            have_value_ = true;
            value_error_.reset();
            if (s) take_value(*s);
            else begin_dom(nullptr);
            return;
          case kOther:
            if (!s) skip_value();
            return;
          default:
            if (s) store(slots_[top.member], *s);
            else begin_dom(&slots_[top.member]);
            return;
        }
      case Frame::kPk:
        if (s) take_value(*s);
        else begin_dom(nullptr);
        return;
    }
  }

  bool scalar(const Scalar& s) {
    if (skip_) return true;
    if (in_dom_) {
      dom_.scalar(s.to_json());
      if (dom_.complete()) end_dom();
      return true;
    }
    begin_value(&s, false);
    return true;
  }
  bool open(bool object) {
    if (skip_) {
      ++skip_;
      return true;
    }
    if (in_dom_) {
      dom_.open(object);
      return true;
    }
    begin_value(nullptr, object);
    if (in_dom_) dom_.open(object);
    return true;
  }
  bool close() {
    if (skip_) {
      --skip_;
      return true;
    }
    if (in_dom_) {
      dom_.close();
      if (dom_.complete()) end_dom();
      return true;
    }
    const Frame f = frames_.back().kind;
    frames_.pop_back();
    if (f == Frame::kSet) {
      end_set();
      ++set_index_;
    } else if (f == Frame::kChange) {
      end_change();
      ++change_index_;
    }
    return true;
  }

  // The checks of a change, in the document reader's order.
  void need(Member m, const char* name) {
    if (!slots_[m].present) bad(change_path(), std::string("missing member '") + name + "'");
  }
  std::string string_of(Member m, const char* name) {
    need(m, name);
    if (!slots_[m].is_string) bad(change_path() + "." + name, "not a string");
    return std::move(slots_[m].str);
  }
  Hlc hlc_of(const Slot& slot, const std::string& path, const char* suffix) {
    if (!slot.is_string) bad(At{path, suffix}.str(), "an HLC must be a base64 string");
    auto h = Hlc::parse(slot.str);
    if (!h) bad(At{path, suffix}.str(), "not the base64 of a 30-byte HLC");
    return *h;
  }
  Hlc hlc_of(Member m, const char* name, const char* suffix) {
    need(m, name);
    return hlc_of(slots_[m], change_path(), suffix);
  }
  Change read_change() {
    Change ch;
    const std::string type = string_of(kType, "type");
    if (type == "delete") ch.kind = Change::Kind::kDelete;
    else if (type == "column") ch.kind = Change::Kind::kColumn;
    else if (type == "schema") ch.kind = Change::Kind::kSchema;
    else bad(change_path() + ".type", "'" + type + "' is none of 'column', 'delete', 'schema'");
    ch.schema = string_of(kSchema, "schema");
    ch.table = string_of(kTable, "table");
    ch.hlc = hlc_of(kHlc, "hlc", ".hlc");
    if (ch.kind == Change::Kind::kSchema) {
      ch.inc = hlc_of(kInc, "inc", ".inc");
      ch.object = string_of(kObject, "object");
      if (ch.object.empty() || ch.object.size() > 4096) bad(change_path() + ".object", "empty, or longer than 4096 bytes");
      if (Slot& t = slots_[kText]; t.present) {
        if (!t.is_string) bad(change_path() + ".text", "not a string");
        ch.text = std::move(t.str);
      }
      if (Slot& d = slots_[kDrop]; d.present) {
        if (d.is_string || !d.dom.is_boolean()) bad(change_path() + ".drop", "not a boolean");
        ch.drop = d.dom.get<bool>();
      }
      if (slots_[kBorn].present) ch.born = hlc_of(slots_[kBorn], change_path(), ".born");
      if (slots_[kSeen].present) ch.seen_delete = hlc_of(slots_[kSeen], change_path(), ".seen");
      if (Slot& f = slots_[kFrom]; f.present) {
        if (!f.is_string) bad(change_path() + ".from", "not a string");
        ch.from = std::move(f.str);
      }
      return ch;
    }
    // Empty for a singleton table's row (`primary key ()`): its key is the table alone.
    if (!have_pk_) bad(change_path(), "missing member 'pk'");
    if (pk_not_array_) bad(change_path() + ".pk", "not an array");
    if (pk_error_) throw *pk_error_;
    ch.pk = std::move(pk_);
    pk_.clear();
    if (ch.kind == Change::Kind::kColumn) {
      ch.column = string_of(kColumn, "column");
      if (!have_value_) bad(change_path(), "missing member 'value'");
      if (value_error_) throw *value_error_;
      ch.value = std::move(value_);
      if (slots_[kSeenDelete].present) ch.seen_delete = hlc_of(slots_[kSeenDelete], change_path(), ".seenDelete");
    }
    return ch;
  }
  void end_change() {
    // A set (or a `changes` list) that has already failed is not read further.
    if (set_error_ || change_error_) return;
    try {
      changes_.push_back(read_change());
    } catch (const sdk::Error& e) {
      change_error_ = e;
    }
  }

  // The checks of a set, in the document reader's order.
  ChangeSet read_set() {
    auto string_of_set = [&](Member m, const char* name) {
      if (!slots_[m].present) bad(set_path(), std::string("missing member '") + name + "'");
      if (!slots_[m].is_string) bad(set_path() + "." + name, "not a string");
      return std::move(slots_[m].str);
    };
    ChangeSet cs;
    auto site = SiteId::parse(string_of_set(kSiteId, "siteId"));
    if (!site) bad(set_path() + ".siteId", "not a 22-character base64url site id");
    cs.site = *site;
    cs.transaction_id = string_of_set(kTransactionId, "transactionId");
    if (!slots_[kSetHlc].present) bad(set_path(), "missing member 'hlc'");
    cs.hlc = hlc_of(slots_[kSetHlc], set_path(), ".hlc");
    if (!have_changes_) bad(set_path(), "missing member 'changes'");
    if (changes_not_array_) bad(set_path() + ".changes", "not an array");
    if (change_error_) throw *change_error_;
    cs.changes = std::move(changes_);
    changes_.clear();
    if (cs.changes.capacity() > 2 * cs.changes.size() + 16) cs.changes.shrink_to_fit();  // reserved for more
    if (const Slot& inc = slots_[kIncarnations]; inc.present) {
      // [[schema, table, incarnation, {column: birth}?], …]: the rows' tables, by identity,
      // and their columns by birth.
      const std::string path = set_path();
      const json* it = &inc.dom;
      if (inc.is_string || !it->is_array()) bad(path + ".incarnations", "not an array");
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
    return cs;
  }
  void end_set() {
    if (set_error_) return;  // an earlier set failed: the page is refused
    try {
      sets_.push_back(read_set());
    } catch (const sdk::Error& e) {
      set_error_ = e;
    }
  }

  const Mode mode_;
  const bool want_[3];  // snapshot, origin, frontier: asked for by the caller
  const size_t facts_at_most_;
  std::vector<Open> frames_{Open{Frame::kRoot}};
  int skip_ = 0;  // inside a value not read: its depth
  bool in_dom_ = false;
  DomBuilder dom_;
  Slot* dom_slot_ = nullptr;  // where the document goes; null: a fact's value
  Slot slots_[kMemberCount];

  // The page.
  bool root_object_ = false, have_sets_ = false, sets_not_array_ = false;
  std::vector<ChangeSet> sets_;
  std::optional<sdk::Error> set_error_;  // the first set that failed
  size_t set_index_ = 0;
  // The set being read.
  bool have_changes_ = false, changes_not_array_ = false;
  std::vector<Change> changes_;
  std::optional<sdk::Error> change_error_;  // the first change that failed
  size_t change_index_ = 0;
  // The change being read.
  bool have_pk_ = false, pk_not_array_ = false, have_value_ = false;
  std::vector<sdk::Value> pk_;
  std::optional<sdk::Error> pk_error_, value_error_;
  sdk::Value value_;
};

}  // namespace

Change change_from_json(std::string_view text) {
  PageReader r(PageReader::Mode::kChange, false, false, false);
  if (!json::sax_parse(text.begin(), text.end(), &r)) bad("$", "not JSON");
  return r.change();
}

std::vector<ChangeSet> sets_from_json(std::string_view text, std::optional<SnapshotChunk>* snapshot,
                                      std::optional<PushOrigin>* origin, std::vector<Hlc>* frontier) {
  if (text.size() > kMaxDocumentBytes)
    bad("$", "the document is " + std::to_string(text.size()) + " bytes, above the limit of " +
                 std::to_string(kMaxDocumentBytes));
  // Every change has a "type" member, and no change takes fewer than 64 bytes: a bound on
  // the page's changes that a hostile page cannot raise past its size allows.
  size_t types = 0;
  for (size_t at = text.find("\"type\""); at != std::string_view::npos; at = text.find("\"type\"", at + 6)) ++types;
  PageReader r(PageReader::Mode::kPage, snapshot != nullptr, origin != nullptr, frontier != nullptr,
               std::min(types, text.size() / 64));
  if (!json::sax_parse(text.begin(), text.end(), &r)) bad("$", "not JSON");
  return r.sets(snapshot, origin, frontier);
}
std::string result_to_json(const ApplyResult& r) {
  json o{{"applied", r.applied},
         {"skipped", r.skipped},
         {"conflicts", r.conflicts},
         {"transactions", r.transactions},
         {"unknownTable", r.unknown_table},
         {"rejected", r.rejected}};
  if (r.purged) o["purged"] = r.purged;
  if (r.followed) o["followed"] = r.followed;
  if (r.restart_snapshot) o["restartSnapshot"] = true;
  if (r.push_gap) {
    o["pushGap"] = true;
    o["pushedThrough"] = *r.push_gap;
  }
  return o.dump();
}

}  // namespace quereus::sync
