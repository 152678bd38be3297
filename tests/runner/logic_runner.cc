// The .sqllogic runner: FORMAT.md §2 (capabilities), §4 (blocks), §5 (running),
// §6 (rendering) and §7 (comparison).
#include "logic_runner.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "io/result_json.h"
#include "config/host_setup.h"
#include "main/database.h"
#include "plugin/plugin_loader.h"

namespace quereus::logic {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kArrow = "\xE2\x86\x92";  // U+2192 →

// Byte length of the JavaScript white-space character at s[i], or 0.
size_t space_at(std::string_view s, size_t i) {
  const unsigned char c = s[i];
  if (c == ' ' || (c >= '\t' && c <= '\r')) return 1;
  auto at = [&](std::string_view seq) { return s.substr(i, seq.size()) == seq; };
  if (at("\xC2\xA0")) return 2;
  if (at("\xE1\x9A\x80") || at("\xE3\x80\x80") || at("\xEF\xBB\xBF") || at("\xE2\x81\x9F")) return 3;
  if (i + 2 < s.size() && c == 0xE2 && static_cast<unsigned char>(s[i + 1]) == 0x80) {
    const unsigned char c2 = s[i + 2];
    if ((c2 >= 0x80 && c2 <= 0x8A) || c2 == 0xA8 || c2 == 0xA9 || c2 == 0xAF) return 3;
  }
  return 0;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// Lines split on \r?\n.
std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back(line);
    start = end + 1;
  }
  return out;
}

std::string one_line(std::string s, size_t max = 400) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  if (s.size() > max) s = s.substr(0, max) + "…";
  return s;
}

}  // namespace

std::string_view js_trim(std::string_view s) {
  for (size_t n; !s.empty() && (n = space_at(s, 0)) > 0;) s.remove_prefix(n);
  for (bool cut = true; cut && !s.empty();) {
    cut = false;
    for (size_t k = 1; k <= 3 && k <= s.size(); ++k) {
      if (space_at(s, s.size() - k) == k) {
        s.remove_suffix(k);
        cut = true;
        break;
      }
    }
  }
  return s;
}

const std::set<std::string>& known_capabilities() {
  static const std::set<std::string> kCaps = {"standalone-index-ddl"};
  return kCaps;
}

Status parse_capabilities(std::string_view file_text, std::set<std::string>* out) {
  static const std::regex kCanonical(R"(^--\s*requires-capability\s*:\s*(.*)$)", std::regex::icase);
  static const std::regex kNearMiss(R"(^--\s*require[sd]?[-_ ]?capabilit)", std::regex::icase);
  auto fail = [](int line, const std::string& msg) {
    return Status(StatusCode::kFormat, "line " + std::to_string(line) + ": " + msg);
  };
  bool leading = true;
  int n = 0;
  for (std::string_view raw : split_lines(file_text)) {
    ++n;
    const std::string t(js_trim(raw));
    if (t.empty()) continue;
    if (t.rfind("--", 0) != 0) {
      leading = false;
      continue;
    }
    std::smatch m;
    if (std::regex_match(t, m, kCanonical)) {
      if (!leading) return fail(n, "requires-capability directive after the first SQL line");
      static const std::regex kSep(R"([\s,]+)");
      const std::string rest = m[1].str();
      int count = 0;
      for (std::sregex_token_iterator it(rest.begin(), rest.end(), kSep, -1), end; it != end; ++it) {
        const std::string token = lower(it->str());
        if (token.empty()) continue;
        if (!known_capabilities().count(token)) return fail(n, "unknown capability '" + token + "'");
        out->insert(token);
        ++count;
      }
      if (count == 0) return fail(n, "requires-capability directive names no capability");
    } else if (std::regex_search(t, kNearMiss)) {
      return fail(n, "malformed requires-capability directive '" + t + "'");
    }
  }
  return Status::Ok();
}

std::vector<Block> parse_blocks(std::string_view file_text) {
  std::vector<Block> out;
  std::string sql;
  std::optional<Json> params;
  auto flush = [&](BlockKind kind, int line, std::string expected) {
    out.push_back(Block{kind, line, std::string(js_trim(sql)), std::move(expected),
                        kind == BlockKind::kResult ? params : std::nullopt});
    sql.clear();
    params.reset();
  };
  int n = 0;
  for (std::string_view line : split_lines(file_text)) {
    ++n;
    const std::string_view t = js_trim(line);
    if (t.empty()) continue;
    const bool has_sql = !js_trim(sql).empty();
    if (t.substr(0, 2) == "--") {
      const std::string tl = lower(t);
      if (tl.rfind("-- error:", 0) == 0) {
        if (has_sql) flush(BlockKind::kError, n, std::string(js_trim(t.substr(9))));
      } else if (tl.rfind("-- params:", 0) == 0) {
        Json p = Json::parse(js_trim(t.substr(10)), nullptr, /*allow_exceptions=*/false);
        if (p.is_discarded()) {
          out.push_back(Block{BlockKind::kBadParams, n, "", "bad JSON in '-- params:'", std::nullopt});
          params.reset();
        } else {
          params = std::move(p);
        }
      } else if (tl == "-- run") {
        if (has_sql) flush(BlockKind::kSetup, n, "");
      }
      continue;
    }
    if (t.substr(0, kArrow.size()) == kArrow) {
      if (has_sql) flush(BlockKind::kResult, n, std::string(js_trim(t.substr(kArrow.size()))));
      continue;
    }
    const std::string_view cut = line.substr(0, line.find("--"));
    if (!js_trim(cut).empty()) {
      sql += cut;
      sql += '\n';
    }
  }
  if (!js_trim(sql).empty()) flush(BlockKind::kSetup, n, "");
  return out;
}

std::vector<std::string> split_statements(std::string_view block) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= block.size()) {
    size_t end = block.find(';', start);
    if (end == std::string_view::npos) end = block.size();
    const std::string_view piece = js_trim(block.substr(start, end - start));
    if (!piece.empty()) out.emplace_back(piece);
    start = end + 1;
  }
  return out;
}

bool is_bare_column(std::string_view name) {
  const std::string n = lower(name);
  auto has = [&](const char* s) { return n.find(s) != std::string::npos; };
  auto ends = [&](std::string_view s) {
    return n.size() >= s.size() && n.compare(n.size() - s.size(), s.size(), s) == 0;
  };
  const bool logical = has(" xor ") || has(" and ") || has(" or ");
  if ((ends(" is not null") || ends(" is null")) && !logical) return true;
  if (has(" - ") && !logical) return true;
  static const std::regex kBareFunctions(
      "^(json_extract|json_array_length|json_array|json_object|json_insert|json_replace|json_set|"
      "json_remove|strftime|julianday|date|time|datetime|epoch_s|epoch_ms|epoch_s_frac)\\(.+\\)$");
  return std::regex_match(n, kBareFunctions);
}

Json render_row(const std::vector<std::string>& names, const Row& row) {
  const JsonRenderOptions exact{.nonfinite_as_text = false};
  if (names.size() == 1 && is_bare_column(names[0]) && !row.empty()) return value_to_json(row[0], exact);
  return row_to_json(names, row, exact);
}

bool json_equal(const Json& a, const Json& b) {
  if (a.is_number() && b.is_number()) {
    const double x = a.get<double>(), y = b.get<double>();
    return x == y || (std::isnan(x) && std::isnan(y));
  }
  if (a.type() != b.type()) return false;
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!json_equal(a[i], b[i])) return false;
    return true;
  }
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (const auto& [key, value] : a.items()) {
      auto it = b.find(key);
      if (it == b.end() || !json_equal(value, *it)) return false;
    }
    return true;
  }
  return a == b;
}

Value param_value(const Json& j) {
  if (j.is_null()) return Value();
  if (j.is_boolean()) return Value::Boolean(j.get<bool>());
  if (j.is_string()) return Value::Text(j.get<std::string>());
  if (j.is_number()) {  // a JavaScript number: integral values behave as INTEGER
    const double d = j.get<double>();
    if (j.is_number_integer() && std::fabs(d) < 9007199254740992.0) return Value::Integer(j.get<int64_t>());
    if (std::nearbyint(d) == d && std::fabs(d) < 9223372036854775808.0)
      return Value::Integer(static_cast<int64_t>(d));
    return Value::Real(d);
  }
  return Value::Json(nlohmann::json(j).dump());  // sorted keys: canonical
}

// ---- Running one file ----

// Store mode: a module that keeps tables in a data directory (the store, and sync-store —
// the store with replication), over a fresh directory per file.
bool is_store_mode(const RunnerOptions& options) { return options.module == "store" || options.module == "sync-store"; }

const std::set<std::string>& memory_only_files() {
  static const std::set<std::string> files = {
      "05-vtab_memory.sqllogic",
      "05.0.1-vtab-memory-unique-index-collation.sqllogic",
      "10.2.2-default-collation-memory.sqllogic",
      "41.2.1-alter-column-retype-deleted-row-memory.sqllogic",
      "83-merge-join.sqllogic",
      "103-database-options-edge-cases.sqllogic",
      "105-vtab-memory-mutation-kills.sqllogic",
      "105.1-vtab-memory-index-mutation-kills.sqllogic"};
  return files;
}

namespace {

// One file's run: a fresh database and the checks against it.
class FileRun {
 public:
  FileRun(const RunnerOptions& options, FileResult* result) : options_(options), result_(result) {}

  ~FileRun() {
    db_.reset();  // closes the store before its directory goes
    if (!data_dir_.empty()) {
      std::error_code ec;
      fs::remove_all(data_dir_, ec);
    }
  }

  Status open() {
    HostOptions host = options_.host;
    bool store = is_store_mode(options_);
    if (store) {
      // Store mode (FORMAT.md §3): the store plugin over a fresh directory per file.
      const std::string plugin = options_.module;
      bool listed = std::any_of(host.plugins.begin(), host.plugins.end(),
                                [&](const PluginEntry& p) { return fs::path(p.path).stem() == plugin; });
      if (!listed) {
        PluginEntry entry;
        entry.path = plugin;
        entry.origin = "quereus-logic --module " + plugin;
        host.plugins.push_back(entry);
      }
      std::string tmpl = (fs::temp_directory_path() / "quereus-logic-XXXXXX").string();
      if (!mkdtemp(tmpl.data())) return Status(StatusCode::kIoErr, "cannot make a temporary directory for the store");
      data_dir_ = tmpl;
    }
    Status s = load_host_plugins(host, &registry_, &loader_);
    if (!s.ok()) return s;
    DatabaseOptions db_options;
    auto it = options_.host.databases.find("main");
    if (it != options_.host.databases.end()) db_options = database_options(it->second);
    db_options.default_module = options_.module;
    if (store)
      db_options.module_options[options_.module] = {{"path", Value::Text(data_dir_)}, {"sync", Value::Boolean(false)}};
    Status opened = Database::Open(registry_, db_options, &db_);
    return it != options_.host.databases.end() ? attach_config_origin(opened, it->second, "main") : opened;
  }

  void run(const std::vector<Block>& blocks) {
    const auto start = std::chrono::steady_clock::now();
    for (const Block& b : blocks) {
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (elapsed > options_.time_limit_seconds) {
        std::ostringstream msg;
        msg << "time limit of " << options_.time_limit_seconds << " s exceeded; stopped before this block";
        fail(b.line, msg.str());
        return;
      }
      switch (b.kind) {
        case BlockKind::kSetup: setup(b); break;
        case BlockKind::kResult: check(b, result_check(b)); break;
        case BlockKind::kError: check(b, error_check(b)); break;
        case BlockKind::kBadParams: fail(b.line, b.expected); break;
      }
    }
  }

 private:
  void fail(int line, const std::string& message) {
    if (options_.verbose) *options_.verbose << "  line " << line << ": FAIL " << message << "\n";
    if (result_->first_failure.empty())
      result_->first_failure = one_line("line " + std::to_string(line) + ": " + message);
  }

  // `failure` is empty when the check passed.
  void check(const Block& b, const std::string& failure) {
    if (failure.empty()) {
      ++result_->passed;
      if (options_.verbose) *options_.verbose << "  line " << b.line << ": ok\n";
      return;
    }
    fail(b.line, failure);
    if (options_.verbose) *options_.verbose << "    sql: " << one_line(b.sql, 2000) << "\n";
  }

  void setup(const Block& b) {
    Status s = db_->exec(b.sql);
    if (!s.ok())
      fail(b.line, "setup failed: " + s.to_string());
    else if (options_.verbose)
      *options_.verbose << "  line " << b.line << ": setup ok\n";
  }

  // Prepares `sql` (one statement), binds `params` and drains it into *rows.
  Status query(const std::string& sql, const std::optional<Json>& params, Json* rows) {
    std::vector<std::unique_ptr<Statement>> stmts;
    Status s = db_->prepare(sql, &stmts);
    if (!s.ok()) return s;
    *rows = Json::array();
    if (stmts.empty()) return Status::Ok();
    if (stmts.size() > 1) return Status(StatusCode::kMisuse, "the final statement holds several statements");
    Statement& stmt = *stmts[0];
    if (params) {
      if (params->is_array()) {
        for (size_t i = 0; i < params->size() && s.ok(); ++i)
          s = stmt.bind(static_cast<int>(i + 1), param_value((*params)[i]));
      } else if (params->is_object()) {
        for (const auto& [key, value] : params->items())
          if (s.ok()) s = stmt.bind(std::string_view(key), param_value(value));
      } else {
        s = Status(StatusCode::kMisuse, "-- params: must be an array or an object");
      }
      if (!s.ok()) return s;
    }
    std::vector<Row> collected;
    for (bool has_row = true;;) {
      s = stmt.step(&has_row);
      if (!s.ok()) return s;
      if (!has_row) break;
      collected.push_back(stmt.row());
    }
    const std::vector<std::string>& names = stmt.column_names();
    for (const Row& r : collected) rows->push_back(render_row(names, r));
    return Status::Ok();
  }

  std::string result_check(const Block& b) {
    const std::vector<std::string> stmts = split_statements(b.sql);
    if (stmts.empty()) return "no statement before '→'";
    for (size_t i = 0; i + 1 < stmts.size(); ++i) {
      Status s = db_->exec(stmts[i]);
      if (!s.ok()) return "setup statement failed: " + s.to_string();
    }
    Json actual;
    Status s = query(stmts.back(), b.params, &actual);
    if (!s.ok()) return "unexpected error: " + s.to_string();
    const Json expected = Json::parse(b.expected, nullptr, /*allow_exceptions=*/false);
    if (expected.is_discarded()) return "bad expected JSON: " + b.expected;
    if (!expected.is_array()) return "expected JSON is not an array: " + b.expected;
    if (actual.size() != expected.size())
      return "expected " + std::to_string(expected.size()) + " rows, got " + std::to_string(actual.size()) +
             ": expected " + json_text(expected) + " got " + json_text(actual);
    for (size_t i = 0; i < actual.size(); ++i)
      if (!json_equal(actual[i], expected[i]))
        return "row " + std::to_string(i) + ": expected " + json_text(expected[i]) + " got " +
               json_text(actual[i]);
    return "";
  }

  std::string error_check(const Block& b) {
    const std::vector<std::string> stmts = split_statements(b.sql);
    if (stmts.empty()) return "no statement before '-- error:'";
    Status s;
    if (stmts.size() > 1) {
      std::string setup;
      for (size_t i = 0; i + 1 < stmts.size(); ++i) setup += (i ? ";\n" : "") + stmts[i];
      s = db_->exec(setup + ";");
    }
    Json ignored;
    if (s.ok()) s = query(stmts.back(), std::nullopt, &ignored);
    if (s.ok()) return "expected an error containing '" + b.expected + "', got none";
    if (lower(s.message()).find(lower(b.expected)) == std::string::npos)
      return "expected an error containing '" + b.expected + "', got " + s.to_string();
    return "";
  }

  const RunnerOptions& options_;
  FileResult* result_;
  // Destroyed in reverse: the database before the registry and the plugins it uses.
  std::unique_ptr<PluginLoader> loader_;
  std::shared_ptr<Registry> registry_;
  std::unique_ptr<Database> db_;
  std::string data_dir_;  // store mode: removed after the file
};

}  // namespace

FileResult run_logic_file(const std::string& path, const RunnerOptions& options) {
  FileResult result;
  result.file = fs::path(path).filename().string();
  try {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      result.first_failure = "cannot read " + path;
      return result;
    }
    std::ostringstream buf;
    buf << in.rdbuf();
    const std::string text = buf.str();

    std::set<std::string> required;
    Status s = parse_capabilities(text, &required);
    if (!s.ok()) {
      result.first_failure = s.message();
      return result;
    }
    for (const std::string& cap : required) {
      if (!options.capabilities.count(cap)) {
        result.skipped = true;
        result.skip_reason = "requires capability " + cap;
        return result;
      }
    }
    if (is_store_mode(options) && memory_only_files().count(result.file)) {
      result.skipped = true;
      result.skip_reason = "memory-only (FORMAT.md §3)";
      return result;
    }
    const std::vector<Block> blocks = parse_blocks(text);
    result.checks = static_cast<int>(std::count_if(blocks.begin(), blocks.end(), [](const Block& b) {
      return b.kind == BlockKind::kResult || b.kind == BlockKind::kError;
    }));
    FileRun run(options, &result);
    s = run.open();
    if (!s.ok()) {
      result.first_failure = one_line("cannot open the database: " + s.to_string());
      return result;
    }
    run.run(blocks);
  } catch (const std::exception& e) {
    if (result.first_failure.empty()) result.first_failure = one_line(std::string("exception: ") + e.what());
  }
  return result;
}

Status collect_logic_files(const std::vector<std::string>& paths,
                           std::vector<std::pair<std::string, std::string>>* out) {
  for (const std::string& p : paths) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) {
      out->emplace_back(p, fs::path(p).filename().string());
      continue;
    }
    if (!fs::is_directory(p, ec)) return Status(StatusCode::kNotFound, p + ": no such file or directory");
    std::vector<std::pair<std::string, std::string>> found;
    for (const auto& entry : fs::recursive_directory_iterator(p, ec)) {
      if (entry.is_regular_file() && entry.path().extension() == ".sqllogic")
        found.emplace_back(entry.path().string(), fs::relative(entry.path(), p).generic_string());
    }
    if (ec) return Status(StatusCode::kIoErr, p + ": " + ec.message());
    std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    out->insert(out->end(), found.begin(), found.end());
  }
  return Status::Ok();
}

const char* const kPassListHeader =
    "# Files of the reference corpus that pass, one per line (the pass-list ratchet).\n"
    "# quereus-logic --pass-list fails when a listed file fails, so this list may only grow.\n"
    "# A file that passes but is not listed is reported as \"newly passing\": add it here, or\n"
    "# regenerate the list with  quereus-logic --pass-list F --write-pass-list F <corpus dir>.\n"
    "# See docs/testing.md.\n";

Status read_pass_list(const std::string& path, std::set<std::string>* out) {
  std::ifstream in(path);
  if (!in) return Status(StatusCode::kNotFound, path + ": cannot open the pass list");
  for (std::string line; std::getline(in, line);) {
    const std::string_view name = js_trim(std::string_view(line).substr(0, line.find('#')));
    if (!name.empty()) out->emplace(name);
  }
  return Status::Ok();
}

Status write_pass_list(const std::string& path, const std::set<std::string>& names) {
  std::ofstream out(path, std::ios::trunc);
  out << kPassListHeader;
  for (const std::string& n : names) out << n << "\n";
  out.close();
  if (!out) return Status(StatusCode::kIoErr, path + ": cannot write the pass list");
  return Status::Ok();
}

}  // namespace quereus::logic
