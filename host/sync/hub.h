// The sync hub (coordinator) behind `quereus serve` (docs/sync-network.md): one sync-store
// database per hub database id, which peers push their changes into and pull everyone
// else's from. Tables the hub does not have are held store-and-forward (the hub relays
// facts with their original HLC and site); tables it has are written like a peer's.
//
// Transport-free: the server (server.h) feeds it one message at a time per connection and
// sends what it returns; everything runs on the server's one I/O thread, so a connection's
// messages are handled strictly in order and the hub needs no lock.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/registry.h"
#include "config/options.h"
#include "main/database.h"

namespace quereus::syncnet {

// One connection's state, owned by the server.
struct HubSession {
  uint64_t id = 0;
  bool authenticated = false;
  std::string database_id;
  std::string site;  // the peer's site id, bound at the handshake
  // Queues a message on this connection (a notification for another session's apply).
  std::function<void(std::string)> send;
  bool notify_pending = false;  // a changes_available is queued, not yet written
};

struct HubReply {
  std::vector<std::string> messages;
  bool close = false;
  uint16_t close_code = 0;
  std::string close_reason;
};

struct HttpReply {
  unsigned status = 200;
  std::string body;
  std::string content_type = "application/json";
};

class Hub {
 public:
  Hub(ServerConfig config, std::shared_ptr<Registry> registry);
  ~Hub();
  Hub(const Hub&) = delete;
  Hub& operator=(const Hub&) = delete;

  // One WebSocket text message of `s`; the replies to write, in order.
  HubReply handle(HubSession& s, const std::string& text);
  // The connection of `s` is gone.
  void closed(HubSession& s);
  // One HTTP request (BASE/status, BASE/metrics, BASE/DB/changes).
  HttpReply http(std::string_view method, std::string_view target, std::string_view authorization,
                 std::string_view site_header, std::string_view version_header, const std::string& body);
  // Closes hub databases no session has used for `idle`.
  void close_idle(std::chrono::steady_clock::duration idle);
  // Runs the maintenance (tombstones and holds past their horizons) of each open database
  // whose prune_interval_ms has passed since it was opened or last maintained.
  void maintain();

  const ServerConfig& config() const { return config_; }
  std::string status_json();

 private:
  struct Db {
    std::unique_ptr<Database> db;
    std::string site;  // the hub replica's site id for this database
    std::set<HubSession*> sessions;
    std::chrono::steady_clock::time_point last_used;
    std::chrono::steady_clock::time_point last_pruned;
  };
  // The database `id`, opened; a new one is created only when `create` (and fewer than
  // max_databases exist). Throws Error (kNotFound, kTooBig, or the open's error).
  Db& open(const std::string& id, bool create = true);
  // Whether `token` is accepted (for `site`, when given and the token is bound to sites).
  bool token_ok(std::string_view token, std::string_view site = {}) const;
  HubReply handshake(HubSession& s, const nlohmann::json& m);
  std::string changes(Db& d, const std::string& peer_site, uint64_t since, uint64_t batch);
  // Applies a peer's pushed page; every change set must name `site`. Returns the module's
  // result JSON, or throws Error.
  std::string apply(Db& d, HubSession* from, const std::string& site, const std::string& text,
                    const nlohmann::json& m);

  ServerConfig config_;
  std::shared_ptr<Registry> registry_;
  std::map<std::string, Db> dbs_;
  struct Counters {
    uint64_t connections = 0, handshakes = 0, auth_failures = 0, messages = 0, errors = 0;
    uint64_t applies = 0, facts_applied = 0, facts_held = 0, pages_served = 0, notifications = 0;
    uint64_t prunes = 0, tombstones_pruned = 0, holds_pruned = 0;
  } counters_;
};

}  // namespace quereus::syncnet
