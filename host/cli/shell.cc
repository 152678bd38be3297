// Shell: input lines → statements and dot-commands → printed results.
#include "cli/shell.h"

#include <fstream>
#include <sstream>
#include <openssl/evp.h>

#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "cli/data_import.h"
#include "cli/dump.h"
#include "cli/hints.h"
#include "cli/line_editor.h"
#include "io/result_json.h"
#include "cli/sql_input.h"
#include "parser/lexer.h"
#include "plugin/plugin_loader.h"

namespace quereus {

namespace {
// Holds the database's lock while the shell uses it, when another thread shares it.
struct DbLock {
  explicit DbLock(std::recursive_mutex* m) : mu(m) {
    if (mu) mu->lock();
  }
  ~DbLock() {
    if (mu) mu->unlock();
  }
  DbLock(const DbLock&) = delete;
  DbLock& operator=(const DbLock&) = delete;
  std::recursive_mutex* mu;
};
}  // namespace

namespace {

constexpr const char* kPrompt = "quereus> ";
constexpr const char* kContinuation = "   ...> ";

// One line per command: the name and arguments, then what it does (the columns line up).
constexpr const char* kHelp[][2] = {
    {".backup DIR", "copy the database into a new directory DIR of its on-disk module (store)"},
    {".bail on|off", "stop a script at its first error (on, the default, outside the interactive shell)"},
    {".databases", "the database, its default module and module options, its schemas"},
    {".dump [TABLE...]", "an SQL script that recreates the schema and the data (of TABLEs only)"},
    {".events on|off", "print each committed change event as a JSON line (docs/change-events.md)"},
    {".export SQL FILE", "write the rows of SQL to FILE as .csv, .tsv, .json, .jsonl or .md (else the mode)"},
    {".headers on|off", "column names above the rows"},
    {".help", "this text"},
    {".import [OPTIONS] FILE [TABLE]", "load CSV, TSV or JSON-lines rows into TABLE (default: named after FILE;"},
    {"", "  created when missing) in one transaction; --csv, --tsv (default for .tsv/.tab),"},
    {"", "  --jsonl (default for .jsonl/.ndjson), --no-header, --skip N"},
    {".mode MODE", "how results print: table box csv tsv json jsonl markdown line"},
    {".nullvalue TEXT", "how NULL shows in table, box, markdown and line modes (default NULL)"},
    {".once FILE", "send the next statement's output to FILE"},
    {".output [FILE]", "send output to FILE, or back to the terminal without FILE"},
    {".plugins", "the loaded plugins: name, version, file, SHA-256, what each provides"},
    {".quit, .exit", "leave the shell (so does end of input, Ctrl-D)"},
    {".read FILE", "run the SQL and dot-commands in FILE"},
    {".schema [PATTERN]", "the CREATE statements of the objects whose name is LIKE PATTERN"},
    {".show", "the current settings"},
    {".stats [on|off]", "the session's counters; on: rows and time after each statement"},
    {".sync client", "the background sync client: connection, hub cursors, pages pulled and pushed"},
    {".sync status", "the replica's site, clock, change log and unknown-table counters (sync-store)"},
    {".sync changes SINCE [FILE]", "a page of this replica's changes after cursor SINCE, as JSON (to FILE)"},
    {".sync apply FILE", "apply a page of a peer's changes (JSON) through the engine (docs/sync-store.md)"},
    {".tables [PATTERN]", "the tables and views (whose name is LIKE PATTERN)"},
    {".timer on|off", "the time each statement takes"},
};

std::string_view trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

// Splits dot-command arguments on blanks; '…' and "…" quote (doubled to escape).
std::vector<std::string> split_args(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i >= s.size()) break;
    std::string arg;
    if (s[i] == '\'' || s[i] == '"') {
      const char q = s[i++];
      while (i < s.size()) {
        if (s[i] == q) {
          if (i + 1 < s.size() && s[i + 1] == q) {
            arg += q;
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        arg += s[i++];
      }
    } else {
      while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) arg += s[i++];
    }
    out.push_back(std::move(arg));
  }
  return out;
}

bool parse_on_off(const std::string& s, bool* v) {
  if (s == "on" || s == "1" || s == "yes" || s == "true") return *v = true, true;
  if (s == "off" || s == "0" || s == "no" || s == "false") return *v = false, true;
  return false;
}

std::string sql_string(std::string_view s) {
  std::string r = "'";
  for (char c : s) r += c == '\'' ? std::string("''") : std::string(1, c);
  return r + "'";
}

int count_lines(std::string_view s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

std::string sha256_file(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return "?";
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
  char buf[65536];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) EVP_DigestUpdate(ctx, buf, n);
  std::fclose(f);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx, md, &len);
  EVP_MD_CTX_free(ctx);
  static const char* kHex = "0123456789abcdef";
  std::string hex;
  for (unsigned i = 0; i < len; ++i) hex += {kHex[md[i] >> 4], kHex[md[i] & 15]};
  return hex;
}

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string r;
  for (const std::string& s : v) r += (r.empty() ? "" : sep) + s;
  return r;
}

}  // namespace

struct Shell::Input {
  std::string name;  // "" for -c, piped input and the terminal
  bool interactive = false;
  int line = 0;            // the last line read (1-based)
  std::string buffer;      // the statement being collected
  int buffer_line = 0;     // the line it starts on
};

std::atomic<bool> Shell::cancel_{false};

Shell::Shell(Database& db, ShellContext context, ShellOptions options, std::ostream& out, std::ostream& err)
    : db_(db), context_(std::move(context)), options_(std::move(options)), out_(out), err_(err) {}

Shell::~Shell() {
  DbLock lock(context_.db_mutex);
  watch_events(false);
}

std::ostream& Shell::out() { return redirect_ ? *redirect_ : out_; }

Status Shell::run_text(std::string_view text, const std::string& name) {
  std::istringstream in{std::string(text)};
  return run_stream(in, name);
}

Status Shell::run_stream(std::istream& stream, const std::string& name) {
  Input in;
  in.name = name;
  Status last;
  for (std::string line; !quit_ && std::getline(stream, line);) {
    if (cancel_.load(std::memory_order_relaxed)) {
      Status s(StatusCode::kInterrupt, "interrupted");
      report(in, s, in.line + 1, 0);
      return s;
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    Status s = feed(in, line);
    if (!s.ok()) {
      if (options_.bail) return s;
      last = s;
    }
  }
  // A last statement without its ';' still runs.
  if (!quit_ && !trim(in.buffer).empty() && input_state(in.buffer) != InputState::kEmpty) {
    std::string sql = std::move(in.buffer);
    in.buffer.clear();
    Status s = run_sql(in, sql, in.buffer_line);
    if (!s.ok()) last = s;
  }
  return last;
}

Status Shell::run_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    Status s(StatusCode::kCantOpen, "cannot open '" + path + "'");
    err_ << "Error: " << s.to_string() << std::endl;
    return s;
  }
  return run_stream(f, path);
}

void Shell::interactive(LineEditor& editor) {
  Input in;
  in.interactive = true;
  for (std::string line; !quit_;) {
    const LineEditor::Read r = editor.read(in.buffer.empty() ? kPrompt : kContinuation, &line);
    if (r == LineEditor::Read::kEof) break;
    if (r == LineEditor::Read::kCancelled) {
      in.buffer.clear();  // Ctrl-C drops the statement being typed
      continue;
    }
    cancel_.store(false, std::memory_order_relaxed);
    editor.add_history(line);
    if (in.buffer.empty()) in.line = 0;  // lines count from the statement's start
    (void)feed(in, line);                // errors are printed; the session goes on
  }
  out_ << std::endl;
}

Status Shell::feed(Input& in, const std::string& line) {
  ++in.line;
  if (in.buffer.empty()) {
    const std::string_view t = trim(line);
    if (t.empty()) return Status::Ok();
    if (t[0] == '.') return dot_command(in, t, in.line);
    in.buffer_line = in.line;
  }
  in.buffer += line;
  in.buffer += '\n';
  // The lexer runs when the statement could have ended (or the text is short).
  if (in.buffer.size() > 65536 && line.find_first_of(";}") == std::string::npos) return Status::Ok();
  switch (input_state(in.buffer)) {
    case InputState::kEmpty:  // only comments so far: nothing to run or continue
      in.buffer.clear();
      return Status::Ok();
    case InputState::kIncomplete: return Status::Ok();
    case InputState::kComplete: break;
  }
  std::string sql = std::move(in.buffer);
  in.buffer.clear();
  return run_sql(in, sql, in.buffer_line);
}

void Shell::report(const Input& in, const Status& s, int line, int column) {
  ++errors_;
  if (!in.name.empty()) {
    err_ << in.name << ":" << line;
    if (column > 0) err_ << ":" << column;
    err_ << ": Error: " << status_code_name(s.code()) << ": " << s.raw_message() << std::endl;
    return;
  }
  err_ << "Error: " << status_code_name(s.code()) << ": " << s.raw_message();
  if (column > 0) err_ << " (at line " << line << ", column " << column << ")";
  err_ << std::endl;
}

Status Shell::run_sql(const Input& in, std::string_view text, int first_line) {
  DbLock lock(context_.db_mutex);
  std::vector<std::unique_ptr<Statement>> stmts;
  Status s = db_.prepare(text, &stmts);
  size_t failed_at = 0;
  for (size_t i = 0; s.ok() && i < stmts.size(); ++i) {
    failed_at = i;
    Statement& stmt = *stmts[i];
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<std::string> names = stmt.column_names();
    std::unique_ptr<ResultPrinter> printer;
    if (!names.empty()) printer = std::make_unique<ResultPrinter>(out(), options_.output, names);
    for (bool has_row = true; (s = stmt.step(&has_row)).ok() && has_row;)
      if (printer) printer->add(stmt.row());
    // A statement that fails before its first row prints nothing but the error.
    if (printer && (s.ok() || printer->rows() > 0)) printer->finish();
    ++statements_run_;
    const auto spent = std::chrono::steady_clock::now() - t0;
    busy_ += spent;
    if (printer) rows_returned_ += printer->rows();
    if (s.ok() && timer_)
      out() << "Run Time: " << std::chrono::duration<double>(spent).count() << " s" << std::endl;
    if (s.ok() && stats_)
      out() << "Rows: " << (printer ? printer->rows() : 0) << ", time: "
            << std::chrono::duration<double>(spent).count() << " s" << std::endl;
    if (once_ && redirect_) {
      redirect_.reset();
      once_ = false;
    }
  }
  out().flush();
  if (s.ok()) return s;
  // Where: the error's site in the text, else the failing statement's first line.
  int line = first_line, column = 0;
  if (s.site() && s.site()->line > 0) {
    line = first_line + s.site()->line - 1;
    column = s.site()->column;
  } else if (failed_at < stmts.size()) {
    const std::string_view sql = stmts[failed_at]->sql();
    const size_t at = sql.empty() ? std::string_view::npos : text.find(sql);
    if (at != std::string_view::npos) line = first_line + count_lines(text.substr(0, at));
  }
  if (once_ && redirect_) {
    redirect_.reset();
    once_ = false;
  }
  report(in, s, line, in.interactive && !s.site() ? 0 : column);
  if (const std::string hint = hint_for(text, s); !hint.empty()) err_ << "Hint: " << hint << std::endl;
  return s;
}

Status Shell::query(std::string_view sql, const std::function<void(const Row&)>& each) {
  std::vector<std::unique_ptr<Statement>> stmts;
  Status s = db_.prepare(sql, &stmts);
  for (auto& stmt : stmts) {
    for (bool has_row = true; s.ok() && (s = stmt->step(&has_row)).ok() && has_row;) each(stmt->row());
  }
  return s;
}

Status Shell::dot_command(const Input& in, std::string_view line, int line_no) {
  DbLock lock(context_.db_mutex);
  const std::vector<std::string> args = split_args(line.substr(1));
  const std::string cmd = args.empty() ? "" : args[0];
  const size_t n = args.size();
  auto bad = [&](const std::string& why) {
    Status s(StatusCode::kError, why.empty() ? "bad arguments: " + std::string(line) + " (try .help)" : why);
    report(in, s, line_no, 0);
    return s;
  };
  auto done = [&](Status s) {
    if (!s.ok()) report(in, s, line_no, 0);
    return s;
  };
  if (cmd == "quit" || cmd == "exit") {
    quit_ = true;
    return Status::Ok();
  }
  if (cmd == "help") {
    for (const auto& [name, what] : kHelp) {
      std::string pad(std::max<size_t>(1, 30 - std::string_view(name).size()), ' ');
      out() << name << pad << what << "\n";
    }
    out() << "Anything else is SQL; a statement ends with ';' (the engine's lexer decides, so a ';'\n"
             "in a string or comment does not end it). Ctrl-C clears the line or interrupts a query.\n";
    return Status::Ok();
  }
  if (cmd == "tables") {
    std::string sql = "select name from schema() where type in ('table', 'view')";
    if (n > 1) sql += " and name like " + sql_string(args[1]);
    std::vector<std::string> names;
    Status s = query(sql + " order by name", [&](const Row& r) { names.push_back(r[0].to_text()); });
    for (const std::string& name : names) out() << name << "\n";
    return done(s);
  }
  if (cmd == "schema") return done(cmd_schema(n > 1 ? args[1] : ""));
  if ((cmd == "mode" || cmd == "format") && n == 2) {
    if (!parse_output_mode(args[1], &options_.output.mode))
      return bad("unknown mode '" + args[1] + "': " + output_mode_list());
    return Status::Ok();
  }
  if (cmd == "mode" && n == 1) {
    out() << "current output mode: " << output_mode_name(options_.output.mode) << "\n";
    return Status::Ok();
  }
  if ((cmd == "headers" || cmd == "header") && n == 2 && parse_on_off(args[1], &options_.output.headers))
    return Status::Ok();
  if (cmd == "nullvalue" && n == 2) {
    options_.output.null_text = args[1];
    return Status::Ok();
  }
  if (cmd == "timer" && n == 2 && parse_on_off(args[1], &timer_)) return Status::Ok();
  if (cmd == "bail" && n == 2 && parse_on_off(args[1], &options_.bail)) return Status::Ok();
  if (cmd == "stats" && n == 2 && parse_on_off(args[1], &stats_)) return Status::Ok();
  if (cmd == "stats" && n == 1) {
    out() << "statements: " << statements_run_ << "\nrows returned: " << rows_returned_ << "\nerrors: " << errors_
          << "\ntime in statements: " << std::chrono::duration<double>(busy_).count() << " s\n"
          << "in a transaction: " << (db_.in_transaction() ? "yes" : "no") << "\n";
    return Status::Ok();
  }
  if (cmd == "show" && n == 1) {
    out() << "mode: " << output_mode_name(options_.output.mode)
          << "\nheaders: " << (options_.output.headers ? "on" : "off") << "\nnullvalue: " << options_.output.null_text
          << "\nbail: " << (options_.bail ? "on" : "off") << "\ntimer: " << (timer_ ? "on" : "off")
          << "\nstats: " << (stats_ ? "on" : "off") << "\nevents: " << (events_id_ ? "on" : "off")
          << "\noutput: " << (redirect_ ? "file" : "stdout") << "\n";
    return Status::Ok();
  }
  if (cmd == "events" && n == 2) {
    bool on = false;
    if (!parse_on_off(args[1], &on)) return bad("");
    watch_events(on);
    return Status::Ok();
  }
  if (cmd == "read" && n == 2) {
    if (read_depth_ >= 16) return bad(".read nested too deeply");
    ++read_depth_;
    Status s = run_file(args[1]);
    --read_depth_;
    return s;  // reported inside, with the file's name and line
  }
  if (cmd == "output" && n <= 2) return done(cmd_output(args, false));
  if (cmd == "once" && n == 2) return done(cmd_output(args, true));
  if (cmd == "import" && n >= 2) return cmd_import(in, args);
  if (cmd == "export" && n == 3) {
    // The format from the file's extension; the mode and output come back afterwards.
    const OutputSettings saved = options_.output;
    const std::string& file = args[2];
    const size_t dot = file.rfind('.');
    const std::string ext = dot == std::string::npos ? "" : file.substr(dot + 1);
    OutputMode mode = options_.output.mode;
    if (ext == "md") mode = OutputMode::kMarkdown;
    else if (!ext.empty()) (void)parse_output_mode(ext, &mode);
    options_.output.mode = mode;
    options_.output.headers = true;
    auto previous = std::move(redirect_);
    const bool previous_once = once_;
    Status s = cmd_output({"once", file}, true);
    if (!s.ok()) {
      report(in, s, line_no, 0);
    } else {
      s = run_sql(in, args[1], line_no);
    }
    redirect_ = std::move(previous);
    once_ = previous_once;
    options_.output = saved;
    return s;
  }
  if (cmd == "dump") {
    std::vector<std::string> tables(args.begin() + 1, args.end());
    return done(write_dump(db_, tables, out()));
  }
  if (cmd == "backup" && n == 2) return done(cmd_backup(args[1]));
  if (cmd == "sync" && n >= 2) return done(cmd_sync(args));
  if (cmd == "plugins" && n == 1) return done(cmd_plugins());
  if (cmd == "databases" && n == 1) return done(cmd_databases());
  return bad("unknown command or bad arguments: " + std::string(line) + " (try .help)");
}

Status Shell::cmd_schema(std::string_view pattern) {
  // schema_ddl(): the exact statements (constraints, tags, module clause), in an order
  // that can be run.
  std::string sql = "select ddl from schema_ddl() where schema <> 'temp'";
  if (!pattern.empty())
    sql += " and (name like " + sql_string(pattern) + " or tbl_name like " + sql_string(pattern) + ")";
  return query(sql, [&](const Row& r) {
    const std::string ddl = r[0].to_text();
    out() << ddl << (!ddl.empty() && ddl.back() == ';' ? "\n" : ";\n");
  });
}

Status Shell::cmd_output(const std::vector<std::string>& args, bool once) {
  redirect_.reset();
  once_ = false;
  if (args.size() < 2 || args[1] == "stdout") return Status::Ok();
  auto f = std::make_unique<std::ofstream>(args[1], std::ios::binary | std::ios::trunc);
  if (!*f) return Status(StatusCode::kCantOpen, "cannot write '" + args[1] + "'");
  redirect_ = std::move(f);
  once_ = once;
  return Status::Ok();
}

Status Shell::cmd_import(const Input& in, const std::vector<std::string>& args) {
  ImportOptions opts;
  std::vector<std::string> positional;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--csv") {
      opts.format = ImportFormat::kCsv;
    } else if (a == "--tsv") {
      opts.format = ImportFormat::kTsv;
    } else if (a == "--jsonl") {
      opts.format = ImportFormat::kJsonl;
    } else if (a == "--no-header") {
      opts.header = false;
    } else if (a == "--header") {
      opts.header = true;
    } else if (a == "--skip" && i + 1 < args.size()) {
      opts.skip = std::strtoull(args[++i].c_str(), nullptr, 10);
    } else {
      positional.push_back(a);
    }
  }
  if (positional.size() == 1) {  // the table is named after the file: people.csv → people
    std::string stem = positional[0].substr(positional[0].find_last_of('/') + 1);
    positional.push_back(stem.substr(0, stem.find('.')));
  }
  if (positional.size() != 2 || positional[1].empty()) {
    Status s(StatusCode::kError, "usage: .import [--csv|--tsv|--jsonl] [--no-header] [--skip N] FILE [TABLE]");
    report(in, s, in.line, 0);
    return s;
  }
  opts.progress = in.interactive || isatty(STDERR_FILENO);
  opts.cancel = &cancel_;
  opts.file = positional[0];
  opts.table = positional[1];
  ImportResult result;
  Status s = import_file(db_, opts, err_, &result);
  if (!s.ok()) {
    report(in, s, in.line, 0);
    return s;
  }
  if (in.interactive) err_ << "imported " << result.rows << " row(s) into " << opts.table << "\n";
  return s;
}

Status Shell::cmd_sync(const std::vector<std::string>& args) {
  const std::string& op = args[1];
  std::string reply;
  if (op == "client" && args.size() == 2) {
    if (!context_.sync_client_state)
      return Status(StatusCode::kMisuse, ".sync client: this database has no `sync:` section (no background sync)");
    out() << context_.sync_client_state() << "\n";
    return Status::Ok();
  }
  if (op == "status" && args.size() == 2) {
    Status st = db_.sync_request("status", "{}", &reply);
    if (!st.ok()) return st;
    out() << reply << "\n";
    return Status::Ok();
  }
  if (op == "changes" && (args.size() == 3 || args.size() == 4)) {
    char* end = nullptr;
    const unsigned long long since = std::strtoull(args[2].c_str(), &end, 10);
    if (args[2].empty() || *end) return Status(StatusCode::kMisuse, ".sync changes: SINCE must be a cursor (a number)");
    Status st = db_.sync_request("changes", "{\"since\":" + std::to_string(since) + "}", &reply);
    if (!st.ok()) return st;
    if (args.size() == 3) {
      out() << reply << "\n";
      return Status::Ok();
    }
    std::ofstream f(args[3], std::ios::binary);
    f << reply << "\n";
    if (!f) return Status(StatusCode::kIoErr, ".sync changes: cannot write " + args[3]);
    return Status::Ok();
  }
  if (op == "apply" && args.size() == 3) {
    std::ifstream f(args[2], std::ios::binary);
    if (!f) return Status(StatusCode::kIoErr, ".sync apply: cannot read " + args[2]);
    std::stringstream text;
    text << f.rdbuf();
    Status st = db_.sync_apply(text.str(), &reply);
    if (!st.ok()) return st;
    out() << reply << "\n";
    return Status::Ok();
  }
  return Status(StatusCode::kMisuse, "usage: .sync status | .sync client | .sync changes SINCE [FILE] | .sync apply FILE");
}

Status Shell::cmd_backup(const std::string& dir) {
  // The module's online backup (the store: a LevelDB snapshot copied while writers go on),
  // with progress on stderr for copies past a few megabytes.
  const bool show = isatty(STDERR_FILENO);
  uint64_t shown = 0;
  Status st = db_.backup(dir, [&](uint64_t done, uint64_t total) {
    if (cancel_.load(std::memory_order_relaxed)) return false;
    if (show && done - shown >= (16u << 20)) {
      err_ << "\rbackup: " << (done >> 20) << " MiB of about " << (total >> 20) << " MiB" << std::flush;
      shown = done;
    }
    return true;
  });
  if (shown > 0) err_ << "\n";
  if (st.code() != StatusCode::kUnsupported) return st;
  // A module without an online backup: the same deployment with the module that keeps data
  // on disk (the one given a `path`) pointed at `dir`, filled from the dump of this one, in
  // this process between two statements — a consistent copy.
  if (!context_.registry) return Status(StatusCode::kMisuse, ".backup is not available here");
  DatabaseOptions options = context_.database_options;
  std::string module;
  for (auto& [m, settings] : options.module_options) {
    bool has_path = false;
    for (auto& [k, v] : settings) {
      if (k != "path") continue;
      if (!module.empty() && module != m)
        return Status(StatusCode::kMisuse, "modules '" + module + "' and '" + m +
                                               "' both keep data on disk: back up with .dump instead");
      module = m;
      v = Value::Text(dir);
      has_path = true;
    }
    if (!has_path) continue;
    std::erase_if(settings, [](const auto& kv) { return kv.first == "create_if_missing"; });
    settings.emplace_back("create_if_missing", Value::Boolean(true));
  }
  if (module.empty())
    return Status(StatusCode::kMisuse,
                  "this database keeps nothing on disk (no module has a 'path'): .dump writes a backup script");
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_empty(dir, ec))
    return Status(StatusCode::kCantOpen, "'" + dir + "' exists and is not empty: a backup goes to a new directory");
  std::ostringstream script;
  if (Status s = write_dump(db_, {}, script); !s.ok()) return s;
  std::unique_ptr<Database> copy;
  if (Status s = Database::Open(context_.registry, options, &copy); !s.ok()) return s;
  if (Status s = copy->exec(script.str()); !s.ok())
    return Status(s.code(), "the backup in '" + dir + "' is incomplete: " + s.raw_message());
  return Status::Ok();
}

Status Shell::cmd_plugins() {
  if (!context_.plugins) return Status::Ok();
  for (const LoadedPlugin& p : *context_.plugins) {
    out() << p.manifest.name << " " << p.manifest.version << "\n"
          << "  file:    " << p.path << "\n"
          << "  sha256:  " << sha256_file(p.path) << "\n"
          << "  abi:     " << p.manifest.abi_major << "." << p.manifest.abi_minor << "\n"
          << "  origin:  " << (p.origin.empty() ? "-" : p.origin) << "\n";
    if (!p.modules.empty()) out() << "  modules:    " << join(p.modules) << "\n";
    if (!p.collations.empty()) out() << "  collations: " << join(p.collations) << "\n";
    if (!p.functions.empty()) out() << "  functions:  " << join(p.functions) << "\n";
  }
  return Status::Ok();
}

Status Shell::cmd_databases() {
  const DatabaseOptions& o = context_.database_options;
  out() << context_.database_name << ": default module " << o.default_module;
  out() << ", deployment " << (context_.config_path.empty() ? "built-in default" : context_.config_path) << "\n";
  for (const auto& [module, settings] : o.module_options) {
    out() << "  " << module << ":";
    for (const auto& [k, v] : settings) out() << " " << k << "=" << v.to_text();
    out() << "\n";
  }
  std::vector<std::string> schemas;
  Status s = query("select distinct schema from schema() order by 1", [&](const Row& r) {
    schemas.push_back(r[0].to_text());
  });
  if (std::find(schemas.begin(), schemas.end(), "main") == schemas.end()) schemas.insert(schemas.begin(), "main");
  out() << "  schemas: " << join(schemas) << "\n";
  return s;
}

std::vector<std::string> Shell::completions(std::string_view before, std::string_view word) {
  DbLock lock(context_.db_mutex);
  std::vector<std::string> out;
  const std::string_view head = trim(before);
  if (!head.empty() && head[0] == '.' && head.find(' ') == std::string_view::npos) {
    for (const auto& [name, what] : kHelp) {
      std::string_view n = name;
      if (n.empty()) continue;
      out.emplace_back(n.substr(0, n.find_first_of(" ,")));
    }
    out.emplace_back(".exit");
    return out;
  }
  if (!head.empty() && head[0] == '.') return out;  // dot-command arguments: nothing yet
  std::vector<std::string> tables;
  (void)query("select name from schema() where type in ('table', 'view') order by name",
              [&](const Row& r) { tables.push_back(r[0].to_text()); });
  const size_t dot = word.rfind('.');
  auto columns_of = [&](const std::string& t) {
    (void)query("select name from table_info(" + sql_string(t) + ")",
                [&](const Row& r) { out.push_back(r[0].to_text()); });
  };
  if (dot != std::string_view::npos) {  // t.col
    const std::string qualifier(word.substr(0, dot));
    for (const std::string& t : tables)
      if (strcasecmp(t.c_str(), qualifier.c_str()) == 0) columns_of(t);
    return out;
  }
  for (int k = 1;; ++k) {
    const std::string_view kw = keyword_text(static_cast<Keyword>(k));
    if (kw.empty()) break;
    out.emplace_back(kw);
    if (static_cast<Keyword>(k) == Keyword::kXor) break;
  }
  // Words the parser reads in context, not as keywords.
  for (const char* w : {"copy", "refresh", "materialized", "lens", "logical", "read_csv", "read_jsonl"})
    out.emplace_back(w);
  for (const std::string& t : tables) out.push_back(t);
  // Columns of the tables the line names (all tables when it names none).
  std::vector<std::string> named;
  std::string lower(before);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const std::string& t : tables) {
    std::string lt = t;
    for (char& c : lt) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower.find(lt) != std::string::npos) named.push_back(t);
  }
  for (const std::string& t : named.empty() ? tables : named) columns_of(t);
  return out;
}

namespace {

nlohmann::ordered_json row_json(const Row& r) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const Value& v : r) a.push_back(value_to_json(v));
  return a;
}

}  // namespace

void Shell::watch_events(bool on) {
  if (!on) {
    if (events_id_) db_.unsubscribe(events_id_);
    events_id_ = 0;
    return;
  }
  if (events_id_) return;
  events_id_ = db_.on_commit([this](const ChangeBatch& batch) {
    for (const SchemaChangeEvent& e : batch.schema) {
      nlohmann::ordered_json j;
      j["event"] = "schema";
      j["type"] = schema_change_kind_name(e.type);
      j["objectType"] = schema_object_kind_name(e.object_type);
      j["schema"] = e.schema;
      j["objectName"] = e.object_name;
      if (!e.old_object_name.empty()) j["oldObjectName"] = e.old_object_name;
      if (!e.column_name.empty()) j["columnName"] = e.column_name;
      if (!e.old_column_name.empty()) j["oldColumnName"] = e.old_column_name;
      if (!e.ddl.empty()) j["ddl"] = e.ddl;
      j["remote"] = e.remote;
      out() << json_text(j) << "\n";
    }
    for (const DataChangeEvent& e : batch.data) {
      nlohmann::ordered_json j;
      j["event"] = "data";
      j["type"] = data_change_kind_name(e.type);
      j["schema"] = e.schema;
      j["table"] = e.table;
      j["key"] = row_json(e.key);
      if (e.old_row) j["oldRow"] = row_json(*e.old_row);
      if (e.new_row) j["newRow"] = row_json(*e.new_row);
      if (!e.changed_columns.empty()) j["changedColumns"] = e.changed_columns;
      j["remote"] = e.remote;
      out() << json_text(j) << "\n";
    }
  });
}

}  // namespace quereus
