// quereus: the command-line host. Loads a deployment (YAML), the plugins it lists, opens
// database `main` and runs SQL from -c, a script, stdin, or an interactive shell.
//
// Exit status: 0 success; 1 an SQL error; 2 a usage, configuration or plugin error.
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "cli/check_syntax.h"
#include "cli/line_editor.h"
#include "cli/shell.h"
#include "config/config_loader.h"
#include "config/host_setup.h"
#include "config/logging.h"
#include "plugin/plugin_loader.h"
#include "sync/client.h"
#include "sync/hub.h"
#include "sync/server.h"

#ifndef QUEREUS_VERSION
#define QUEREUS_VERSION "dev"
#endif
#include "quereus_git_commit.h"  // QUEREUS_GIT_COMMIT, generated at build time

namespace {

constexpr const char* kFooter = R"(
Input:
  With neither -c nor a script, SQL is read from standard input: an interactive shell
  (line editing, history in ~/.quereus_history or $QUEREUS_HISTORY, TAB completion) when
  it is a terminal, otherwise the input runs as a script. Scripts, piped input and -c
  accept dot-commands too (.help lists them). A statement ends with ';'.
  Ctrl-C clears the line being typed, or interrupts the running statement.

Output formats (--format, .mode):
  table     aligned columns, '(N rows)' (the default)
  box       aligned columns in box-drawing characters
  csv, tsv  comma / tab separated, a header line first (NULL is an empty field)
  json      one JSON array of row objects
  jsonl     one JSON object per row and line
  markdown  a Markdown table
  line      one 'column = value' line per column, rows separated by a blank line

Commands:
  quereus serve --config FILE
            run the sync hub the file's `server:` section describes (WebSocket and HTTP;
            docs/sync-network.md); prints the address it listens on; SIGINT/SIGTERM stop it
  quereus check [--config FILE]
            verify the database: every row reads, every index agrees with its table,
            UNIQUE holds, row counts match the statistics; prints the problems (or 'ok');
            exit status 0 when the database is sound, 1 when not

Exit status: 0 success; 1 an SQL error (the first one stops a script unless --bail off);
2 a usage, configuration or plugin error.
Plugins are found in the deployment's plugin_dir, by default <prefix>/lib/quereus beside
the executable's <prefix>/bin. See quereus(1) and docs/shell.md.
)";

// Ctrl-C: interrupts the running statement (Database::interrupt only sets a flag, so it
// is safe in a signal handler) and cancels the line being typed; the session goes on.
quereus::Database* g_interruptible = nullptr;
extern "C" void on_sigint(int) {
  if (g_interruptible) g_interruptible->interrupt();
  quereus::Shell::notify_interrupt();
  quereus::LineEditor::notify_interrupt();
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

// quereus serve: the sync hub of the deployment's `server:` section.
int run_serve(const quereus::HostOptions& options, const std::string& config_path,
              std::shared_ptr<quereus::Registry> registry) {
  using namespace quereus;
  if (!options.server)
    return fail(2, (config_path.empty() ? std::string("the built-in configuration") : config_path) +
                       ": `quereus serve` needs a `server:` section (docs/sync-network.md)");
  if (!registry->find_module("sync-store"))
    return fail(2, config_path + ": `quereus serve` keeps its databases in sync-store: list it under `plugins:`");
  try {
    syncnet::Hub hub(*options.server, registry);
    syncnet::Server server(hub);
    const std::string& listen = options.server->listen;
    std::cout << "quereus sync hub listening on " << listen.substr(0, listen.rfind(':')) << ":" << server.port()
              << options.server->base_path << "/ws (" << (options.server->tls_cert_file.empty() ? "ws" : "wss")
              << ", protocol 1)" << std::endl;
    server.run(true);
  } catch (const std::exception& e) {
    return fail(2, e.what());
  }
  return 0;
}

std::string history_path() {
  if (const char* p = std::getenv("QUEREUS_HISTORY")) return p;
  if (const char* home = std::getenv("HOME")) return std::string(home) + "/.quereus_history";
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace quereus;
  CLI::App app{"quereus " QUEREUS_VERSION ": a SQL engine whose storage, collations and functions are plugins",
               "quereus"};
  app.footer(kFooter);
  app.set_version_flag("--version", "quereus " QUEREUS_VERSION " (commit " QUEREUS_GIT_COMMIT ")");
  std::string config_path, script, format = "table", bail = "on", headers = "on", null_text = "NULL";
  std::vector<std::string> commands, syntax_files;
  app.add_option("--config", config_path,
                 "deployment YAML (default: built-in, the same as config/quickstart.yaml)");
  app.add_option("--format,--mode", format, std::string("how results print: ") + output_mode_list())
      ->check(CLI::IsMember({"table", "box", "csv", "tsv", "json", "jsonl", "markdown", "line"}));
  app.add_option("-c,--command", commands, "run SQL or a dot-command (may repeat; runs before the script)")
      ->allow_extra_args(false);
  app.add_option("--bail", bail, "on (default): a script, piped input or -c stops at the first error; off: go on")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--headers", headers, "on (default) / off: column names above the rows")
      ->check(CLI::IsMember({"on", "off"}));
  bool no_header = false;
  app.add_flag("--no-header", no_header, "the same as --headers off");
  app.add_option("--nullvalue", null_text, "how NULL shows in table, box, markdown and line output (default NULL)");
  app.add_option("--check-syntax", syntax_files,
                 "parse SQL files without running them; prints file:line:column: message per statement "
                 "that does not parse, then N passed, N failed");
  app.add_option("script", script, "a file of SQL and dot-commands to run");
  CLI::App* check = app.add_subcommand("check", "verify the database (see below)");
  check->fallthrough();
  CLI::App* serve = app.add_subcommand("serve", "run the sync hub of the config's `server:` section (see below)");
  serve->fallthrough();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  if (!syntax_files.empty()) {
    int failures = check_syntax(syntax_files, std::cout, std::cerr);
    return failures < 0 ? 2 : (failures > 0 ? 1 : 0);
  }

  HostOptions options;
  if (!config_path.empty()) {
    if (Status s = load_config(config_path, &options); !s.ok()) return fail(2, s.to_string());
  }
  if (Status s = apply_logging(options.logging); !s.ok()) return fail(2, s.to_string());

  std::shared_ptr<Registry> registry;
  std::unique_ptr<PluginLoader> loader;
  if (Status s = load_host_plugins(options, &registry, &loader); !s.ok()) return fail(2, s.to_string());
  if (*serve) return run_serve(options, config_path, registry);
  std::unique_ptr<Database> db;
  if (*check) {
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
    return fail(*check ? 1 : 2, s.to_string());
  if (*check) return run_check(*db);

  ShellContext context;
  context.config_path = config_path;
  context.database_options = database_options(options.databases["main"]);
  context.plugins = &loader->loaded();
  context.registry = registry;
  ShellOptions shell_options;
  (void)parse_output_mode(format, &shell_options.output.mode);
  shell_options.output.headers = headers == "on" && !no_header;
  shell_options.output.null_text = null_text;
  shell_options.bail = bail == "on";
  // A `sync:` section: a background client syncs the database with its hub while the
  // shell runs; the shell and the client take turns on the database.
  std::recursive_mutex db_mutex;
  std::unique_ptr<syncnet::SyncClient> sync_client;
  uint64_t commit_subscription = 0;
  if (const auto& sync = options.databases["main"].sync) {
    Database* raw = db.get();
    try {
      sync_client = std::make_unique<syncnet::SyncClient>(*sync, "main", [raw, &db_mutex](const auto& fn) {
        std::lock_guard lock(db_mutex);
        fn(*raw);
      });
    } catch (const std::exception& e) {
      return fail(2, sync->origin + ": " + e.what());
    }
    syncnet::SyncClient* client = sync_client.get();
    commit_subscription = db->on_commit([client](const ChangeBatch& batch) { client->committed(batch); });
    context.db_mutex = &db_mutex;
    context.sync_client_state = [client] { return client->state_json(); };
    sync_client->start();
  }
  Shell shell(*db, context, shell_options, std::cout, std::cerr);
  // Declared after the shell, so it runs first at exit: a non-interactive run's writes
  // reach the hub (10 s at most), then the client stops, before the shell and the
  // database go.
  struct StopSync {
    syncnet::SyncClient* client;
    bool flush = false;
    Database* db;
    uint64_t subscription;
    ~StopSync() {
      if (!client) return;
      if (flush && client->state().state != "failed" && !client->wait_caught_up(std::chrono::seconds(10)))
        std::cerr << "Warning: sync: not caught up with the hub after 10 s (" << client->state().state
                  << "); what was not pushed goes at the next connection\n";
      client->stop();
      db->unsubscribe(subscription);
    }
  } stop_sync{sync_client.get(), false, db.get(), commit_subscription};

  g_interruptible = db.get();
  const bool interactive = commands.empty() && script.empty() && isatty(STDIN_FILENO);
  if (interactive) {
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sa.sa_flags = 0;  // no SA_RESTART: the editor's poll wakes up
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    std::cout << "quereus " << QUEREUS_VERSION
              << ": SQL ends with ';', .help for help (Ctrl-C interrupts a statement, Ctrl-D quits)\n";
    LineEditor editor(history_path(), [&shell](std::string_view before, std::string_view word) {
      return shell.completions(before, word);
    });
    shell.interactive(editor);
    return 0;
  }
  stop_sync.flush = true;
  Status last;
  for (const std::string& text : commands) {
    Status s = shell.run_text(text);
    if (!s.ok()) {
      if (shell_options.bail) return 1;
      last = s;
    }
    if (shell.quit_requested()) return last.ok() ? 0 : 1;
  }
  if (!commands.empty() && script.empty()) return last.ok() ? 0 : 1;
  Status s;
  if (script.empty()) {
    s = shell.run_stream(std::cin);
  } else {
    std::ifstream in(script, std::ios::binary);
    if (!in) return fail(2, "CANTOPEN: cannot open script '" + script + "'");
    s = shell.run_stream(in, script);
  }
  return s.ok() && last.ok() ? 0 : 1;
}
