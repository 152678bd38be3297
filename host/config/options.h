// HostOptions: a deployment file (YAML) as typed options, one plain struct per component.
//
// The YAML keys are the field names below (docs/configuration.md is the reference).
// A default-constructed HostOptions is the built-in default deployment, identical to
// config/quickstart.yaml: no extra plugins, one database `main` on the `memory` module,
// warnings and errors logged to stderr.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/limits.h"
#include "ddl/declarative/reconciliation.h"
#include "types/value.h"

namespace quereus {

// Settings handed to a plugin or module, in YAML order. YAML scalars become values:
// quoted → text; plain true/false → boolean; integers → integer; decimals, .inf, .nan →
// real; ~ / null → NULL; anything else → text.
using SettingList = std::vector<std::pair<std::string, Value>>;

// One entry of `plugins:`.
struct PluginEntry {
  // Required. A bare name (`sample`) is looked up in plugin_dir by the plugin loader;
  // a path (`/opt/x/foo.so`) is used as given.
  std::string path;
  // Default: none. When set (64 hex digits), the library must hash to it or it is refused.
  std::optional<std::string> sha256;
  // Default: empty. Passed to the plugin when it is loaded.
  SettingList settings;
  // Not a YAML key: where the entry was written ("config/x.yaml:12"), for error messages.
  std::string origin;
};

// `databases.NAME.sync:` — the database syncs with a hub (`quereus serve`) in the
// background while the host runs (docs/sync-network.md). Its module must replicate
// (sync-store).
struct SyncClientConfig {
  // Required: ws://HOST:PORT/BASE or wss://HOST:PORT/BASE (the hub's base path, default /sync).
  std::string url;
  // Default: the database's name. Which of the hub's databases this one syncs with.
  std::string database_id;
  // Default: empty (no token). The bearer token sent in the handshake; write it as
  // ${SOME_ENV_VAR} rather than in the file.
  std::string token;
  // Default: 1000. Facts per page, both ways.
  int64_t batch_size = 1000;
  // Default: 50. Local commits within this many milliseconds are pushed together.
  int64_t push_debounce_ms = 50;
  // Default: 10000. Pulls at least this often even without a notification (0: only on one).
  int64_t poll_ms = 10000;
  // Default: 60000. Reconnection backs off 1 s, 2 s, 4 s, … up to this.
  int64_t reconnect_max_ms = 60000;
  // Default: 3600000 (an hour). How often, while connected, the replica's maintenance runs:
  // tombstones and held changes past their horizons are collected and the change log's dead
  // positions swept (what `select sync_prune(db)` does). 0: never (run sync_prune yourself).
  int64_t prune_interval_ms = 3'600'000;
  // Default: false. Pull only: local writes are not pushed.
  bool read_only = false;
  // wss: Default: the system's roots. A PEM file of the certificates to trust.
  std::string ca_file;
  // Not a YAML key: where the section was written ("config/x.yaml:12").
  std::string origin;
};

// One entry of `databases:`.
struct DatabaseConfig {
  // Default: "memory". The module used by CREATE TABLE without USING.
  std::string default_module = "memory";
  // Default: empty. Per module name, the options its tables get when CREATE TABLE gives none.
  std::map<std::string, SettingList> module_options;
  // Default: SQLite-like limits (common/limits.h). `limits:` maps limit names
  // (max_sql_length, max_length, max_compound_select, max_join_tables, max_expr_depth,
  // max_view_depth) to positive integers; a limit left out keeps its default.
  Limits limits;
  // Default: 0 (no timeout). A statement running longer fails with INTERRUPT.
  int64_t statement_timeout_ms = 0;
  // Default: 2 (read_write). What SQL may do with the host's files: 0 none, 1 read
  // (read_csv, read_jsonl), 2 read_write (also COPY … TO). DatabaseOptions::FileAccess.
  int file_access = 2;
  // Not a YAML key: per module name, where its configuration was written
  // ("config/x.yaml:12": its module_options mapping, else the default_module key), so an
  // error the module raises when the database opens can name the place.
  std::map<std::string, std::string> module_origins;
  // Default: none (no background sync). See SyncClientConfig.
  std::optional<SyncClientConfig> sync;
  // Default: none. `schema:` — a file or a list of files (relative to the YAML file) of
  // DECLARE SCHEMA / DECLARE LENS statements applied at every open; the loader reads them.
  // With them the open reconciles the stored schema with the declaration
  // (docs/reconciliation.md).
  std::vector<DeclaredSchemaFile> schema_files;
  // Default: none. `migrate:` — the structural intents reconciliation may need: rename
  // {old: new}, drop [..], preserve [..], retag {table: previous_id}, prepare_constraints
  // [{name, sql | file}].
  StructuralIntent migrate;
};

// One entry of `server.tokens`: a bearer token, and the site ids that may use it (empty:
// any site).
struct ServerToken {
  std::string token;
  std::vector<std::string> sites;
};

// `server:` — what `quereus serve` runs: a sync hub (coordinator) that peers sync through
// over WebSocket, plus a small HTTP API (docs/sync-network.md).
struct ServerConfig {
  // Default: 127.0.0.1:8686. HOST:PORT to listen on (port 0: any free port, printed).
  std::string listen = "127.0.0.1:8686";
  // Default: /sync. The WebSocket endpoint is BASE/ws, the HTTP routes BASE/status, ….
  std::string base_path = "/sync";
  // Required. One sync-store directory per hub database id, under this directory.
  std::string data_dir;
  // Bearer tokens accepted. Required (non-empty) unless allow_anonymous is true. In YAML a
  // string, or {token: …, sites: [site ids]} to bind the token to those sites.
  std::vector<ServerToken> tokens;
  // Default: false. Accept connections without a token (development only).
  bool allow_anonymous = false;
  // Default: none (plain). Both set: TLS (wss:// and https://) with this PEM chain and key.
  std::string tls_cert_file;
  std::string tls_key_file;
  // Default: 16 MiB. A larger frame or request body is refused and the connection closed.
  int64_t max_message_bytes = int64_t{16} << 20;
  // Default: 1000. Facts per `changes` page a peer is sent.
  int64_t batch_size = 1000;
  // Default: 100. Hub databases open at once; the least recently used idle one closes.
  int64_t max_open_databases = 100;
  // Default: 1000. Hub databases that may exist (directories under data_dir); a handshake
  // naming a new one past this is refused.
  int64_t max_databases = 1000;
  // Default: 64. Outgoing messages queued for one connection before it is closed as too slow.
  int64_t max_queued_messages = 64;
  // Default: empty. Extra sync-store options for the hub's databases (horizons, …).
  SettingList module_options;
  // Default: 3600000 (an hour). Each open hub database's maintenance runs this often:
  // tombstones and holds past their horizons are collected. 0: never.
  int64_t prune_interval_ms = 3'600'000;
  // Not a YAML key: where the section was written.
  std::string origin;
};

enum class LogLevel { kTrace, kDebug, kInfo, kWarn, kError, kOff };
enum class LogSinkType { kStderr, kStdout, kFile, kRotatingFile, kDailyFile };

// One entry of `logging.sinks:`.
struct LogSink {
  // Required: stderr | stdout | file | rotating_file | daily_file.
  LogSinkType type = LogSinkType::kStderr;
  // Required for (and only allowed with) the file types: the file appended to. A
  // rotating_file's older files are path.1.ext … path.N.ext; a daily_file writes
  // path_YYYY-MM-DD.ext.
  std::string path;
  // rotating_file: the size in bytes at which the file rotates. Default 10 MiB.
  int64_t max_size = 10 * 1024 * 1024;
  // rotating_file: rotated files kept (default 5); daily_file: days kept (default 0: all).
  int64_t max_files = -1;
  // daily_file: when a new file starts, local time. Default 00:00.
  int64_t rotation_hour = 0;
  int64_t rotation_minute = 0;
};

struct LoggingOptions {
  // Default: warn. One of trace | debug | info | warn | error | off.
  LogLevel level = LogLevel::kWarn;
  // Default: one stderr sink. An empty list logs nowhere.
  std::vector<LogSink> sinks = {LogSink{}};
};

struct HostOptions {
  // Default: empty, meaning <directory of the executable>/../lib/quereus. A relative path
  // in a file is resolved against the directory holding that file.
  std::string plugin_dir;
  // Default: empty. Loaded in order after `mem`, which the host always loads first from
  // plugin_dir unless this list names it (see plugins_to_load in host_setup.h).
  std::vector<PluginEntry> plugins;
  // Default: {main: {}}. `main` always exists (added with defaults when not listed).
  std::map<std::string, DatabaseConfig> databases = {{"main", DatabaseConfig{}}};
  // Default: see LoggingOptions.
  LoggingOptions logging;
  // Default: none. Only `quereus serve` uses it (and requires it).
  std::optional<ServerConfig> server;
};

}  // namespace quereus
