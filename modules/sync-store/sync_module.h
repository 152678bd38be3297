// modules/sync-store/sync_module.h — the module "sync-store": the store's tables with a
// Replica attached to each opened database, and the SQL functions that reach it.
#ifndef QUEREUS_MODULES_SYNC_STORE_SYNC_MODULE_H_
#define QUEREUS_MODULES_SYNC_STORE_SYNC_MODULE_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "../store/store_table.h"
#include "replica.h"

namespace quereus::sync {

// Parses a database's module options: the store's (path, sync, cache_size, …) plus
// site_id (base64url, used when the replica is created), allow_resurrection (boolean) and
// tombstone_horizon_ms.
std::pair<store::StoreOptions, ReplicaOptions> parse_sync_options(std::string_view database_name,
                                                                   const std::vector<sdk::Option>& options);

class SyncStoreModule : public store::StoreModule {
 public:
  sdk::Capabilities capabilities() const override;
  std::shared_ptr<sdk::Module> open_database(std::string_view database_name,
                                             const std::vector<sdk::Option>& options) override;
};

class SyncStoreDbModule : public store::StoreDbModule {
 public:
  SyncStoreDbModule(std::shared_ptr<store::StoreDb> db, std::shared_ptr<Replica> replica)
      : StoreDbModule(std::move(db)), replica_(std::move(replica)) {}
  const std::shared_ptr<Replica>& replica() const { return replica_; }
  // SDK 1.12: the host's sync driver — "status", "changes", "resolve", "arm", "finish",
  // "abandon" (docs/sync-store.md "Engine-routed apply").
  std::string replication(std::string_view op, std::string_view args) override;
  // SDK 1.6: records which basis tables the deployed lenses back (the lifecycle record).
  uint32_t notify_lens_deployment(const sdk::LensDeploymentSnapshot& snapshot) override {
    return replica_->record_lens_deployment(snapshot);
  }
  // SDK 1.4: the scope's schema versions (local DDL, or an inbound phase) join its batch.
  void schema_commit() override;
  void schema_rollback() override;

 private:
  std::string replication_request(std::string_view op, std::string_view args);
  std::shared_ptr<Replica> replica_;
  // The last page resolve_schema parsed (with its text), for the resolve after it.
  std::mutex parsed_mu_;
  struct ParsedPage {
    std::string text;
    std::vector<ChangeSet> sets;
    std::optional<SnapshotChunk> snapshot;
    std::optional<PushOrigin> origin;
    std::vector<Hlc> frontier;
  };
  std::optional<ParsedPage> parsed_;
};

// The replica of an open sync-store database, by its database name or its path; QRS_NOTFOUND
// (or QRS_MISUSE when a name is ambiguous) otherwise.
std::shared_ptr<Replica> find_replica(std::string_view name_or_path);

void register_sync_store(sdk::Registrar& registrar);

// sync_status's JSON.
std::string status_json(Replica& replica);

}  // namespace quereus::sync

#endif  // QUEREUS_MODULES_SYNC_STORE_SYNC_MODULE_H_
