// modules/mem/mem_module.h — the in-memory storage module ("memory", alias "mem").
//
// The reference module: tables ordered by primary key in memory, with transactions and
// savepoints per table instance and primary-key access planning. Storage is keyed by
// (schema, lower-case table name) and shared by every instance connected to it; it lives
// until destroy (DROP TABLE) or the end of the process.
#ifndef QUEREUS_MODULES_MEM_MEM_MODULE_H_
#define QUEREUS_MODULES_MEM_MEM_MODULE_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "quereus/sdk.hpp"
#include "table_store.h"

namespace quereus::mem {

class MemModule : public sdk::Module {
 public:
  // Fails with QRS_ERROR when schema.table exists.
  std::unique_ptr<sdk::Table> create(const sdk::TableSchema& schema) override;
  // Connects to schema.table; storage that does not exist yet is created empty (an
  // in-memory table has nothing to reopen).
  std::unique_ptr<sdk::Table> connect(const sdk::TableSchema& schema) override;
  // Drops the storage; unknown tables are ignored.
  void destroy(std::string_view schema_name, std::string_view table_name) override;
  // ALTER TABLE … RENAME TO: re-registers `store` (stored as schema.old_name) under new_name.
  // Throws QRS_ERROR when new_name is taken.
  void rename(const std::shared_ptr<TableStore>& store, std::string_view old_name, std::string_view new_name);
  // Not persistent; scans see writes made while they run (no snapshot isolation); a
  // backing host (SDK 1.5).
  sdk::Capabilities capabilities() const override {
    sdk::Capabilities c;
    c.committed_reads = true;  // a committed read skips the connection's pending writes
    c.backing_host = true;     // SDK 1.5: apply_maintenance / replace_contents
    return c;
  }
  // SDK 1.3: every database gets its own table namespace (two databases over one
  // registry never see each other's tables). Options: none.
  std::shared_ptr<sdk::Module> open_database(std::string_view database_name,
                                             const std::vector<sdk::Option>& options) override;
  // SDK 1.6: a logical schema was deployed. An in-memory table keeps nothing for a lens:
  // the module counts the basis relations it holds (and logs them), nothing more.
  uint32_t notify_lens_deployment(const sdk::LensDeploymentSnapshot& snapshot) override;
  // SDK 1.10: a generic module stores whatever shape its tables' `quereus.lens.decomp.*`
  // tags describe (docs/decompositions.md).
  std::vector<sdk::MappingAdvertisement> mapping_advertisements(std::string_view /*basis_schema*/,
                                                                const std::vector<sdk::BasisTable>& tables) override {
    return sdk::advertisements_from_tags(tables);
  }

 private:
  std::mutex mu_;  // guards tables_
  std::map<std::string, std::shared_ptr<TableStore>> tables_;
};

}  // namespace quereus::mem

#endif  // QUEREUS_MODULES_MEM_MEM_MODULE_H_
