// libFuzzer target for structure-aware SQL fuzzing: the input bytes are the decisions of
// a grammar-based generator (sql_grammar.h) that writes a random schema and then a
// sequence of random statements of every family the parser accepts; they run one at a
// time against a fresh in-memory database (the `mem` plugin) under ASan + UBSan.
//
// Findings: a crash or a sanitizer report (libFuzzer), an INTERNAL status from any
// statement, and a statement that runs into the engine's statement timeout (10 s) — the
// generator writes only bounded SQL. Each aborts with the statement's text.
//
// Replay: QUEREUS_GRAMMAR_FUZZ_PRINT=1 build-fuzz/grammar_fuzz FILE prints every statement
// the input generates with its outcome, as an SQL script to turn into a regression test.
//
// Store mode (QUEREUS_GRAMMAR_FUZZ_MODULE=store; scripts/fuzz.sh's `grammar-store`): the
// tables default to the `store` plugin, in a fresh LevelDB directory per input, and after
// the statements the database is closed and opened again — a reopen that fails, or a
// `pragma integrity_check` that is not `ok`, is a finding too (what was committed must
// come back whole).
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

#include "catalog/registry.h"
#include "common/status.h"
#include "main/database.h"
#include "plugin/plugin_loader.h"
#include "scratch_dir.h"
#include "sql_grammar.h"

namespace {

using quereus::fuzz::ColumnModel;
using quereus::fuzz::FunctionModel;
using quereus::fuzz::RelationModel;
using quereus::fuzz::SchemaModel;
using quereus::fuzz::Ty;

constexpr int64_t kStatementTimeoutMs = 10'000;
constexpr int64_t kRetryTimeoutMs = 60'000;  // a timed-out statement's second run
constexpr int kMaxStatements = 30;
// An input whose statements together run longer than this stops early (not a finding):
// libFuzzer's -timeout (scripts/fuzz.sh) stays well above it.
constexpr double kInputBudgetSeconds = 20.0;

bool print_mode() {
  static const bool on = [] {
    const char* v = std::getenv("QUEREUS_GRAMMAR_FUZZ_PRINT");
    return v && *v && std::string(v) != "0";
  }();
  return on;
}

bool store_mode() {
  static const bool on = [] {
    const char* v = std::getenv("QUEREUS_GRAMMAR_FUZZ_MODULE");
    return v && std::string(v) == "store";
  }();
  return on;
}

void load_plugins(quereus::PluginLoader& loader) {
  for (const char* name : {"mem", "store"}) {
    if (std::string(name) == "store" && !store_mode()) continue;
    quereus::Status s = loader.load(quereus::PluginSpec{name, std::nullopt, {}, "grammar_fuzz"});
    if (!s.ok()) {
      std::fprintf(stderr, "grammar_fuzz: %s\n", s.to_string().c_str());
      std::abort();
    }
  }
}

// Runs a read-only introspection query; rows as text (NULL as "").
std::vector<std::vector<std::string>> rows_of(quereus::Database& db, const std::string& sql) {
  std::vector<std::vector<std::string>> out;
  std::vector<std::unique_ptr<quereus::Statement>> stmts;
  if (!db.prepare(sql, &stmts).ok() || stmts.size() != 1) return out;
  bool has_row = false;
  quereus::Status s;
  while ((s = stmts[0]->step(&has_row)).ok() && has_row) {
    std::vector<std::string> r;
    for (const auto& v : stmts[0]->row()) r.push_back(v.is_null() ? "" : v.to_text());
    out.push_back(std::move(r));
  }
  if (s.code() == quereus::StatusCode::kInternal) {
    std::fprintf(stderr, "\ngrammar_fuzz: INTERNAL error\n  statement: %s;\n  status: %s\n", sql.c_str(),
                 s.to_string().c_str());
    std::abort();
  }
  (void)stmts[0]->reset();
  return out;
}

Ty type_of(const std::string& declared) {
  std::string t;
  for (char c : declared) t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (t.find("int") != std::string::npos) return Ty::kInt;
  if (t.find("real") != std::string::npos || t.find("numeric") != std::string::npos) return Ty::kReal;
  if (t.find("char") != std::string::npos || t.find("text") != std::string::npos) return Ty::kText;
  if (t.find("blob") != std::string::npos) return Ty::kBlob;
  if (t.find("bool") != std::string::npos) return Ty::kBool;
  if (t.find("json") != std::string::npos) return Ty::kJson;
  if (t == "date") return Ty::kDate;
  if (t == "time") return Ty::kTime;
  if (t == "datetime") return Ty::kDateTime;
  if (t == "timespan") return Ty::kSpan;
  return Ty::kAny;
}

// The schema as the database has it now.
SchemaModel read_schema(quereus::Database& db) {
  SchemaModel m;
  for (const auto& r : rows_of(db, "select schema, type, name from schema() where type <> 'function'")) {
    if (r.size() < 3) continue;
    std::string name = r[0] == "main" ? r[2] : r[0] + "." + r[2];
    if (r[1] == "index") {
      m.indexes.push_back(name);
      continue;
    }
    RelationModel rel;
    rel.name = name;
    if (r[1] == "table") {
      rel.kind = RelationModel::Kind::kTable;
    } else if (r[1] == "view") {
      rel.kind = RelationModel::Kind::kView;
    } else if (r[1] == "materialized_view") {
      rel.kind = RelationModel::Kind::kMaterializedView;
    } else {
      continue;
    }
    if (rel.kind == RelationModel::Kind::kView) {
      for (const auto& c : rows_of(db, "select column_name from column_info('" + name + "')"))
        if (!c.empty()) rel.columns.push_back({c[0], Ty::kAny, false, false, false});
    } else {
      for (const auto& c : rows_of(db, "select name, type, notnull, pk, generated from table_info('" + name + "')"))
        if (c.size() == 5) rel.columns.push_back({c[0], type_of(c[1]), c[2] == "1", c[3] == "1", c[4] != "0"});
    }
    m.relations.push_back(std::move(rel));
  }
  for (const auto& r : rows_of(db, "select name from assertion_info()"))
    if (!r.empty()) m.assertions.push_back(r[0]);
  return m;
}

// The registry's functions and the optimizer's pass names, read once.
struct Catalog {
  std::vector<FunctionModel> functions;
  std::vector<std::string> passes;
};

Catalog read_catalog(quereus::Database& db) {
  Catalog c;
  for (const auto& r : rows_of(db, "select name, num_args, type from function_info()")) {
    if (r.size() != 3) continue;
    // Functions that wait or read the wall clock add nothing but time and flakiness.
    if (r[0] == "sleep") continue;
    c.functions.push_back({r[0], std::stoi(r[1]), r[2]});
  }
  std::vector<std::unique_ptr<quereus::Statement>> stmts;
  quereus::Status s = db.exec("pragma optimizer_disabled_passes = 'grammar_fuzz_no_such_pass'");
  // "Unknown optimizer pass '…' (passes: a, b, c)"
  std::string msg = s.raw_message();
  size_t at = msg.find("(passes: ");
  if (at != std::string::npos) {
    std::string list = msg.substr(at + 9, msg.rfind(')') - at - 9);
    size_t pos = 0;
    while (pos < list.size()) {
      size_t comma = list.find(", ", pos);
      c.passes.push_back(list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
      if (comma == std::string::npos) break;
      pos = comma + 2;
    }
  }
  return c;
}

[[noreturn]] void finding(const char* what, const std::string& sql, const quereus::Status& s) {
  std::fprintf(stderr, "\ngrammar_fuzz: %s\n  statement: %s;\n  status: %s\n", what, sql.c_str(), s.to_string().c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static quereus::PluginLoader* keeper = [] {
    static quereus::PluginLoader l(std::make_shared<quereus::Registry>(), {QUEREUS_FUZZ_PLUGIN_DIR});
    load_plugins(l);
    return &l;
  }();
  (void)keeper;
  const std::string& file_dir = quereus::fuzz::scratch_dir("quereus-grammar-fuzz");

  auto registry = std::make_shared<quereus::Registry>();
  quereus::PluginLoader loader(registry, {QUEREUS_FUZZ_PLUGIN_DIR});
  load_plugins(loader);
  quereus::DatabaseOptions options;
  options.statement_timeout_ms = kStatementTimeoutMs;
  options.limits.max_length = 1'000'000;               // zeroblob(1e9) is a TOOBIG, not an OOM
  options.limits.max_statement_memory = 256 << 20;
  const std::string store_dir = file_dir + "/store";
  if (store_mode()) {
    std::error_code ec;
    std::filesystem::remove_all(store_dir, ec);
    options.default_module = "store";
    options.module_options["store"] = {{"path", quereus::Value::Text(store_dir)},
                                       {"sync", quereus::Value::Boolean(false)}};
  }
  std::unique_ptr<quereus::Database> db;
  if (!quereus::Database::Open(registry, options, &db).ok()) std::abort();
  static const Catalog catalog = read_catalog(*db);

  FuzzedDataProvider in(data, size);
  uint64_t seed = 14695981039346656037ull;  // FNV-1a of the input
  for (size_t i = 0; i < size; ++i) seed = (seed ^ data[i]) * 1099511628211ull;
  quereus::fuzz::SqlGrammar grammar(in, seed, catalog.functions, catalog.passes, file_dir);
  const auto started = std::chrono::steady_clock::now();
  auto run = [&](const std::string& sql) {
    if (print_mode()) {
      std::printf("%s;\n", sql.c_str());
      std::fflush(stdout);  // before a crash
    }
    auto t0 = std::chrono::steady_clock::now();
    quereus::Status s = db->exec(sql);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (print_mode()) std::printf("-- %.3fs %s\n", secs, s.ok() ? "ok" : s.to_string().c_str());
    if (s.code() == quereus::StatusCode::kInternal) finding("INTERNAL error", sql, s);
    if (s.code() == quereus::StatusCode::kInterrupt && secs * 1000 >= kStatementTimeoutMs * 0.9) {
      // A timeout under the sanitizers on a loaded machine is not yet a finding: the
      // statement (rolled back whole) runs once more with six times the time; only if it
      // times out again is it one.
      (void)db->exec("pragma statement_timeout_ms = " + std::to_string(kRetryTimeoutMs));
      t0 = std::chrono::steady_clock::now();
      s = db->exec(sql);
      secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      (void)db->exec("pragma statement_timeout_ms = " + std::to_string(kStatementTimeoutMs));
      if (print_mode()) std::printf("-- retried: %.3fs %s\n", secs, s.ok() ? "ok" : s.to_string().c_str());
      if (s.code() == quereus::StatusCode::kInternal) finding("INTERNAL error", sql, s);
      if (s.code() == quereus::StatusCode::kInterrupt && secs * 1000 >= kRetryTimeoutMs * 0.9)
        finding("statement ran into the statement timeout twice (10 s, then 60 s)", sql, s);
    }
  };
  auto over_budget = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() > kInputBudgetSeconds;
  };

  for (const auto& g : grammar.schema()) run(g.sql);
  SchemaModel model = read_schema(*db);
  for (int i = 0; i < kMaxStatements && !over_budget(); ++i) {
    quereus::fuzz::GeneratedStatement g = grammar.next(model);
    run(g.sql);
    if (g.changes_schema) model = read_schema(*db);
  }
  if (store_mode()) {
    // What the statements committed must come back whole: close (an open transaction
    // rolls back), open again, check.
    db.reset();
    quereus::Status s = quereus::Database::Open(registry, options, &db);
    if (!s.ok()) finding("the store did not open again after the statements", "(reopen)", s);
    for (const auto& r : rows_of(*db, "pragma integrity_check"))
      if (r.empty() || r[0] != "ok") {
        std::string problem;
        for (const auto& c : r) problem += (problem.empty() ? "" : " | ") + c;
        finding("pragma integrity_check after the reopen", "pragma integrity_check",
                quereus::Status(quereus::StatusCode::kCorrupt, problem));
      }
    (void)read_schema(*db);  // every relation's columns read back
    db.reset();
    std::error_code ec;
    std::filesystem::remove_all(store_dir, ec);
  }
  return 0;
}
