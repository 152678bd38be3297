// The network side of `quereus serve` (docs/sync-network.md): a Boost.Beast server on one
// I/O thread that speaks the sync protocol over WebSocket (BASE/ws) and a small HTTP API
// (BASE/status, BASE/metrics, BASE/DB/changes), optionally over TLS, in front of a Hub.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "sync/hub.h"

namespace quereus::syncnet {

class Server {
 public:
  // Binds the listening socket (ServerConfig::listen); throws Error(kCantOpen) naming the
  // address when it cannot, or Error(kConfig) when the TLS files do not load.
  Server(Hub& hub);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // The bound port (the actual one when `listen` asked for port 0).
  uint16_t port() const;
  // Serves until stop(); SIGINT / SIGTERM stop it when `handle_signals`.
  void run(bool handle_signals);
  // Thread-safe: closes every connection (going away) and makes run() return.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace quereus::syncnet
