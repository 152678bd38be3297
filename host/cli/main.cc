// quereus: the command-line host. Loads a deployment (YAML), the plugins it lists, opens
// database `main` and runs SQL from -c, a script, stdin, or an interactive shell.
//
// Exit status: 0 success; 1 an SQL error; 2 a usage, configuration or plugin error.
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/check_syntax.h"
#include "cli/shell.h"
#include "config/config_loader.h"
#include "config/host_setup.h"
#include "config/logging.h"
#include "plugin/plugin_loader.h"

#ifndef QUEREUS_VERSION
#define QUEREUS_VERSION "dev"
#endif

namespace {

constexpr const char* kUsage =
    "usage: quereus [--config FILE] [--format table|json] [-c SQL]... [script.sql]\n"
    "       quereus check [--config FILE]\n"
    "  --config FILE   deployment YAML (default: built-in, the same as config/quickstart.yaml)\n"
    "  --format F      table (default): aligned, for people; json: one object per row and line\n"
    "  -c SQL          run SQL (may repeat; runs before the script)\n"
    "  script.sql      run a file of SQL; stops at the first error\n"
    "  --check-syntax FILE...  parse SQL files without running them; prints file:line:column:\n"
    "                  message per statement that does not parse, then N passed, N failed\n"
    "  check           verify the database: every row reads, every index agrees with its table,\n"
    "                  UNIQUE holds, row counts match the statistics; prints the problems\n"
    "                  (or 'ok'); exit status 0 when the database is sound, 1 when not\n"
    "  --help, --version\n"
    "With neither -c nor a script, SQL is read from stdin: an interactive shell when stdin is\n"
    "a terminal, otherwise the whole input is run as a script.\n";

// Ctrl-C in the interactive shell interrupts the running statement (Database::interrupt
// only sets a flag: safe in a signal handler) instead of killing the session and, with
// the default `mem` module, every table in it.
quereus::Database* g_interruptible = nullptr;
extern "C" void on_sigint(int) {
  if (g_interruptible) g_interruptible->interrupt();
}

int fail(int code, const std::string& message) {
  std::cerr << "Error: " << message << "\n";
  return code;
}

// quereus check: the integrity check of the opened database.
int run_check(quereus::Database& db) {
  std::vector<std::unique_ptr<quereus::Statement>> stmts;
  quereus::Status st = db.prepare("pragma integrity_check", &stmts);
  int problems = 0;
  for (auto& s : stmts) {
    bool has = true;
    while (st.ok() && (st = s->step(&has)).ok() && has) {
      std::string line = s->row()[0].to_text();
      std::cout << line << "\n";
      if (line != "ok") ++problems;
    }
  }
  if (!st.ok()) return fail(1, st.to_string());
  if (problems) std::cerr << problems << " problem(s) found\n";
  return problems ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace quereus;
  std::string config_path, script;
  std::vector<std::string> commands;
  OutputFormat format = OutputFormat::kTable;
  bool check = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i == 1 && arg == "check") {
      check = true;
      continue;
    }
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    } else if (arg == "--check-syntax") {
      std::vector<std::string> files(argv + i + 1, argv + argc);
      if (files.empty()) return fail(2, "--check-syntax needs at least one file");
      int failures = check_syntax(files, std::cout, std::cerr);
      return failures < 0 ? 2 : (failures > 0 ? 1 : 0);
    } else if (arg == "--version") {
      std::cout << "quereus " << QUEREUS_VERSION << "\n";
      return 0;
    } else if (arg == "--config" || arg == "-c" || arg == "--format") {
      const char* v = value();
      if (!v) return fail(2, arg + " needs a value\n" + kUsage);
      if (arg == "--config")
        config_path = v;
      else if (arg == "-c")
        commands.push_back(v);
      else if (std::string(v) == "table" || std::string(v) == "json")
        format = std::string(v) == "json" ? OutputFormat::kJson : OutputFormat::kTable;
      else
        return fail(2, "--format must be table or json, not '" + std::string(v) + "'");
    } else if (arg.size() > 1 && arg[0] == '-') {
      return fail(2, "unknown option " + arg + "\n" + kUsage);
    } else if (!script.empty()) {
      return fail(2, "only one script may be given\n" + std::string(kUsage));
    } else {
      script = arg;
    }
  }

  HostOptions options;
  if (!config_path.empty()) {
    if (Status s = load_config(config_path, &options); !s.ok()) return fail(2, s.to_string());
  }
  if (Status s = apply_logging(options.logging); !s.ok()) return fail(2, s.to_string());

  std::shared_ptr<Registry> registry;
  std::unique_ptr<PluginLoader> loader;
  if (Status s = load_host_plugins(options, &registry, &loader); !s.ok()) return fail(2, s.to_string());
  std::unique_ptr<Database> db;
  if (check) {
    // Checking must not create: a mistyped or missing store path is an error, not an
    // empty database that checks "ok".
    for (auto& [module, settings] : options.databases["main"].module_options) {
      bool has_path = false, has_create = false;
      for (auto& [k, v] : settings) {
        has_path = has_path || k == "path";
        has_create = has_create || k == "create_if_missing";
      }
      if (has_path && !has_create) settings.emplace_back("create_if_missing", Value::Boolean(false));
    }
  }
  if (Status s = open_configured_database(registry, "main", options.databases["main"], &db); !s.ok())
    return fail(check ? 1 : 2, s.to_string());
  if (check) return run_check(*db);

  Shell shell(*db, format, std::cout, std::cerr);
  if (commands.empty() && script.empty() && isatty(STDIN_FILENO)) {
    std::cout << "quereus " << QUEREUS_VERSION << ": SQL ends with ';', .help for help (Ctrl-C interrupts a statement, Ctrl-D quits)\n";
    g_interruptible = db.get();
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    shell.interactive(std::cin);
    return 0;
  }
  for (const std::string& sql : commands)
    if (!shell.run(sql).ok()) return 1;
  if (!commands.empty() && script.empty()) return 0;
  std::ostringstream text;
  if (script.empty()) {
    text << std::cin.rdbuf();
  } else {
    std::ifstream in(script, std::ios::binary);
    if (!in) return fail(2, "CANTOPEN: cannot open script '" + script + "'");
    text << in.rdbuf();
  }
  return shell.run(text.str()).ok() ? 0 : 1;
}
