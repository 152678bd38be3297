// libFuzzer target for the network-facing apply of sync-store (docs/sync-store.md "Apply",
// "Engine-routed apply"): the input bytes are the decisions of a generator that writes a
// peer's page — change sets of column, delete and schema changes, mostly well-formed and
// aimed at the replica's own tables and columns, often hostile (unknown tables and columns,
// wrong key arity, values of every wire type, HLCs from the far past and future, this
// replica's own site id, the zero site, DDL text that is not DDL, parts named at random) —
// and apply it through `Database::sync_apply` to a fresh sync-store replica (LevelDB in a
// per-process directory) that holds two tables with rows.
//
// Findings (each aborts with the page): a crash or sanitizer report, an INTERNAL or CORRUPT
// status from the apply or from reading the tables afterwards, a page refused as FORMAT or
// RANGE that changed anything, a `pragma integrity_check` that is not `ok`, the replica
// failing to open again, or reading back different tables or rows (values and their types,
// every table) after the reopen; and, for a page without schema changes that applied, a
// second apply of the same page changing any row (an apply is idempotent: sync-brief.md §5).
//
// Replay: QUEREUS_SYNC_FUZZ_PRINT=1 build-fuzz/sync_apply_fuzz FILE prints the page and
// the outcome.
#include <fuzzer/FuzzedDataProvider.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/registry.h"
#include "common/status.h"
#include "hlc.h"
#include "main/database.h"
#include "plugin/plugin_loader.h"
#include "scratch_dir.h"

namespace {

using nlohmann::json;
using quereus::sync::Hlc;
using quereus::sync::SiteId;

bool print_mode() {
  static const bool on = [] {
    const char* v = std::getenv("QUEREUS_SYNC_FUZZ_PRINT");
    return v && *v && std::string(v) != "0";
  }();
  return on;
}

std::string page_text;  // the input's page, for a finding's report

[[noreturn]] void finding(const std::string& what, const quereus::Status& s) {
  std::fprintf(stderr, "\nsync_apply_fuzz: %s\n  status: %s\n  page: %s\n", what.c_str(), s.to_string().c_str(),
               page_text.c_str());
  std::abort();
}

bool broken(const quereus::Status& s) {
  return s.code() == quereus::StatusCode::kInternal || s.code() == quereus::StatusCode::kCorrupt;
}

// Every row of a query as one text (a finding compares them); INTERNAL / CORRUPT abort.
std::string dump(quereus::Database& db, const std::string& sql) {
  std::vector<std::unique_ptr<quereus::Statement>> stmts;
  quereus::Status s = db.prepare(sql, &stmts);
  if (broken(s)) finding("preparing '" + sql + "'", s);
  if (!s.ok() || stmts.size() != 1) return "(" + s.to_string() + ")";
  std::string out;
  bool has_row = false;
  while ((s = stmts[0]->step(&has_row)).ok() && has_row) {
    for (const auto& v : stmts[0]->row()) {
      std::string text = v.is_null() ? std::string() : v.to_text();
      if (v.type() == quereus::ValueType::kBlob) {  // as hex: a report is printed as text
        static const char* kHex = "0123456789abcdef";
        std::string hex;
        for (unsigned char ch : text) hex += {kHex[ch >> 4], kHex[ch & 15]};
        text = hex;
      }
      out += std::string(quereus::value_type_name(v.type())) + ":" + text + "|";
    }
    out += "\n";
  }
  if (broken(s)) finding("reading '" + sql + "'", s);
  if (!s.ok()) out += "(" + s.to_string() + ")";
  (void)stmts[0]->reset();
  return out;
}

// Every table of the replica (the page's schema changes may have made more), each row
// with its values' types.
std::string content(quereus::Database& db) {
  std::string out = dump(db, "select name, sql from schema() where type = 'table' order by name");
  std::vector<std::unique_ptr<quereus::Statement>> stmts;
  std::vector<std::string> names;
  if (db.prepare("select name from schema() where type = 'table' and schema = 'main' order by name", &stmts).ok() &&
      stmts.size() == 1) {
    bool has_row = false;
    while (stmts[0]->step(&has_row).ok() && has_row) names.push_back(stmts[0]->row()[0].to_text());
    (void)stmts[0]->reset();
  }
  for (const std::string& n : names) {
    std::string quoted = "\"";
    for (char ch : n) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    out += n + ":\n" + dump(db, "select * from main." + quoted + "\"");
  }
  return out;
}

SiteId site_of(uint8_t seed) {
  SiteId s;
  for (size_t i = 0; i < s.bytes.size(); ++i) s.bytes[i] = static_cast<uint8_t>(seed * 31 + i * 7 + 1);
  s.bytes[6] = static_cast<uint8_t>((s.bytes[6] & 0x0f) | 0x40);  // UUIDv4 stamp
  s.bytes[8] = static_cast<uint8_t>((s.bytes[8] & 0x3f) | 0x80);
  return s;
}

// The page generator: every choice comes from the input.
class PageGen {
 public:
  // A page is hostile (one malformed or out-of-bounds member refuses it whole) a quarter of
  // the time; the rest are well-formed, so that the apply itself is reached.
  PageGen(FuzzedDataProvider& in, SiteId local, uint64_t now)
      : in_(in), local_(local), now_(now), hostile_(in.ConsumeIntegralInRange(0, 3) == 0) {}

  json page() {
    json sets = json::array();
    const int n = in_.ConsumeIntegralInRange(1, 4);
    for (int i = 0; i < n && in_.remaining_bytes() > 0; ++i) sets.push_back(set());
    json p{{"changeSets", sets}, {"cursor", in_.ConsumeIntegralInRange(0, 100)}, {"hasMore", in_.ConsumeBool()}};
    if (in_.ConsumeIntegralInRange(0, 3) == 0) p["frontier"] = json::array({hlc().text()});
    return p;
  }
  bool has_schema() const { return has_schema_; }

 private:
  SiteId site() {
    switch (in_.ConsumeIntegralInRange(0, 9)) {
      case 0: return local_;        // our own changes echoed back
      case 1: return SiteId{};      // the zero site
      case 2: return site_of(in_.ConsumeIntegral<uint8_t>());
      default: return site_of(static_cast<uint8_t>(in_.ConsumeIntegralInRange(1, 2)));  // two peers
    }
  }
  Hlc hlc() {
    Hlc h;
    switch (in_.ConsumeIntegralInRange(0, 9)) {
      case 0: h.wall = 0; break;
      case 1: h.wall = now_ + in_.ConsumeIntegralInRange<uint64_t>(0, hostile_ ? 200'000 : 30'000); break;  // past the drift bound, or not
      case 2: h.wall = hostile_ ? UINT64_MAX - in_.ConsumeIntegralInRange<uint64_t>(0, 2) : now_; break;
      default: h.wall = now_ - in_.ConsumeIntegralInRange<uint64_t>(0, 10'000'000); break;
    }
    h.counter = in_.ConsumeIntegralInRange(0, 3) == 0 ? in_.ConsumeIntegral<uint16_t>() : 0;
    h.site = site_ ? *site_ : site();
    h.op_seq = in_.ConsumeIntegralInRange<uint32_t>(0, 20);
    return h;
  }
  json value() {
    switch (in_.ConsumeIntegralInRange(0, hostile_ ? 14 : 10)) {
      case 0: return nullptr;
      case 1: return in_.ConsumeIntegralInRange<int64_t>(-3, 100);
      case 2: return in_.ConsumeIntegral<int64_t>();
      case 3: return static_cast<double>(in_.ConsumeIntegralInRange(-1000, 1000)) / 8.0 + 0.125;
      case 4: return json{{"$real", in_.PickValueInArray({"NaN", "Infinity", "-Infinity"})}};
      case 5: return in_.ConsumeRandomLengthString(12);
      case 6: return in_.ConsumeBool();
      case 7: return json{{"$blob", in_.PickValueInArray({"", "AAEC", "////"})}};
      case 8: return json{{"$json", in_.PickValueInArray({"{}", "[1,2]", "{\"a\":1}", "\"s\"", "null"})}};
      case 9: case 10: return in_.PickValueInArray({"a", "b", "A", "k1", "k2", ""});
      // Hostile: what no peer writes.
      case 11: return in_.ConsumeIntegral<uint64_t>() | (uint64_t{1} << 63);  // past int64
      case 12: return in_.PickValueInArray({json::array({1, 2}), json{{"x", 1}}, json{{"$real", "bad"}}});
      case 13: return json{{"$blob", "not base64!"}};
      default: return json{{"$json", in_.PickValueInArray({"nope", ""})}};
    }
  }
  std::string table() {
    return in_.PickValueInArray({"t", "t", "t", "u", "u", "T", "zz", "", "t2", "schema"});
  }
  std::string column(const std::string& table) {
    if (in_.ConsumeIntegralInRange(0, 5) == 0) return in_.PickValueInArray({"zz", "", "ID", "rowid", "a b"});
    if (table == "u") return in_.PickValueInArray({"k", "v", "w"});
    return in_.PickValueInArray({"id", "a", "b", "c", "a"});
  }
  json pk(const std::string& table) {
    json k = json::array();
    int n = in_.ConsumeIntegralInRange(0, 9) == 0 ? in_.ConsumeIntegralInRange(0, 3) : 1;
    for (int i = 0; i < n; ++i) {
      if (in_.ConsumeBool()) k.push_back(value());
      else if (table == "u") k.push_back(in_.PickValueInArray({"k1", "k2", "k3", "K1"}));
      else k.push_back(in_.ConsumeIntegralInRange(1, 6));
    }
    return k;
  }
  json change() {
    const std::string tb = table();
    const std::string sc = in_.ConsumeIntegralInRange(0, 15) == 0 ? in_.PickValueInArray({"temp", "x", "MAIN"}) : "main";
    json c{{"schema", sc}, {"table", tb}, {"hlc", hlc().text()}};
    switch (in_.ConsumeIntegralInRange(0, 9)) {
      case 0: case 1:
        c["type"] = "delete";
        c["pk"] = pk(tb);
        break;
      case 2: {
        has_schema_ = true;
        c["type"] = "schema";
        c["inc"] = hlc().text();
        c["object"] = in_.PickValueInArray({"table", "col:a", "col:x", "col:id", "pk", "tail", "name", "idx:i1",
                                            "col:", "end:AAAB", "zz"});
        if (in_.ConsumeBool())
          c["text"] = in_.PickValueInArray(
              {"x integer null", "a text not null", "b real null", "a integer check (a > 0)", "y text default 'q'",
               "primary key (id)", "primary key (k)", "primary key ()", "t2", "t", "u",
               "create index i1 on t (a)", "create unique index i1 on t (b)", "); drop table t; --", "",
               "id integer not null", "c blob null", "x integer generated always as (id * 2)"});
        if (in_.ConsumeIntegralInRange(0, 4) == 0) c["drop"] = in_.ConsumeBool();
        if (in_.ConsumeBool()) c["born"] = hlc().text();
        if (in_.ConsumeIntegralInRange(0, 5) == 0) c["from"] = in_.PickValueInArray({"a", "b", "zz"});
        if (in_.ConsumeIntegralInRange(0, 7) == 0) c["seen"] = hlc().text();
        break;
      }
      default:
        c["type"] = "column";
        c["pk"] = pk(tb);
        c["column"] = column(tb);
        c["value"] = value();
        if (in_.ConsumeIntegralInRange(0, 5) == 0) c["seenDelete"] = hlc().text();
        break;
    }
    return c;
  }
  json set() {
    // A set's facts share one site (as a peer's transaction does), mostly.
    const SiteId s = site();
    site_ = in_.ConsumeIntegralInRange(0, 7) == 0 ? std::nullopt : std::optional<SiteId>(s);
    const Hlc base = hlc();
    json changes = json::array();
    const int n = in_.ConsumeIntegralInRange(0, 10);
    for (int i = 0; i < n && in_.remaining_bytes() > 0; ++i) changes.push_back(change());
    site_.reset();
    json st{{"siteId", s.text()}, {"transactionId", base.transaction_id()}, {"hlc", base.text()}, {"changes", changes}};
    if (hostile_ && in_.ConsumeIntegralInRange(0, 5) == 0)
      st["siteId"] = in_.PickValueInArray({"", "short", "AAAAAAAAAAAAAAAAAAAAAA"});
    return st;
  }

  FuzzedDataProvider& in_;
  SiteId local_;
  uint64_t now_;
  bool hostile_;
  std::optional<SiteId> site_;
  bool has_schema_ = false;
};

void load_plugins(quereus::PluginLoader& loader) {
  for (const char* name : {"mem", "sync-store"}) {
    quereus::Status s = loader.load(quereus::PluginSpec{name, std::nullopt, {}, "sync_apply_fuzz"});
    if (!s.ok()) {
      std::fprintf(stderr, "sync_apply_fuzz: %s\n", s.to_string().c_str());
      std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& dir = quereus::fuzz::scratch_dir("quereus-sync-fuzz");
  static const std::shared_ptr<quereus::Registry> registry = [] {
    auto r = std::make_shared<quereus::Registry>();
    static quereus::PluginLoader loader(r, {QUEREUS_FUZZ_PLUGIN_DIR});
    load_plugins(loader);
    return r;
  }();
  const std::string store_dir = dir + "/replica";
  std::error_code ec;
  std::filesystem::remove_all(store_dir, ec);
  quereus::DatabaseOptions options;
  options.statement_timeout_ms = 10'000;
  options.default_module = "sync-store";
  FuzzedDataProvider in(data, size);
  const bool replicate_schema = in.ConsumeIntegralInRange(0, 3) != 0;
  const char* unknown = in.PickValueInArray({"quarantine", "ignore", "store-and-forward"});
  options.module_options["sync-store"] = {{"path", quereus::Value::Text(store_dir)},
                                          {"sync", quereus::Value::Boolean(false)},
                                          {"replicate_schema", quereus::Value::Boolean(replicate_schema)},
                                          {"allow_resurrection", quereus::Value::Boolean(in.ConsumeBool())},
                                          {"unknown_tables", quereus::Value::Text(unknown)}};
  std::unique_ptr<quereus::Database> db;
  quereus::Status s = quereus::Database::Open(registry, options, &db);
  if (!s.ok()) finding("opening a fresh replica", s);
  for (const char* sql : {"create table t (id integer primary key, a text null, b real null, c blob null)",
                          "create table u (k text primary key, v integer check (v >= 0))",
                          "insert into t values (1, 'one', 1.5, null), (2, null, null, x'00'), (3, 'three', -2.0, null)",
                          "insert into u values ('k1', 1), ('k2', 2)"}) {
    s = db->exec(sql);
    if (!s.ok()) finding(std::string("setting up: ") + sql, s);
  }
  SiteId local = site_of(0);
  {
    std::string reply;
    if (db->sync_request("site", "{}", &reply).ok()) {
      json st = json::parse(reply, nullptr, false);
      if (st.is_object() && st.contains("siteId") && st["siteId"].is_string())
        if (auto parsed = SiteId::parse(st["siteId"].get<std::string>())) local = *parsed;
    }
  }
  const uint64_t now = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  PageGen gen(in, local, now);
  page_text = gen.page().dump(-1, ' ', false, json::error_handler_t::replace);

  // The replica's log position: a refused page records nothing to relay on either.
  auto next_seq = [&]() -> std::string {
    std::string reply;
    if (!db->sync_request("site", "{}", &reply).ok()) return "?";
    json st = json::parse(reply, nullptr, false);
    return st.is_object() && st.contains("nextSeq") ? st["nextSeq"].dump() : "?";
  };
  const std::string before = content(*db), seq_before = next_seq();
  std::string result;
  s = db->sync_apply(page_text, &result);
  if (print_mode()) std::printf("page: %s\napply: %s %s\n", page_text.c_str(), s.to_string().c_str(), result.c_str());
  if (broken(s)) finding("the apply", s);
  const std::string after = content(*db);
  // A page refused as malformed or out of bounds changes nothing, schema changes included:
  // its "before" phase and its rows are one batch (a page whose rows were refused once the
  // phase had run kept the phase until 2026-12-08; found by this fuzzer).
  if ((s.code() == quereus::StatusCode::kFormat || s.code() == quereus::StatusCode::kRange) && after != before)
    finding("a refused page changed the replica:\nbefore:\n" + before + "after:\n" + after, s);
  if ((s.code() == quereus::StatusCode::kFormat || s.code() == quereus::StatusCode::kRange) && next_seq() != seq_before)
    finding("a refused page moved the replica's log on: " + seq_before + " -> " + next_seq(), s);
  if (s.ok() && !gen.has_schema()) {
    std::string again;
    quereus::Status s2 = db->sync_apply(page_text, &again);
    if (broken(s2)) finding("the second apply of the page", s2);
    if (s2.ok() && content(*db) != after)
      finding("a second apply of the same page changed the rows:\nbefore:\n" + after + "after:\n" + content(*db), s2);
  }
  const std::string before_reopen = content(*db);
  if (dump(*db, "pragma integrity_check") != "text:ok|\n") finding("pragma integrity_check after the apply", s);
  db.reset();
  s = quereus::Database::Open(registry, options, &db);
  if (!s.ok()) finding("the replica did not open again after the apply", s);
  const std::string reopened = content(*db);
  if (reopened != before_reopen)
    finding("the rows read back differently after a reopen:\nbefore:\n" + before_reopen + "after:\n" + reopened, s);
  if (dump(*db, "pragma integrity_check") != "text:ok|\n") finding("pragma integrity_check after the reopen", s);
  if (print_mode()) std::printf("content:\n%s", reopened.c_str());
  return 0;
}
