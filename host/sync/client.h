// The peer side of the sync protocol (docs/sync-network.md): a database whose YAML has a
// `sync:` section syncs with a hub in the background. One thread per client runs a
// Boost.Beast WebSocket connection: handshake, then pull the hub's pages from the saved
// cursor until `hasMore` is false (again on each `changes_available` and every poll_ms),
// and push this replica's own writes (debounced after each local commit) page by page,
// each page's cursor saved when the hub acknowledges it. Lost connections reconnect with
// backoff 1 s, 2 s, 4 s … reconnect_max_ms; a fatal refusal (token, protocol version)
// stops the client.
//
// The database is used only through DatabaseAccess, which runs a function with the
// database while no other thread uses it (the host's lock); an apply waits while the
// database has an explicit transaction open.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "config/options.h"
#include "main/database.h"

namespace quereus::syncnet {

class SyncClient {
 public:
  using DatabaseAccess = std::function<void(const std::function<void(Database&)>&)>;

  SyncClient(SyncClientConfig config, std::string database_name, DatabaseAccess access);
  ~SyncClient();  // stop()
  SyncClient(const SyncClient&) = delete;
  SyncClient& operator=(const SyncClient&) = delete;

  void start();
  // Closes the connection and joins the thread. Idempotent.
  void stop();
  // Thread-safe and cheap: a local commit happened; push after push_debounce_ms.
  void local_commit();
  // The database's commit listener (Database::on_commit): calls local_commit() when the
  // transaction wrote anything of this replica's own — a row or a schema change (a DDL-only
  // commit writes no row, but its schema facts are ours to push). Remote applies are not.
  void committed(const ChangeBatch& batch);

  struct State {
    std::string state = "stopped";  // stopped | connecting | connected | backoff | failed
    std::string hub_site;           // the hub replica's site id, once connected
    uint64_t received = 0;          // hub cursor applied up to
    uint64_t sent = 0;              // own cursor the hub acknowledged
    uint64_t pages_pulled = 0, pages_pushed = 0, facts_applied = 0, conflicts = 0, rejected = 0;
    uint64_t rejected_by_hub = 0;  // pushed facts the hub held aside (its own constraints)
    uint64_t snapshot_chunks = 0;  // snapshot chunks applied
    uint64_t purged = 0;           // rows snapshots found gone at the hub, deleted here
    uint64_t connects = 0, failures = 0;
    uint64_t prunes = 0;           // maintenance runs (prune_interval_ms)
    uint64_t push_gaps = 0;        // pushes the hub refused as starting past its record of us
    bool caught_up = false;  // the last pull reached the hub's head and nothing waits to push
    std::string last_error;
  };
  State state() const;
  std::string state_json() const;
  // Tests and tools: waits until the client is connected, has pulled to the hub's head and
  // has pushed every local commit made before the call (true), or the timeout (false).
  bool wait_caught_up(std::chrono::milliseconds timeout);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace quereus::syncnet
