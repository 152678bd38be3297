// Host-side adapters: a plugin's C-ABI objects presented as engine interfaces
// (VtabModule/VtabTable/VtabCursor/VtabConnection, ScalarFunction, AggregateFunction,
// Collation).
//
// Lifetime: every adapter keeps the plugin's library loaded. Tables, cursors and
// connections also keep their module alive, so a plugin's release slots run in order
// (cursor close / connection close → table release → module release) and the library is
// unloaded only after the last of them. Errors from the plugin are thrown as
// quereus::Error with the plugin's status mapped to a StatusCode and its message.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/function.h"
#include "plugin/host_api.h"
#include "types/collation.h"
#include "catalog/module.h"

namespace quereus {

// How an error of a module's open_database call begins: "module '<module>' open of
// database <database>". Host setup recognizes it to name where the module is configured.
std::string module_open_context(std::string_view module, std::string_view database);

struct PluginTableHandle;  // a connected qrs_table, shared by a table and its cursors

class PluginModule final : public VtabModule, public std::enable_shared_from_this<PluginModule> {
 public:
  // Takes ownership of `module` (its release slot runs when the last reference goes).
  // Reads the module's capabilities once.
  static std::shared_ptr<PluginModule> make(std::string name, qrs_module module,
                                            PluginLibrary library);
  ~PluginModule() override;
  PluginModule(const PluginModule&) = delete;
  PluginModule& operator=(const PluginModule&) = delete;

  const std::string& name() const { return name_; }

  std::unique_ptr<VtabTable> create(const TableSchema& schema) override;
  std::unique_ptr<VtabTable> connect(const TableSchema& schema) override;
  void destroy(const std::string& schema_name, const std::string& table_name) override;
  ModuleCapabilities capabilities() const override { return caps_; }
  std::shared_ptr<VtabModule> open_database(const std::string& database_name,
                                            const std::vector<std::pair<std::string, Value>>& options) override;
  bool catalog_put(const std::string& key, const std::string& text) override;
  bool catalog_list(const std::function<void(const std::string& key, const std::string& text)>& emit) override;
  bool schema_begin() override;
  void schema_commit() override;
  void schema_rollback() noexcept override;
  std::optional<uint32_t> notify_lens_deployment(const LensDeploymentSnapshot& snapshot) override;
  bool backup(const std::string& dest_dir,
              const std::function<bool(uint64_t bytes_done, uint64_t bytes_total)>& progress) override;
  std::optional<std::string> replication(const std::string& op, const std::string& args) override;
  std::optional<std::vector<MappingAdvertisement>> mapping_advertisements(
      const std::string& basis_schema, const std::vector<const TableSchema*>& tables) override;

 private:
  PluginModule(std::string name, qrs_module module, PluginLibrary library);
  std::unique_ptr<VtabTable> open(bool create, const TableSchema& schema);

  PluginLibrary library_;  // first member: destroyed last, after release ran
  std::string name_;
  void* self_;
  qrs_module_vtable vt_;
  ModuleCapabilities caps_;
};

class PluginTable final : public VtabTable {
 public:
  explicit PluginTable(std::shared_ptr<PluginTableHandle> handle) : h_(std::move(handle)) {}
  // Releases the plugin table once its cursors and connections are gone too.
  ~PluginTable() override = default;

  // Without a best_access_plan slot (or on QRS_UNSUPPORTED): a full scan, cost 1e6.
  PlanResult best_access_plan(const PlanRequest& req) override;
  std::unique_ptr<VtabCursor> open_cursor(const ScanArgs& args) override;
  UpdateResult update(RowOp op, std::span<const Value> values, std::span<const Value> old_key,
                      ConflictAction on_conflict) override;
  // nullptr when the module does not take part in transactions.
  std::unique_ptr<VtabConnection> open_connection() override;
  // Without an alter_table slot (or on QRS_UNSUPPORTED): false.
  bool alter_table(const SchemaChange& change, const TableSchema& new_schema) override;
  // Without a lookup slot (a plugin built before ABI 1.3), on QRS_UNSUPPORTED, or for a key
  // holding an integer outside int64 (which only a cursor's restated filter can answer):
  // kUnsupported.
  LookupStatus lookup(std::span<const Value> key, Row& out) override;
  // SDK 1.5 backing host. False without the slot (a plugin built before 1.5: its vtable's
  // struct_size ends before it) or on QRS_UNSUPPORTED; any other failure throws Error with
  // the plugin's status and message (an exception the host's callback raised is rethrown
  // as it was).
  bool apply_maintenance(std::span<const MaintenanceOp> ops, std::vector<BackingChange>& out) override;
  bool replace_contents(const std::function<bool(Row&)>& next) override;

 private:
  std::shared_ptr<PluginTableHandle> h_;
  // Key lengths (bit n-1 for n cells) the module answered UNSUPPORTED: not asked again, so
  // a module that refuses prefix lookups costs one refusal, not one per probe (abi.h).
  std::atomic<uint64_t> refused_lookup_lengths_{0};
};

class PluginCursor final : public VtabCursor {
 public:
  // Takes ownership of `cursor`; closes it (and throws) when it has no next_batch slot.
  PluginCursor(std::shared_ptr<PluginTableHandle> table, qrs_cursor cursor);
  ~PluginCursor() override;  // calls close
  PluginCursor(const PluginCursor&) = delete;
  PluginCursor& operator=(const PluginCursor&) = delete;

  size_t next_batch(std::vector<Row>& rows) override;

 private:
  std::shared_ptr<PluginTableHandle> table_;
  void* self_;
  qrs_cursor_vtable vt_;
  bool done_ = false;
};

class PluginConnection final : public VtabConnection {
 public:
  // Takes ownership of `conn`. A missing slot is a no-op.
  PluginConnection(std::shared_ptr<PluginTableHandle> table, qrs_connection conn);
  ~PluginConnection() override;  // calls close
  PluginConnection(const PluginConnection&) = delete;
  PluginConnection& operator=(const PluginConnection&) = delete;

  void begin() override;
  void commit() override;
  void rollback() override;
  void savepoint(uint32_t depth) override;
  void release_savepoint(uint32_t depth) override;
  void rollback_to_savepoint(uint32_t depth) override;

 private:
  std::shared_ptr<PluginTableHandle> table_;
  void* self_;
  qrs_connection_vtable vt_;
};

// Function and collation adapters. On success each owns the definition's `user`
// (release_user runs when the last copy of the result goes); on a malformed definition
// (empty name, missing callback) they throw Error(kPlugin) and take nothing.
// REQUIRES: the def is a host-sized copy (copy_struct). Names: functions lower-case,
// collations upper-case.
ScalarFunction make_plugin_scalar(const qrs_scalar_function_def& def, PluginLibrary library);
AggregateFunction make_plugin_aggregate(const qrs_aggregate_function_def& def,
                                        PluginLibrary library);
std::shared_ptr<const Collation> make_plugin_collation(const qrs_collation_def& def,
                                                       PluginLibrary library);

}  // namespace quereus
