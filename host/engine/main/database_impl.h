// DatabaseImpl: the engine behind the public Database API — modules, catalog and its
// persistence, options, and statement execution; it owns the transaction coordinator
// (transaction/coordinator.h) and forwards the transaction's calls to it.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <memory>
#include <string>
#include <vector>

#include "common/limits.h"
#include "transaction/assertions.h"
#include "transaction/change_events.h"
#include <nlohmann/json_fwd.hpp>

#include "main/database.h"
#include "ddl/declarative/declared_schema.h"
#include "transaction/deferred_constraints.h"
#include "transaction/transaction_context.h"
#include "transaction/coordinator.h"
#include "transaction/engine_options.h"
#include "ddl/ddl_context.h"
#include "optimizer/optimizer.h"
#include "planner/planning_context.h"
#include "catalog/catalog.h"

namespace quereus {

class MaintenanceManager;  // maintained/maintenance.h
struct SyncPlanRow;        // main/sync_apply.cc

class DatabaseImpl : public Database, public DdlContext {
 public:
  DatabaseImpl(std::shared_ptr<Registry> registry, const DatabaseOptions& options);
  ~DatabaseImpl() override;

  Status exec(std::string_view sql) override;
  Status prepare(std::string_view sql, std::vector<std::unique_ptr<Statement>>* out) override;
  Status set_option(std::string_view name, const Value& value) override;
  bool in_transaction() const override { return txn_.in_explicit(); }
  uint64_t on_data_change(DataChangeListener listener) override { return txn_.on_data_change(std::move(listener)); }
  uint64_t on_schema_change(SchemaChangeListener listener) override {
    return txn_.on_schema_change(std::move(listener));
  }
  uint64_t on_commit(ChangeBatchListener listener) override { return txn_.on_commit(std::move(listener)); }
  bool unsubscribe(uint64_t id) override { return txn_.unsubscribe(id); }
  bool set_remote_origin(bool remote) override { return txn_.changes().set_remote(remote); }
  void interrupt() override { interrupt_requested_.store(true, std::memory_order_relaxed); }
  Status backup(const std::string& dest_dir, const BackupProgress& progress) override;
  Status sync_request(const std::string& op, const std::string& args, std::string* reply) override;
  Status sync_apply(const std::string& changes, std::string* result) override;
  // The flag interrupt() sets; a top-level statement clears it when it starts.
  std::atomic<bool>& interrupt_flag() { return interrupt_requested_; }

  Registry& registry() override { return *registry_; }
  Catalog& catalog() override { return catalog_; }
  DeclaredSchemas& declared_schemas() override { return declared_schemas_; }
  EngineOptions& options() override { return options_; }
  const std::vector<std::string>& schema_path() const override { return options_.schema_path; }
  const Limits& limits() const override { return options_.limits; }
  bool foreign_keys_on() const override { return options_.foreign_keys; }
  const DatabaseOptions& db_options() const { return db_options_; }
  const std::vector<std::pair<std::string, Value>>* configured_module_options(const std::string& module) const override {
    auto it = db_options_.module_options.find(module);
    return it == db_options_.module_options.end() ? nullptr : &it->second;
  }

  // ---- modules and the persistent catalog (docs/persistence.md)
  // The module instance serving this database under `name`: its per-database instance
  // (opened at first use when the database did not name it), else the registered one.
  // Null when no module has that name. Throws when the module cannot open the database.
  std::shared_ptr<VtabModule> module(const std::string& name) override;
  // True when `name` has a per-database instance (its module_options configure it, not
  // its tables).
  bool module_is_per_database(const std::string& name) const override;
  // Opens the default module and every module named in the options, then replays the
  // persistent catalogs. Called once by Database::Open.
  void open_modules();
  // Open-time structural reconciliation (main/reconciliation.cc, docs/reconciliation.md):
  // when the options name schema files, brings the stored schema to the declared one in
  // one schema-change scope, or throws with nothing changed. Called once by Database::Open.
  void reconcile_structure();
  // The module instances this database has opened, each once (aliases folded), in name
  // order, with the name each was first opened under.
  std::vector<std::pair<std::string, std::shared_ptr<VtabModule>>> opened_modules() const {
    std::lock_guard<std::mutex> lock(modules_mu_);
    std::vector<std::pair<std::string, std::shared_ptr<VtabModule>>> out;
    for (const auto& [name, slot] : modules_) {
      bool seen = false;
      for (const auto& o : out) seen = seen || o.second == slot.instance;
      if (!seen && slot.instance) out.emplace_back(name, slot.instance);
    }
    return out;
  }
  // Writes the catalog entry of `table` (or removes the entry of schema.name) in its
  // module's persistent catalog; no-op for a module that keeps none.
  void persist_table(const TableEntry& table) override;
  void note_column_rename(const std::string& schema, const std::string& table, const std::string& from,
                          const std::string& to) override {
    column_renames_.push_back({schema, table, from, to});
  }
  void unpersist_table(const TableEntry& table, const std::string& old_name = {}) override;
  // Views, assertions and declared schemas (with what their APPLY created) live in the
  // default module's catalog, like tables in theirs.
  void persist_view(const ViewEntry& view) override;
  void unpersist_view(const std::string& schema, const std::string& name) override;
  void persist_assertion(const AssertionEntry& assertion) override;
  void unpersist_assertion(const std::string& schema, const std::string& name) override;
  // DECLARE SCHEMA: the declaration's canonical text. (A schema APPLY creates is implied
  // by the objects stored in it; the applied-object records stay in memory.)
  void persist_declaration(const std::string& schema, const std::string& text) override;
  void mark_unvalidated_index(const TableEntry& table, const std::string& index, bool on) override;
  // Runs one DDL statement's effects (`ddl`) inside the schema-change scope (SDK 1.4) of
  // every module this database has opened that has one: what the statement writes there becomes
  // durable at the end in one atomic step, or not at all (docs/store.md, "Crash safety").
  // When `ddl` or a scope's commit fails, the scopes roll back and every table and view
  // whose in-memory definition no longer matches its module's stored catalog is reloaded
  // from it (an open transaction that such a table had joined is rolled back first).
  // Re-entrant: a DDL statement run inside another's scope joins it.
  void run_schema_change(const std::function<void()>& ddl) override;

  // Row-time maintenance of the maintained tables (materialized views).
  MaintenanceManager& maintenance() { return *maintenance_; }

  // Throws when module DDL (`statement`, e.g. "CREATE INDEX") may not run now: inside an
  // explicit transaction under ddl_transaction_policy = strict.
  void check_ddl_allowed(const std::string& statement) const override;
  // Throws unless the deployment lets SQL read (or, `write`, also write) the host's files
  // (DatabaseOptions::file_access); `what` names the function or statement.
  void require_file_access(bool write, const std::string& what) const;

  // Resolves a table by optional schema; throws "not found" when absent.
  std::shared_ptr<TableEntry> require_table(const std::string& schema, const std::string& name);

  using Relation = quereus::ResolvedRelation;
  // Resolves a table or view name: in `schema` when given, otherwise along `path` (the
  // session schema_path when null), one schema at a time, each schema's tables and views
  // together. Throws "not found" (with a "Did you mean" hint naming another schema that
  // holds the name) when absent.
  Relation resolve_relation(const std::string& schema, const std::string& name,
                            const std::vector<std::string>* path = nullptr) override;
  // The same lookup without the error: an empty Relation when the name resolves to nothing.
  Relation find_relation(const std::string& schema, const std::string& name,
                         const std::vector<std::string>* path = nullptr) override;
  // The message resolve_relation fails with for a name that resolves to nothing.
  std::string relation_not_found(const std::string& schema, const std::string& name,
                                 const std::vector<std::string>* path = nullptr) override;

  // ---- DDL's seam (ddl/ddl_context.h): plan_statement on this database.
  std::unique_ptr<Executable> plan(const ast::Statement& stmt) override;

  // ---- the planner's seams (planner/planning_context.h)
  RelPtr optimize_plan(RelPtr root) override;
  // optimize_plan for the root of a whole statement that writes nothing (a SELECT), then
  // the statement-level passes (Optimizer::finish_query).
  RelPtr optimize_query(RelPtr root);
  std::vector<TableFunctionColumn> table_function_shape(const TableFunction& fn, std::span<const Value> args) override {
    return fn.shape(*this, args);
  }
  PlannedDml plan_dml_relation(const ast::Statement& stmt, const std::vector<std::string>& path,
                               const PlanSeed* seed) override;

  // ---- the transaction coordinator (transaction/coordinator.h), used by statements
  TransactionCoordinator& transaction() { return txn_; }
  void statement_begin() { txn_.statement_begin(); }
  void statement_commit() { txn_.statement_commit(); }
  void statement_rollback() { txn_.statement_rollback(); }
  // For a DDL statement that also writes rows (ALTER TABLE … SET MAINTAINED): in
  // autocommit, commits the statement's rows now, inside its schema-change scope, so a
  // module that stages the scope (store) writes rows and catalog in one batch. Inside an
  // explicit transaction the rows wait for its COMMIT as usual.
  void commit_statement_in_schema_scope() { txn_.commit_statement_in_schema_scope(); }
  Status ingest_external_row_changes(const std::vector<ExternalRowChange>& changes, const IngestOptions& options,
                                     IngestResult* result) override;
  void join(TableEntry& entry) override { txn_.join(entry); }
  void forget(TableEntry& entry) override { txn_.forget(entry); }
  DeferredConstraints& deferred() override { return txn_.deferred(); }
  ChangeLog& changes() override { return txn_.changes(); }
  Assertions& assertions() override { return assertions_; }

  uint64_t next_generation() override { return ++generation_; }
  bool foreign_keys_enforced() const override { return options_.foreign_keys; }
  std::shared_ptr<const ScalarExpr> bind_row_expr(const TableEntry& table, const ast::Expr& expr) override;
  // Bumped by every schema change; statements re-plan when it moved.
  uint64_t schema_version() const override { return schema_version_; }
  void bump_schema_version() override { ++schema_version_; }
  // A fresh execution (deferred checks, assertions): ctx.db and a new generation.
  void open_execution(ExecContext& ctx) override;

 private:
  struct ModuleSlot {
    std::shared_ptr<VtabModule> instance;  // what this database's tables use
    std::shared_ptr<VtabModule> base;      // the registered module
    bool per_database = false;             // instance came from open_database
  };
  std::map<std::string, ModuleSlot> modules_;  // lower-case module name
  // Guards modules_ against readers on other threads (backup()); the owning thread reads
  // it without the lock, since only that thread writes it.
  mutable std::mutex modules_mu_;
  // Runs a stored catalog entry (persistence.cc): its DDL as DdlOrigin::kStoredCatalog.
  Status run_stored(const std::string& text);
  // The module of this database that replicates (SDK 1.12), and its name; throws NOTFOUND.
  std::pair<std::string, std::shared_ptr<VtabModule>> replicating_module();
  // Writes a resolved plan's rows in one remote-origin transaction and commits it with the
  // plan armed; the index of a row a local constraint refused (transaction rolled back, the
  // reason in *failure), or nullopt when it committed.
  // Resolves a page's rows and writes them (write_sync_rows), holding aside rows a local
  // constraint refuses and resolving again; the module's result of the finished apply.
  std::string write_page_rows(const std::shared_ptr<VtabModule>& module, const std::string& changes);
  std::optional<size_t> write_sync_rows(const std::vector<SyncPlanRow>& rows, const std::shared_ptr<VtabModule>& module,
                                        const std::string& token, std::string* failure);
  // Schema replication (sync_apply.cc, docs/sync-store.md "Schema replication"): a
  // replicating module is told each table's definition, as parts, after local DDL; a peer
  // page's schema changes run as DDL in two schema-change scopes, before and after its data.
  bool replicates(VtabModule* module);
  // Whether the module holds peers' schema steps that failed here (retried with every page).
  bool held_schema_steps(const std::shared_ptr<VtabModule>& module);
  void capture_schema(const TableEntry& table);
  void run_schema_phase(const std::shared_ptr<VtabModule>& module, const std::string& module_name, uint64_t token,
                        const char* phase, const nlohmann::json& steps);
  void run_schema_step(const nlohmann::json& step, const std::string& module_name, bool check_only = false);
  std::map<VtabModule*, bool> replicates_;
  struct ColumnRename {
    std::string schema, table, from, to;
  };
  std::vector<ColumnRename> column_renames_;  // this DDL statement's, until captured
  bool adopt_stored_maintained(const std::string& text);
  void verify_reads_back(const TableSchema& live, const std::string& text);
  bool reopening_unresolved() const override { return reopening_unresolved_; }
  bool reopening_unresolved_ = false;
  bool reading_stored() const override { return reading_stored_ > 0; }
  int reading_stored_ = 0;
  // A maintained table whose module keeps no catalog (memory) in a database whose default
  // module does: its definition is stored there ("hosted:"), and it is refilled at reopen.
  bool hosted_here(const TableEntry& table);
  // Whether every source of maintained table `table` comes back at reopen (stored, or
  // itself a hosted view whose sources do).
  bool hosted_sources_durable(const TableEntry& table);
  void replay_catalog(VtabModule& module, const std::string& module_name);
  // Read at open, used by reconcile_structure: the tables an earlier reconciliation
  // preserved ("dormant:<schema>.<table>" → their stored text and module), and the
  // structural history of the default module's catalog ("" when none).
  struct DormantEntry {
    std::string text;
    std::shared_ptr<VtabModule> module;
  };
  std::map<std::string, DormantEntry> dormant_entries_;
  // Reserves (or releases) in the catalog the table and index names of a preserved
  // table's stored text, so nothing created meanwhile lands on its storage.
  void reserve_dormant_names(const std::string& text, const std::string& schema, bool reserve);
  std::string history_text_;
  void validate_marked_indexes(VtabModule& module, const std::vector<std::pair<std::string, std::string>>& marks);
  // The modules whose schema-change scope is open (run_schema_change), and its depth.
  std::vector<std::shared_ptr<VtabModule>> scoped_modules_;
  int schema_scope_depth_ = 0;
  // The definitions of temp tables as last committed (key as in a module catalog -> the
  // table's text), the open statement's changes to them ("" removes), and their module:
  // temp tables are never written to a module's catalog, so a failed statement is
  // reconciled against these.
  std::map<std::string, std::string> temp_catalog_, temp_staged_;
  std::map<std::string, const VtabModule*> temp_module_;
  // After a failed schema change: reloads the tables and views of `module` whose
  // definition differs from its stored catalog. Returns a note for the error message
  // ("" when nothing had to be reloaded).
  std::string reconcile_with_catalog(VtabModule& module, const std::string& module_name);
  void unload_table(TableEntry& table);

  Assertions assertions_;
  // Row-time maintenance of maintained tables (a row observer, registered at construction).
  std::unique_ptr<MaintenanceManager> maintenance_;

  std::shared_ptr<Registry> registry_;
  DatabaseOptions db_options_;
  EngineOptions options_;
  std::atomic<bool> interrupt_requested_{false};
  Catalog catalog_;
  DeclaredSchemas declared_schemas_;

  uint64_t generation_ = 0;
  uint64_t schema_version_ = 1;
  // Last: built over the members above, torn down first.
  TransactionCoordinator txn_{*this, assertions_, row_observers()};
};

}  // namespace quereus
