// Database and Statement: the public embedding API of the engine.
//
// Usage:
//   auto registry = std::make_shared<quereus::Registry>();   // plus plugins, see host/plugin
//   std::unique_ptr<quereus::Database> db;
//   quereus::Status s = quereus::Database::Open(registry, {}, &db);
//   s = db->exec("create table t (a integer primary key, b text); insert into t values (1, 'x')");
//   std::vector<std::unique_ptr<quereus::Statement>> stmts;
//   s = db->prepare("select a, b from t where a = ?", &stmts);
//   stmts[0]->bind(1, quereus::Value::Integer(1));
//   bool row = false;
//   while ((s = stmts[0]->step(&row)).ok() && row) { const quereus::Row& r = stmts[0]->row(); … }
//
// Errors come back as Status (code, message, optional line/column); no exception
// escapes this API. A Database is not thread-safe: use it from one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/limits.h"
#include "common/status.h"
#include "quereus/abi.h"
#include "catalog/registry.h"
#include "ddl/declarative/reconciliation.h"
#include "transaction/change_types.h"
#include "types/param_types.h"
#include "types/value.h"

namespace quereus {

struct DatabaseOptions {
  // The database's name (databases.<name> in the deployment file).
  std::string name = "main";
  // Module used by CREATE TABLE without USING.
  std::string default_module = "memory";
  // Per module name: the options of the module's per-database instance when it has one
  // (SDK 1.3 open_database: e.g. the store's `path`), otherwise the options its tables get
  // when CREATE TABLE gives none. The default module and every module named here are
  // opened with the database; a persistent one's catalog is replayed then.
  std::map<std::string, std::vector<std::pair<std::string, Value>>> module_options;
  // The bounds on one statement's work (docs/configuration.md, "Limits").
  Limits limits;
  // A statement running longer than this fails with INTERRUPT; 0 = no timeout.
  int64_t statement_timeout_ms = 0;
  // What SQL may do with the host's files: read_csv / read_jsonl read, COPY … TO writes.
  enum class FileAccess { kNone, kRead, kReadWrite };
  FileAccess file_access = FileAccess::kReadWrite;
  // Open-time structural reconciliation (docs/reconciliation.md). When schema files are
  // given, every open runs their DECLARE SCHEMA / DECLARE LENS statements and brings the
  // stored schema to the declared shape in one atomic step: derived structure
  // automatically; a table that disappeared, a table taking over another's rows or an
  // identity (`quereus.id`) change only as `migrate` authorizes — otherwise Open fails
  // (SCHEMA, or CONFIG for contradictory intents) and nothing on disk changes.
  std::vector<DeclaredSchemaFile> schema_files;
  StructuralIntent migrate;
};

// Parameter types (ParamType, ParamTypes, value_fits_param): types/param_types.h.

// Change events (DataChangeEvent, SchemaChangeEvent, ChangeBatch and their listeners):
// transaction/change_types.h, docs/change-events.md.

// External row-change ingestion (docs/mv-ingestion.md): a row change a host already
// wrote to module storage itself (an inbound sync batch, a direct row-store write),
// reported so the engine's post-write pipeline still runs. Rows are full table rows in
// column order: an insert carries `new_row`, a delete `old_row`, an update both (the true
// before-image of this change: the previous change's `new_row` when a row changes twice).
struct ExternalRowChange {
  std::string schema;  // empty: main
  std::string table;
  RowOp op = RowOp::kInsert;
  Row old_row, new_row;
};

struct IngestOptions {
  // Row-time maintenance of the materialized views over the reported tables, amortized
  // over the batch like one statement (full rebuilds run once).
  bool maintain_materialized_views = true;
  // The reported rows reach change listeners (and the views' own changes always do).
  bool capture_changes = true;
  // Parent-side foreign-key actions (RESTRICT, CASCADE, SET NULL / DEFAULT) for updates
  // and deletes. Off by default: a replicated stream already carries its origin's
  // cascades.
  bool apply_foreign_key_actions = false;
  // What a global assertion the batch violates does at the batch's own commit: throw
  // (the default: the batch's derived effects are undone), or report — the batch commits
  // (its derived effects land) and every violated assertion is listed in the result.
  // Report is honored only when the batch runs in its own transaction (autocommit) with
  // capture_changes on; inside the caller's transaction assertions fire at its COMMIT.
  enum class AssertionFailureMode { kThrow, kReport };
  AssertionFailureMode assertion_failure_mode = AssertionFailureMode::kThrow;
};

// What an ingestion batch reports (IngestOptions::AssertionFailureMode::kReport).
struct IngestResult {
  struct Violation {
    std::string assertion;  // its name (qualified outside main)
    std::vector<Row> samples;  // up to five rows of its violation query
  };
  std::vector<Violation> assertion_violations;
};

class Statement {
 public:
  virtual ~Statement() = default;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // The output column names (FORMAT.md §6.3). Empty for statements without rows.
  // May plan the statement (and so fail); returns an empty list on failure, which
  // step() then reports.
  virtual const std::vector<std::string>& column_names() = 0;
  // Establishes the parameters' types (see ParamType): the statement is planned with them
  // (a typed parameter takes part in comparison coercion like a column of that type), and
  // the first step() of every execution fails with MISMATCH when a bound value does not fit.
  // Parameters left out stay ANY. Replaces any earlier declaration.
  virtual Status set_parameter_types(const ParamTypes& types) = 0;
  // Binds a positional parameter (1-based) or a named one (":x", "$x", "@x" or "x").
  virtual Status bind(int index, const Value& value) = 0;
  virtual Status bind(std::string_view name, const Value& value) = 0;
  // Runs to the next row. *has_row is false when the statement is done.
  virtual Status step(bool* has_row) = 0;
  // REQUIRES: the last step() set *has_row.
  virtual const Row& row() const = 0;
  // Ends the current execution (closing its implicit transaction); bindings stay.
  virtual Status reset() = 0;
  // The statement's SQL text.
  virtual std::string_view sql() const = 0;

 protected:
  Statement() = default;
};

class Database {
 public:
  // Opens a database over `registry` (modules, collations, functions). The registry
  // must hold the default module.
  static Status Open(std::shared_ptr<Registry> registry, const DatabaseOptions& options,
                     std::unique_ptr<Database>* out);

  virtual ~Database() = default;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Parses and runs every statement of `sql` in order, draining rows. Each statement
  // is its own transaction unless BEGIN is open. Stops at the first error.
  virtual Status exec(std::string_view sql) = 0;
  // Parses every statement of `sql`; nothing runs until step(). Statements are
  // planned at their first step, so later ones may use tables that earlier ones create.
  virtual Status prepare(std::string_view sql, std::vector<std::unique_ptr<Statement>>* out) = 0;
  // Sets an engine option (the PRAGMA names), e.g. "default_vtab_module".
  virtual Status set_option(std::string_view name, const Value& value) = 0;
  // True while an explicit transaction (BEGIN) is open.
  virtual bool in_transaction() const = 0;

  // Change events (see DataChangeEvent). Each call returns a subscription id for
  // unsubscribe(). Listeners run synchronously after a commit, in registration order,
  // on the thread that committed; an exception a listener throws is logged and does not
  // reach the other listeners or the committer. A listener must not run statements on
  // this Database (such a statement fails with MISUSE). Events are captured while at
  // least one listener is subscribed: a listener hears the writes made after it
  // subscribed.
  virtual uint64_t on_data_change(DataChangeListener listener) = 0;
  virtual uint64_t on_schema_change(SchemaChangeListener listener) = 0;
  // The whole batch of one transaction at once (what a replicator records).
  virtual uint64_t on_commit(ChangeBatchListener listener) = 0;
  // False when `id` names no current subscription.
  virtual bool unsubscribe(uint64_t id) = 0;
  // Marks the changes made from now on as remote (true) or local (false); returns the
  // previous setting. Sync ingestion applies a peer's changes with the origin remote.
  virtual bool set_remote_origin(bool remote) = 0;

  // Makes the statement running on this database fail with INTERRUPT at its next check
  // (scans, joins, sorts, aggregation, recursive CTEs and windows check every few hundred
  // rows). Thread-safe and async-signal-safe: it only sets an atomic flag, so it may be
  // called from another thread or a signal handler while this Database is in use. The
  // flag is cleared when the next statement starts, so a call made while no statement
  // runs has no effect. The interrupted statement's effects are undone as for any failed
  // statement; an open transaction stays open (docs/configuration.md, "Limits").
  virtual void interrupt() = 0;

  // Writes a copy of the database's on-disk module (the store) into `dest_dir`, a new or
  // empty directory, as a database that module opens with `path: dest_dir`: one committed
  // state (what committed before the call, whole; not the open transaction's uncommitted
  // writes), taken while other connections and threads keep writing. Tables of in-memory
  // modules are not copied. `progress(bytes_done, bytes_total)` (total 0: unknown) is
  // called now and then; returning false stops the backup (INTERRUPT) and removes what it
  // wrote. Until it returns OK the directory does not open as a database. May be called from
  // another thread while this Database runs statements (the writers it does not hold up).
  using BackupProgress = std::function<bool(uint64_t bytes_done, uint64_t bytes_total)>;
  virtual Status backup(const std::string& dest_dir, const BackupProgress& progress = {}) = 0;

  // Replication (SDK 1.12; docs/sync-store.md "Engine-routed apply"). sync_request relays
  // `op` with its JSON `args` to the database's replicating module (sync-store) and returns
  // its JSON reply ("status", "changes", …). sync_apply applies a page of a peer's changes
  // (the JSON of "changes"): the module resolves it against local state, the engine writes
  // the resulting rows in one transaction marked remote — indexes, materialized views,
  // assertions and change events see them — and the module's replication metadata lands in
  // the same commit batch. Refused inside an open transaction (MISUSE); NOTFOUND when no
  // module of this database replicates. *result: the module's counts (applied, skipped, …).
  virtual Status sync_request(const std::string& op, const std::string& args, std::string* reply) = 0;
  virtual Status sync_apply(const std::string& changes, std::string* result) = 0;

  // Reports `changes` (already applied to storage by the caller) as one statement: inside
  // the open transaction when there is one, otherwise in its own. The engine trusts the
  // origin and re-validates nothing (no CHECK, NOT NULL, UNIQUE or child-side key); an
  // unknown table is NOTFOUND, a malformed change or one naming a maintained table (its
  // rows are derived) is MISUSE, both before any effect. A failure (a RESTRICT, a view's
  // constraint) undoes the batch's derived effects; the reported rows stay where the
  // caller put them.
  virtual Status ingest_external_row_changes(const std::vector<ExternalRowChange>& changes,
                                             const IngestOptions& options = {}, IngestResult* result = nullptr) = 0;

 protected:
  Database() = default;
};

}  // namespace quereus
