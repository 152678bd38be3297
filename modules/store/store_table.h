// modules/store/store_table.h — the store module and one connected store table.
#ifndef QUEREUS_MODULES_STORE_STORE_TABLE_H_
#define QUEREUS_MODULES_STORE_STORE_TABLE_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "quereus/sdk.hpp"
#include "store_db.h"

namespace quereus::store {

// The module registered as "store". The shared instance only opens databases: a table
// needs a database whose module options name the store's `path`. open_database returns
// a StoreDbModule over the LevelDB at that path.
class StoreModule : public sdk::Module {
 public:
  std::unique_ptr<sdk::Table> create(const sdk::TableSchema& schema) override;
  std::unique_ptr<sdk::Table> connect(const sdk::TableSchema& schema) override;
  void destroy(std::string_view schema_name, std::string_view table_name) override;
  sdk::Capabilities capabilities() const override;
  std::shared_ptr<sdk::Module> open_database(std::string_view database_name,
                                             const std::vector<sdk::Option>& options) override;
};

// Parses the module options of a database (path, sync, cache_size, paranoid_checks,
// create_if_missing). Throws QRS_MISUSE naming the option when one is missing, unknown or
// of the wrong type.
// `module` is the name errors cite; `extra`, when given, is offered every option the store
// does not take and returns true when it took it (`extra_names` lists those for the error
// about an unknown one, e.g. ", site_id, allow_resurrection").
StoreOptions parse_options(std::string_view database_name, const std::vector<sdk::Option>& options,
                           std::string_view module = "store",
                           const std::function<bool(const sdk::Option&)>& extra = {},
                           std::string_view extra_names = "");
// One option's value as a boolean (true/false, yes/no, on/off, 1/0) or a byte count;
// QRS_MISUSE naming the module, database and option otherwise.
bool option_bool(std::string_view module, std::string_view database_name, const sdk::Option& o);
int64_t option_size(std::string_view module, std::string_view database_name, const sdk::Option& o);
std::string option_error_prefix(std::string_view module, std::string_view database_name);

// One opened database: tables over its StoreDb, and the persistent catalog.
class StoreDbModule : public sdk::Module, public std::enable_shared_from_this<StoreDbModule> {
 public:
  explicit StoreDbModule(std::shared_ptr<StoreDb> db) : db_(std::move(db)) {}
  std::unique_ptr<sdk::Table> create(const sdk::TableSchema& schema) override;
  std::unique_ptr<sdk::Table> connect(const sdk::TableSchema& schema) override;
  void destroy(std::string_view schema_name, std::string_view table_name) override;
  sdk::Capabilities capabilities() const override;
  void catalog_put(std::string_view key, std::string_view text) override;
  void catalog_list(const std::function<void(std::string_view key, std::string_view text)>& emit) override;
  // SDK 1.4: one DDL statement's writes become one synced batch (StoreDb::schema_begin).
  void schema_begin() override;
  void schema_commit() override;
  void schema_rollback() override;
  // SDK 1.6: counts the snapshot's basis relations this store holds.
  uint32_t notify_lens_deployment(const sdk::LensDeploymentSnapshot& snapshot) override;
  // SDK 1.10: advertisements built from the tables' `quereus.lens.decomp.*` tags.
  std::vector<sdk::MappingAdvertisement> mapping_advertisements(std::string_view /*basis_schema*/,
                                                                const std::vector<sdk::BasisTable>& tables) override {
    return sdk::advertisements_from_tags(tables);
  }
  // SDK 1.7: a copy of the store from one LevelDB snapshot (StoreDb::backup).
  void backup(std::string_view dest_dir, const BackupProgress& progress) override;

 protected:
  std::shared_ptr<StoreDb> db_;
};

class StoreTable : public sdk::Table {
 public:
  StoreTable(std::shared_ptr<StoreDb> db, std::shared_ptr<TableState> state);
  ~StoreTable() override;

  sdk::PlanResult best_access_plan(const sdk::PlanRequest& request) override;
  std::unique_ptr<sdk::Cursor> open_cursor(const sdk::ScanArgs& args) override;
  sdk::UpdateResult update(sdk::UpdateArgs args) override;
  sdk::UpdateResult update_cells(const sdk::UpdateCells& args) override;
  std::unique_ptr<sdk::Connection> open_connection() override;
  // ABI 1.3 point lookup: with the full primary key, one get of the encoded key through
  // the transaction's pending writes; with a key prefix (a unique-index probe), the first
  // row of the prefix's key range, merged the same way.
  sdk::LookupResult lookup(std::span<const qrs_value> key) override;
  // Every ALTER TABLE arm (store_alter.cc).
  void alter_table(const sdk::SchemaChange& change, const sdk::TableSchema& new_schema) override;
  // SDK 1.5 backing host: each op through the transaction's pending writes (or its own
  // autocommit batch), as update_cells writes; an upsert whose encoded row equals the
  // stored one (the encoding keeps type and bytes) is neither written nor reported.
  void apply_maintenance(std::span<const sdk::MaintenanceOp> ops, sdk::ChangeSink& sink) override;
  // One atomic KV batch: every committed row key of the table deleted, the new rows and the
  // row count written (inside a schema-change scope, staged with the scope). The rows are
  // pulled and checked for duplicate keys before anything is written. The table has no
  // index entries of its own (indexes are the engine's companion tables). Drops this
  // instance's pending writes.
  void replace_contents(sdk::RowSource& rows) override;

 private:
  std::shared_ptr<StoreDb> db_;
  std::shared_ptr<TableState> state_;
  std::shared_ptr<Txn> txn_;
  // The first row of [lo, hi) as this instance sees it (pending writes over committed).
  RowRef first_row(const std::string& lo, const std::string& hi);

  std::string row_buf_;      // the row being written, encoded (reused across writes)
  std::string key_buf_;      // its key
  std::string old_key_buf_;  // the key it had (UPDATE / DELETE)
  std::vector<qrs_value> lookup_cells_;  // the last lookup's row, valid until the next call
};

// ALTER TABLE over the committed rows of `state` (store_alter.cc). REQUIRES: db.mu() held.
void alter_stored_table(StoreDb& db, TableState& state, const sdk::SchemaChange& change,
                        const sdk::TableSchema& new_schema);

}  // namespace quereus::store

#endif  // QUEREUS_MODULES_STORE_STORE_TABLE_H_
