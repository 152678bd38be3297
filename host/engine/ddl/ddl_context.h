// DdlContext: what ddl/ — the DDL executors, ALTER, tags, schema expressions and the
// declarative differ — may reach of the database: the transaction context (change log,
// catalog, schema version, assertions, planning) plus the session settings, the modules,
// and the persistent catalog. DatabaseImpl (main/) implements it; ddl/ includes this
// header, never main/ (docs/architecture.md "Layout").
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "transaction/engine_options.h"
#include "transaction/transaction_context.h"
#include "types/value.h"

namespace quereus {

struct DeclaredSchemas;
class Executable;
namespace ast {
struct Statement;
}
class VtabModule;
struct ViewEntry;

class DdlContext : public TransactionContext {
 public:
  // The session settings (pragmas).
  virtual EngineOptions& options() = 0;
  // The options the deployment gives `module`'s tables (databases.<name>.module_options),
  // or null when it names none.
  virtual const std::vector<std::pair<std::string, Value>>* configured_module_options(
      const std::string& module) const = 0;
  // The declared (DECLARE SCHEMA) schemas.
  virtual DeclaredSchemas& declared_schemas() = 0;

  // The module instance serving this database under `name` (null when none has that
  // name), and whether it is a per-database instance.
  virtual std::shared_ptr<VtabModule> module(const std::string& name) = 0;
  virtual bool module_is_per_database(const std::string& name) const = 0;

  // The persistent catalog (docs/persistence.md).
  virtual void persist_table(const TableEntry& table) = 0;
  // ALTER TABLE … RENAME COLUMN renamed `from` to `to` (schema replication tells peers a
  // rename from a drop and an add). Called before the table is persisted again.
  virtual void note_column_rename(const std::string& /*schema*/, const std::string& /*table*/,
                                  const std::string& /*from*/, const std::string& /*to*/) {}
  virtual void unpersist_table(const TableEntry& table, const std::string& old_name = {}) = 0;
  virtual void persist_view(const ViewEntry& view) = 0;
  virtual void unpersist_view(const std::string& schema, const std::string& name) = 0;
  virtual void persist_declaration(const std::string& schema, const std::string& text) = 0;
  // Marks (or unmarks) a UNIQUE index whose durable entries were built while the open
  // transaction's uncommitted writes decided that it holds: a crash before the mark is
  // cleared makes the next open validate the index (docs/transactions.md).
  virtual void mark_unvalidated_index(const TableEntry& table, const std::string& index, bool on) = 0;
  // Runs `ddl` as one atomic schema change (every module's schema-change scope; on
  // failure the catalog is brought back to what is stored). Statements get one from the
  // executor; DDL the engine makes on its own (a repair after a rollback) asks for one.
  virtual void run_schema_change(const std::function<void()>& ddl) = 0;

  // Throws when module DDL (`statement`, e.g. "CREATE INDEX") may not run now.
  virtual void check_ddl_allowed(const std::string& statement) const = 0;
  // Plans one statement as the statement dispatcher does (main/statement_planner.cc):
  // APPLY SCHEMA runs the DDL its differ produced through it.
  virtual std::unique_ptr<Executable> plan(const ast::Statement& stmt) = 0;
  // Reopen's last resort (main/persistence.cc): a stored table whose DEFAULT or generated
  // body reads a relation that no longer exists (a temp table, a memory table) attaches
  // with those bodies unresolved — a write or read that needs one then fails naming the
  // missing relation — rather than failing the whole open.
  virtual bool reopening_unresolved() const { return false; }
  // While a stored catalog is read back (reopen, and the check that a definition about to
  // be stored reads back): the determinism gate, which judged each body when it was
  // declared, is not applied again; writes still judge what they evaluate.
  virtual bool reading_stored() const { return false; }
  // The message a lookup of a relation that resolves to nothing fails with.
  virtual std::string relation_not_found(const std::string& schema, const std::string& name,
                                         const std::vector<std::string>* path = nullptr) = 0;
};

}  // namespace quereus
