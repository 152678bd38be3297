// The conformance harness and run_suite (see harness.h, docs/conformance-suite.md).
#include "harness.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>

#include "config/config_loader.h"
#include "config/host_setup.h"
#include "config/logging.h"
#include "catalog/catalog.h"

namespace quereus::conformance {

namespace fs = std::filesystem;
using namespace detail;

Reporter::~Reporter() = default;

void StreamReporter::begin(const std::string& plugin, const std::string& module, uint64_t seed) {
  out_ << "quereus-conformance: plugin " << plugin << ", module '" << module << "', seed " << seed << "\n";
}
void StreamReporter::group_begin(const GroupInfo& g) { out_ << "== " << g.number << " " << g.name << ": " << g.title << "\n"; }
void StreamReporter::test_done(const TestResult& r) {
  const char* tag = r.outcome == Outcome::kPass ? "PASS" : r.outcome == Outcome::kFail ? "FAIL" : "SKIP";
  out_ << "  " << tag << " " << r.group << "." << r.test;
  if (!r.message.empty()) out_ << ": " << r.message;
  out_ << "\n";
  out_.flush();
}
void StreamReporter::fatal(const std::string& message) { out_ << "FATAL: " << message << "\n"; }

std::string summary_line(const Summary& s) {
  return std::to_string(s.passed) + " passed, " + std::to_string(s.failed) + " failed, " +
         std::to_string(s.skipped) + " skipped";
}

std::vector<GroupInfo> groups() {
  return {{1, "load", "Load, ABI and manifest"},
          {2, "crud", "CRUD round-trip of every value type"},
          {3, "keys", "Keys and conflicts"},
          {4, "ordering", "Ordering and ranges"},
          {5, "honesty", "Access-plan honesty (randomized, differential)"},
          {6, "transactions", "Transactions and savepoints"},
          {7, "halloween", "Halloween-safe UPDATE / DELETE"},
          {8, "alter", "Schema-change hook arms"},
          {9, "persistence", "Persistence across reopen"},
          {10, "backing", "Backing host (maintained tables)"},
          {11, "lens", "Lens deployment notification"},
          {12, "advertise", "Mapping advertisements"}};
}

namespace detail {

std::string SuiteContext::fresh_dir() const {
  fs::path p = fs::path(data_root) / ("db" + std::to_string(++next_dir));
  std::error_code ec;
  fs::remove_all(p, ec);
  fs::create_directories(p, ec);
  return p.string();
}

std::string render_row(const Row& row) {
  std::string s;
  for (size_t i = 0; i < row.size(); ++i) {
    if (i) s += "|";
    s += row[i].is_null() ? "NULL" : row[i].to_text();
  }
  return s;
}

std::string render_rows(const std::vector<std::string>& rows) {
  std::string s = "[";
  for (size_t i = 0; i < rows.size(); ++i) s += (i ? ", " : "") + rows[i];
  return s + "]";
}

void expect_eq(const std::string& what, const std::string& expected, const std::string& got) {
  if (expected != got) fail(what + ": expected " + expected + ", got " + got);
}

Env::Env(const SuiteContext& ctx) : ctx_(ctx) {
  registry_ = std::make_shared<Registry>();
  loader_ = std::make_unique<PluginLoader>(registry_, std::vector<std::string>{fs::path(ctx.plugin_path).parent_path().string()});
  Status s = loader_->load(PluginSpec{ctx.plugin_path, std::nullopt, {}, "quereus-conformance"});
  if (!s.ok()) fail("loading the plugin: " + s.to_string());
  if (ctx.caps.persistent) dir_ = ctx.fresh_dir();
  open();
}

Env::~Env() {
  db_.reset();  // before the registry and the plugin
  registry_.reset();
  loader_.reset();
}

void Env::open() {
  SettingList options = ctx_.options;
  for (auto& [k, v] : options) {
    if (v.type() != ValueType::kText) continue;
    std::string t = v.str();
    for (size_t p; (p = t.find("{data_dir}")) != std::string::npos;) t.replace(p, 10, dir_);
    v = Value::Text(t);
  }
  if (ctx_.caps.persistent && !ctx_.path_given) options.emplace_back("path", Value::Text(dir_));
  // The database a deployment file would configure: databases.main with the module under
  // test as its default module and the options under module_options.
  DatabaseConfig config;
  config.default_module = ctx_.module;
  config.module_options[ctx_.module] = options;
  Status s = Database::Open(registry_, database_options(config), &db_);
  if (!s.ok()) fail("opening a database on module '" + ctx_.module + "': " + s.to_string());
}

void Env::reopen() {
  db_.reset();
  open();
}

DatabaseImpl& Env::impl() { return static_cast<DatabaseImpl&>(*db_); }

void Env::exec(const std::string& sql) {
  Status s = db_->exec(sql);
  if (!s.ok()) fail("`" + sql + "` failed: " + s.to_string());
}

Status Env::try_exec(const std::string& sql) { return db_->exec(sql); }

Status Env::fails(const std::string& sql, std::optional<StatusCode> code, const std::string& fragment) {
  Status s = db_->exec(sql);
  if (s.ok()) fail("`" + sql + "`: expected an error" + (code ? std::string(" ") + status_code_name(*code) : "") +
                   (fragment.empty() ? "" : " containing '" + fragment + "'") + ", got success");
  if (code && s.code() != *code)
    fail("`" + sql + "`: expected " + status_code_name(*code) + ", got " + s.to_string());
  if (!fragment.empty() && s.to_string().find(fragment) == std::string::npos)
    fail("`" + sql + "`: expected an error containing '" + fragment + "', got " + s.to_string());
  return s;
}

std::vector<Row> Env::query_rows(const std::string& sql) {
  std::vector<std::unique_ptr<Statement>> stmts;
  Status s = db_->prepare(sql, &stmts);
  if (!s.ok()) fail("`" + sql + "` failed: " + s.to_string());
  std::vector<Row> out;
  for (auto& st : stmts) {
    out.clear();
    bool row = true;
    while (true) {
      s = st->step(&row);
      if (!s.ok()) fail("`" + sql + "` failed: " + s.to_string());
      if (!row) break;
      out.push_back(st->row());
    }
  }
  return out;
}

std::vector<std::string> Env::query(const std::string& sql) {
  std::vector<std::string> out;
  for (const Row& r : query_rows(sql)) out.push_back(render_row(r));
  return out;
}

std::string Env::scalar(const std::string& sql) {
  std::vector<Row> rows = query_rows(sql);
  if (rows.size() != 1 || rows[0].size() != 1)
    fail("`" + sql + "`: expected one value, got " + std::to_string(rows.size()) + " rows");
  return render_row(rows[0]);
}

size_t Env::affected(const std::string& dml) { return query_rows(dml + " returning *").size(); }

void Env::expect_affected(const std::string& dml, size_t n) {
  size_t got = affected(dml);
  if (got != n)
    fail("`" + dml + "`: expected " + std::to_string(n) + " rows written (RETURNING), got " + std::to_string(got));
}

void Env::expect(const std::string& sql, const std::vector<std::string>& expected) {
  std::vector<std::string> got = query(sql);
  if (got != expected) fail("`" + sql + "`: expected " + render_rows(expected) + ", got " + render_rows(got));
}

void Env::expect_unordered(const std::string& sql, std::vector<std::string> expected) {
  std::vector<std::string> got = query(sql);
  std::vector<std::string> g = got;
  std::sort(g.begin(), g.end());
  std::sort(expected.begin(), expected.end());
  if (g != expected)
    fail("`" + sql + "`: expected (any order) " + render_rows(expected) + ", got " + render_rows(got));
}

std::shared_ptr<TableEntry> Env::table(const std::string& name) {
  try {
    return impl().require_table("main", name);
  } catch (const std::exception& e) {
    fail("table " + name + ": " + e.what());
  }
}

std::unique_ptr<VtabTable> Env::vtab(const std::string& name) {
  auto entry = table(name);
  try {
    return entry->module->connect(entry->schema);
  } catch (const std::exception& e) {
    fail("connecting a second instance of " + name + " through the module adapter: " + e.what());
  }
}

UpdateResult vt_write(VtabTable& t, RowOp op, std::span<const Value> values, std::span<const Value> old_key,
                      ConflictAction on_conflict) {
  std::unique_ptr<VtabConnection> conn = t.open_connection();
  if (conn) conn->begin();
  try {
    UpdateResult r = t.update(op, values, old_key, on_conflict);
    if (conn) conn->commit();
    return r;
  } catch (...) {
    if (conn) conn->rollback();
    throw;
  }
}

std::vector<Row> vt_scan(VtabTable& t, const ScanArgs& args) {
  std::unique_ptr<VtabCursor> c = t.open_cursor(args);
  std::vector<Row> out, batch;
  for (size_t n; (n = c->next_batch(batch)) > 0;)
    for (size_t i = 0; i < n; ++i) out.push_back(batch[i]);
  return out;
}

}  // namespace detail

namespace {

bool selected(const Options& o, const GroupInfo& g) {
  if (o.groups.empty()) return true;
  for (const std::string& s : o.groups)
    if (s == g.name || s == std::to_string(g.number)) return true;
  return false;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The module options: the file's mapping, then the text's, typed by the deployment
// file's rules (config_loader).
Status parse_options(const Options& o, const std::string& module, SettingList* out) {
  auto one = [&](const std::string& text, const std::string& display) -> Status {
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) return Status::Ok();
    std::string yaml = "databases:\n  main:\n    module_options:\n      " + module + ":\n";
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) yaml += "        " + line + "\n";
    HostOptions host;
    Status s = parse_config(yaml, display, &host);
    if (!s.ok()) return Status(StatusCode::kConfig, "module options (" + display + "): " + s.raw_message());
    for (auto& kv : host.databases["main"].module_options[module]) out->push_back(kv);
    return Status::Ok();
  };
  if (!o.options_file.empty()) {
    std::ifstream f(o.options_file);
    if (!f) return Status(StatusCode::kConfig, "cannot read options file " + o.options_file);
    std::stringstream ss;
    ss << f.rdbuf();
    Status s = one(ss.str(), o.options_file);
    if (!s.ok()) return s;
  }
  return one(o.options_yaml, "--options");
}

}  // namespace

Summary run_suite(const Options& options, Reporter& reporter) {
  Summary sum;
  auto fatal = [&](const std::string& m) {
    reporter.fatal(m);
    ++sum.failed;
    return sum;
  };
  try {
    SuiteContext ctx;
    if (options.plugin_path.empty()) return fatal("no plugin given (--plugin path/to/module.so)");
    for (const std::string& g : options.groups) {
      bool known = false;
      for (const GroupInfo& info : groups()) known = known || g == info.name || g == std::to_string(info.number);
      if (!known) return fatal("unknown group '" + g + "'");
    }
    std::error_code ec;
    ctx.plugin_path = fs::absolute(options.plugin_path, ec).lexically_normal().string();
    Status s = read_plugin_manifest(ctx.plugin_path, ctx.manifest);
    if (!s.ok()) return fatal("plugin " + ctx.plugin_path + ": " + s.raw_message());
    if (!options.module.empty()) {
      ctx.module = lower(options.module);
    } else if (!ctx.manifest.modules.empty()) {
      ctx.module = lower(ctx.manifest.modules.front());
    } else {
      return fatal("plugin " + ctx.manifest.name + " provides no module (its manifest's provides.modules is empty)");
    }
    s = parse_options(options, ctx.module, &ctx.options);
    if (!s.ok()) return fatal(s.raw_message());
    for (auto& kv : ctx.options)
      if (lower(kv.first) == "path") ctx.path_given = true;
    ctx.seed = options.seed ? options.seed
                            : static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) % 1000000007ULL;
    bool own_root = options.data_dir.empty();
    if (own_root) {
      std::string tmpl = (fs::temp_directory_path() / "quereus-conformance-XXXXXX").string();
      if (!mkdtemp(tmpl.data())) return fatal("cannot make a temporary directory");
      ctx.data_root = tmpl;
    } else {
      ctx.data_root = options.data_dir;
      fs::create_directories(ctx.data_root, ec);
    }
    apply_logging(LoggingOptions{});  // warnings and errors only
    // The module's declared capabilities, read through the host's adapter.
    {
      auto registry = std::make_shared<Registry>();
      PluginLoader loader(registry, {fs::path(ctx.plugin_path).parent_path().string()});
      s = loader.load(PluginSpec{ctx.plugin_path, std::nullopt, {}, "quereus-conformance"});
      if (!s.ok()) return fatal(s.to_string());
      auto m = registry->find_module(ctx.module);
      if (!m) return fatal("plugin " + ctx.manifest.name + " registered no module '" + ctx.module + "'");
      ctx.caps = m->capabilities();
    }
    reporter.begin(ctx.plugin_path, ctx.module, ctx.seed);

    TestList tests;
    add_load_tests(tests);
    add_crud_tests(tests);
    add_key_tests(tests);
    add_ordering_tests(tests);
    add_honesty_tests(tests);
    add_txn_tests(tests);
    add_halloween_tests(tests);
    add_alter_tests(tests);
    add_persistence_tests(tests);
    add_backing_tests(tests);
    add_lens_tests(tests);
    add_advertise_tests(tests);
    for (const GroupInfo& g : groups()) {
      if (!selected(options, g)) continue;
      reporter.group_begin(g);
      for (const TestCase& t : tests) {
        if (t.group != g.number) continue;
        TestResult r{g.name, t.name, Outcome::kPass, ""};
        try {
          Env env(ctx);
          t.run(env);
        } catch (const Failure& f) {
          r.outcome = Outcome::kFail;
          r.message = f.message;
        } catch (const Skip& sk) {
          r.outcome = Outcome::kSkip;
          r.message = sk.reason;
        } catch (const std::exception& e) {
          r.outcome = Outcome::kFail;
          r.message = std::string("unexpected exception: ") + e.what();
        }
        (r.outcome == Outcome::kPass ? sum.passed : r.outcome == Outcome::kFail ? sum.failed : sum.skipped)++;
        reporter.test_done(r);
      }
    }
    if (own_root) fs::remove_all(ctx.data_root, ec);
  } catch (const std::exception& e) {
    return fatal(std::string("unexpected exception: ") + e.what());
  }
  return sum;
}

}  // namespace quereus::conformance
