// Engine-side module interfaces. The planner and runtime talk to storage only
// through these; host/plugin/ implements them over the SDK's C ABI.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "quereus/abi.h"
#include "catalog/lens.h"
#include "catalog/table_schema.h"
#include "types/value.h"

namespace quereus {

struct FilterSpec {
  int column = 0;
  qrs_filter_op op = QRS_OP_EQ;
  bool usable = true;
  bool has_value = false;
  Value value;                // EQ/GT/GE/LT/LE
  std::vector<Value> in_values;  // IN
  uint32_t in_count = 0;
  std::string form;  // QRS_OP_FORM: the access form's name
};

struct OrderSpec {
  int column = 0;
  bool desc = false;
};

struct PlanRequest {
  std::vector<FilterSpec> filters;
  std::vector<OrderSpec> ordering;
  int64_t limit = -1;
  int64_t offset = 0;
  double estimated_rows = -1;
};

struct PlanResult {
  std::vector<bool> handled;  // one per filter
  double cost = 0;
  double rows = 0;
  bool provides_ordering = false;
  int64_t plan_id = 0;
  std::string explain;
};

struct ScanArgs {
  int64_t plan_id = 0;
  std::vector<FilterSpec> filters;  // bound values
  std::vector<bool> handled;
  bool provides_ordering = false;
  std::vector<OrderSpec> ordering;
  int64_t limit = -1;
  bool read_committed = false;  // committed.<table>: without this connection's uncommitted writes
};

// A pull cursor that hands rows over in batches.
class VtabCursor {
 public:
  virtual ~VtabCursor() = default;
  // Writes the next batch into rows[0, n) and returns n (0 when exhausted). The rows and
  // cells already in `rows` are overwritten in place so their buffers are reused; entries
  // past n are stale and must be ignored.
  virtual size_t next_batch(std::vector<Row>& rows) = 0;
};

enum class RowOp { kInsert = QRS_ROW_INSERT, kUpdate = QRS_ROW_UPDATE, kDelete = QRS_ROW_DELETE };
enum class ConflictAction {
  kAbort = QRS_CONFLICT_ABORT,
  kRollback = QRS_CONFLICT_ROLLBACK,
  kFail = QRS_CONFLICT_FAIL,
  kIgnore = QRS_CONFLICT_IGNORE,
  kReplace = QRS_CONFLICT_REPLACE
};

struct UpdateResult {
  enum class Outcome { kOk, kNoop, kConstraint } outcome = Outcome::kOk;
  qrs_constraint_kind constraint_kind = QRS_CONSTRAINT_UNIQUE;
  // The stored row. For an OK insert/update the adapter leaves it empty and sets
  // row_as_written when the module stored exactly the row it was given (no copy back).
  std::optional<Row> row;
  bool row_as_written = false;
  std::optional<Row> replaced_row;
  std::optional<Row> existing_row;
};

// A transaction participant (one per table instance that joined a transaction).
class VtabConnection {
 public:
  virtual ~VtabConnection() = default;
  virtual void begin() = 0;
  virtual void commit() = 0;
  virtual void rollback() = 0;
  virtual void savepoint(uint32_t depth) = 0;
  virtual void release_savepoint(uint32_t depth) = 0;
  virtual void rollback_to_savepoint(uint32_t depth) = 0;
};

// One ALTER TABLE arm as the engine hands it to a table (see abi.h qrs_schema_change).
struct SchemaChange {
  qrs_schema_change_kind kind = QRS_CHANGE_RENAME_COLUMN;
  int column = -1;        // the column acted on, in the old schema (ADD_COLUMN: the new one)
  std::string name;       // column / constraint acted on (renames: the old name)
  std::string new_name;   // renames
  // ADD_COLUMN: the new cell of an existing row; SET_NOT_NULL: the backfill for a NULL
  // cell (NULL: none). Empty: NULL.
  std::function<Value(std::span<const Value> old_row)> fill;
  // SET_DATA_TYPE: the value as the new type stores it; throws kMismatch. Empty: identity.
  std::function<Value(const Value&)> convert;
};

// The answer of VtabTable::lookup.
enum class LookupStatus { kFound, kNotFound, kUnsupported };

// SDK 1.5, the backing-host capability (abi.h qrs_maintenance_op): one privileged,
// ordered maintenance write into a maintained table.
struct MaintenanceOp {
  enum class Kind { kUpsert = QRS_MAINT_UPSERT, kDeleteKey = QRS_MAINT_DELETE_KEY };
  Kind kind = Kind::kUpsert;
  Row row;  // upsert: the full row; delete: the primary-key cells in key order
};

// A change a maintenance op realized: `old_row` empty for an insert, `new_row` empty for
// a delete.
struct BackingChange {
  RowOp op = RowOp::kInsert;
  Row old_row, new_row;
};

// One connected table. All methods throw quereus::Error on failure.
class VtabTable {
 public:
  virtual ~VtabTable() = default;
  virtual PlanResult best_access_plan(const PlanRequest& req) = 0;
  virtual std::unique_ptr<VtabCursor> open_cursor(const ScanArgs& args) = 0;
  virtual UpdateResult update(RowOp op, std::span<const Value> values,
                              std::span<const Value> old_key, ConflictAction on_conflict) = 0;
  virtual std::unique_ptr<VtabConnection> open_connection() = 0;
  // ALTER TABLE: brings the storage to `new_schema` by `change`, all or nothing (throws
  // leaving it untouched). Returns false when the module does not implement the hook or
  // this arm (UNSUPPORTED); the caller decides whether that refuses the ALTER.
  virtual bool alter_table(const SchemaChange& /*change*/, const TableSchema& /*new_schema*/) { return false; }
  // Point lookup (ABI 1.3, abi.h qrs_table_vtable.lookup): the first row in key order whose
  // leading primary-key members equal `key` (1..key members, in key order, under the key's
  // collations), as this connection sees the table; with a full key, the row at that key.
  // kFound fills `out` (its buffers are reused). kUnsupported: the module does not answer
  // it; the caller reads through a cursor instead (runtime/point_lookup.h does both).
  virtual LookupStatus lookup(std::span<const Value> /*key*/, Row& /*out*/) { return LookupStatus::kUnsupported; }
  // SDK 1.5, backing host (abi.h apply_maintenance): applies `ops` in order to this
  // connection's transaction state and appends the changes they realized to `out`
  // (value-identical upserts and deletes of missing keys realize none). False when the
  // module is no backing host.
  virtual bool apply_maintenance(std::span<const MaintenanceOp> /*ops*/, std::vector<BackingChange>& /*out*/) {
    return false;
  }
  // SDK 1.5, backing host (abi.h replace_contents): atomically replaces the committed rows
  // with those `next` yields (true with a row, false at the end). Throws Error(kConstraint)
  // on a duplicate key, leaving the table as it was. False when the module is no backing
  // host.
  virtual bool replace_contents(const std::function<bool(Row&)>& /*next*/) { return false; }
};

// SDK 1.10: how a module says a set of its basis tables jointly backs one logical table
// (abi.h qrs_mapping_advertisement; docs/decompositions.md). Checked against the catalog
// by the lens compiler (main/lens_compiler.cc) before it is used.
struct AdvertisedMember {
  std::string relation_id;
  std::string schema_name;
  std::string table_name;
  bool optional = false;
  std::vector<std::pair<std::string, std::string>> columns;  // logical column → basis column
  struct Pivot {
    std::string entity, attribute, value;
  };
  std::optional<Pivot> pivot;            // set: an entity-attribute-value member
  std::vector<std::string> key_columns;  // its shared-key columns
};
struct MappingAdvertisement {
  std::string id;
  std::string logical_table;
  bool auxiliary = false;  // auxiliary-access (else primary storage)
  std::string anchor;      // the anchor member's relation id
  bool surrogate = false;  // the shared key is a surrogate (else the logical key's tuple)
  std::vector<AdvertisedMember> members;
  struct Access {
    std::vector<std::string> columns;  // logical columns
    std::vector<std::string> forms;    // "equality", "range", "contains", …
  };
  std::vector<Access> access;
  std::string module;  // the module that advertised it (filled by the resolver)
};

struct ModuleCapabilities {
  bool persistent = false;
  bool scan_snapshot_isolation = false;
  bool committed_reads = false;  // honours ScanArgs::read_committed
  bool backing_host = false;     // SDK 1.5: may host a maintained table
  bool access_forms = false;     // SDK 1.11: plans QRS_OP_FORM filters
};

class VtabModule {
 public:
  virtual ~VtabModule() = default;
  virtual std::unique_ptr<VtabTable> create(const TableSchema& schema) = 0;
  virtual std::unique_ptr<VtabTable> connect(const TableSchema& schema) = 0;
  virtual void destroy(const std::string& schema_name, const std::string& table_name) = 0;
  virtual ModuleCapabilities capabilities() const = 0;
  // SDK 1.3: the instance that serves database `database_name` (configured by `options`),
  // or null when this instance serves every database. Throws when the module cannot open
  // the database's storage.
  virtual std::shared_ptr<VtabModule> open_database(const std::string& /*database_name*/,
                                                    const std::vector<std::pair<std::string, Value>>& /*options*/) {
    return nullptr;
  }
  // SDK 1.3: the module's persistent catalog. False when it keeps none (nothing is stored
  // or listed). catalog_put with an empty `text` removes the entry.
  virtual bool catalog_put(const std::string& /*key*/, const std::string& /*text*/) { return false; }
  virtual bool catalog_list(const std::function<void(const std::string& key, const std::string& text)>& /*emit*/) {
    return false;
  }
  // SDK 1.4: the schema-change scope. schema_begin returns false when the module has none
  // (its calls are durable one by one); otherwise schema_commit makes everything since
  // schema_begin durable at once, and schema_rollback (never throws) undoes it.
  virtual bool schema_begin() { return false; }
  virtual void schema_commit() {}
  virtual void schema_rollback() noexcept {}
  // SDK 1.6: a logical schema was deployed. How many of the snapshot's relations the module
  // backs; nullopt when it takes no notification. Throws the module's error.
  virtual std::optional<uint32_t> notify_lens_deployment(const LensDeploymentSnapshot& /*snapshot*/) {
    return std::nullopt;
  }
  // SDK 1.7: an online backup into `dest_dir` (qrs_module_vtable.backup). False when the
  // module has none; throws the module's error. `progress(done, total)` returning false
  // stops the backup (INTERRUPT).
  virtual bool backup(const std::string& /*dest_dir*/,
                      const std::function<bool(uint64_t bytes_done, uint64_t bytes_total)>& /*progress*/) {
    return false;
  }
  // SDK 1.10: the mapping advertisements the module recognizes over `tables` (its own
  // tables of basis schema `basis_schema`); nullopt when it advertises nothing (name-match
  // only). Throws the module's error.
  virtual std::optional<std::vector<MappingAdvertisement>> mapping_advertisements(
      const std::string& /*basis_schema*/, const std::vector<const TableSchema*>& /*tables*/) {
    return std::nullopt;
  }
  // SDK 1.12: a replication request (`op`, JSON `args`) and the module's JSON reply;
  // nullopt when the module does not replicate. Throws the module's error.
  virtual std::optional<std::string> replication(const std::string& /*op*/, const std::string& /*args*/) {
    return std::nullopt;
  }
};

}  // namespace quereus
