// modules/mem/mem_table.h — one connected memory table: planning, scans, writes, transactions.
//
// A MemTable is one instance over a shared TableStore. It owns one TableTxn: the
// transaction state of this instance. open_connection hands out handles to that state
// (several handles share it; closing any handle rolls back an open transaction).
// Cursors read the committed rows merged with the instance's pending writes; they re-seek
// after the last row visited on every batch, so writes between batches (autocommit or
// pending) never invalidate them.
#ifndef QUEREUS_MODULES_MEM_MEM_TABLE_H_
#define QUEREUS_MODULES_MEM_MEM_TABLE_H_

#include <memory>

#include "quereus/sdk.hpp"
#include "table_store.h"

namespace quereus::mem {

class MemModule;

class MemTable : public sdk::Table {
 public:
  // `module` outlives its tables (the host releases tables before the module).
  MemTable(MemModule* module, std::shared_ptr<TableStore> store)
      : module_(module), store_(std::move(store)), txn_(std::make_shared<TableTxn>(store_)) {}

  sdk::PlanResult best_access_plan(const sdk::PlanRequest& request) override;
  std::unique_ptr<sdk::Cursor> open_cursor(const sdk::ScanArgs& args) override;
  sdk::UpdateResult update(sdk::UpdateArgs args) override;  // converts, then update_cells
  // The write path: packs the host's cells straight into a stored row.
  sdk::UpdateResult update_cells(const sdk::UpdateCells& args) override;
  std::unique_ptr<sdk::Connection> open_connection() override;
  // ABI 1.3: the first row with the given leading key values (committed rows merged with
  // this instance's pending writes), handed out as the stored cells.
  sdk::LookupResult lookup(std::span<const qrs_value> key) override;
  // Every ALTER TABLE arm (alter.cc): rows re-packed / converted / re-keyed, including
  // the pending rows of open transactions; RENAME TO moves the storage's registry entry.
  void alter_table(const sdk::SchemaChange& change, const sdk::TableSchema& new_schema) override;
  // SDK 1.5 backing host: the ops go through the instance's TableTxn as update() writes
  // (pending inside a transaction, the committed rows in autocommit); a row identical to
  // the one visible at its key is neither written nor reported.
  void apply_maintenance(std::span<const sdk::MaintenanceOp> ops, sdk::ChangeSink& sink) override;
  // Builds the new row set without the lock, then swaps it in under the store's lock and
  // drops this instance's pending writes.
  void replace_contents(sdk::RowSource& rows) override;

 private:
  MemModule* module_;
  std::shared_ptr<TableStore> store_;
  std::shared_ptr<TableTxn> txn_;
};

}  // namespace quereus::mem

#endif  // QUEREUS_MODULES_MEM_MEM_TABLE_H_
