// Shell: runs SQL and dot-commands against a Database and prints results — from the line
// editor (interactive), from piped input, from scripts (`quereus FILE`, `.read FILE`) and
// from -c, all through one line-by-line reader, so dot-commands work everywhere.
//
// A statement ends where the engine's lexer finds a final ';' (sql_input.h). Non-interactive
// input stops at the first error (unless bail is off); an error in a named script is
// reported as `FILE:LINE:COLUMN: Error: CODE: message`.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <istream>
#include <functional>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/output.h"
#include "common/status.h"
#include "main/database.h"

namespace quereus {

class LineEditor;
struct LoadedPlugin;

// What the shell shows about its deployment (.databases, .plugins).
struct ShellContext {
  std::string config_path;                         // "" for the built-in default
  std::string database_name = "main";
  DatabaseOptions database_options;
  const std::vector<LoadedPlugin>* plugins = nullptr;  // may be null
  // The registry the database was opened over (.backup opens a second database on it).
  // May be null: .backup is then refused.
  std::shared_ptr<Registry> registry;
  // When the database is shared with another thread (a background sync client): held
  // while each statement or dot-command runs. May be null.
  std::recursive_mutex* db_mutex = nullptr;
  // The background sync client's state as JSON (`.sync client`). May be empty.
  std::function<std::string()> sync_client_state;
};

struct ShellOptions {
  OutputSettings output;
  // Non-interactive input stops at the first error.
  bool bail = true;
};

class Shell {
 public:
  // Borrows db, context and the streams for the shell's lifetime.
  Shell(Database& db, ShellContext context, ShellOptions options, std::ostream& out, std::ostream& err);
  ~Shell();
  Shell(const Shell&) = delete;
  Shell& operator=(const Shell&) = delete;

  // Runs `text` (SQL and dot-command lines) as one input named `name` ("" for -c and
  // piped input: errors then give the line within the input). Returns the first error,
  // or OK; with bail off the run goes on after errors and returns the last one.
  Status run_text(std::string_view text, const std::string& name = "");
  // The same, reading `in` line by line (piped input runs as it arrives).
  Status run_stream(std::istream& in, const std::string& name = "");
  // Runs the file at `path` as run_text does (CANTOPEN when it cannot be read).
  Status run_file(const std::string& path);
  // Reads lines from `editor` until end of input, .quit or .exit. Errors are printed and
  // the session goes on.
  void interactive(LineEditor& editor);

  // The completions for the line editor (keywords, tables, columns, dot-commands).
  std::vector<std::string> completions(std::string_view before, std::string_view word);

  // Async-signal-safe (Ctrl-C): a script being read (.read) and an .import stop at their
  // next line or row. Database::interrupt() stops the running statement itself. The
  // interactive shell clears the request before each line it reads.
  static void notify_interrupt() { cancel_.store(true, std::memory_order_relaxed); }

  // True once .quit or .exit was read.
  bool quit_requested() const { return quit_; }

 private:
  struct Input;  // one source being read: its name and the line counter
  // Feeds one line; runs a statement or dot-command when one is complete.
  Status feed(Input& in, const std::string& line);
  // Runs the SQL `text`, which starts at line `first_line` of `in`.
  Status run_sql(const Input& in, std::string_view text, int first_line);
  Status dot_command(const Input& in, std::string_view line, int line_no);
  void report(const Input& in, const Status& s, int line, int column);
  std::ostream& out();

  Status cmd_schema(std::string_view pattern);
  Status cmd_import(const Input& in, const std::vector<std::string>& args);
  Status cmd_backup(const std::string& dir);
  Status cmd_sync(const std::vector<std::string>& args);
  Status cmd_plugins();
  Status cmd_databases();
  Status cmd_output(const std::vector<std::string>& args, bool once);
  // Runs a query the shell needs, row by row.
  Status query(std::string_view sql, const std::function<void(const Row&)>& each);
  // .events on|off: prints every committed change event as one JSON line.
  void watch_events(bool on);

  static std::atomic<bool> cancel_;

  Database& db_;
  ShellContext context_;
  ShellOptions options_;
  std::ostream& out_;
  std::ostream& err_;
  std::unique_ptr<std::ofstream> redirect_;  // .output / .once
  bool once_ = false;                         // the redirect ends after one statement
  bool timer_ = false;
  bool stats_ = false;
  bool quit_ = false;
  int read_depth_ = 0;      // nested .read
  uint64_t events_id_ = 0;  // the .events subscription (0: none)
  // Session counters (.stats).
  uint64_t statements_run_ = 0, rows_returned_ = 0, errors_ = 0;
  std::chrono::steady_clock::duration busy_{};
};

}  // namespace quereus
