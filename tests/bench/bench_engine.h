// Benchmark: one small interface over the two engines a workload runs against — ours
// (through the public Database / Statement API) and SQLite (libsqlite3, in-memory) — so
// every workload is written once and does the same SQL work on both.
//
// Failures are thrown as BenchError (a benchmark-local exception; nothing here crosses
// an engine API boundary as an exception).
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <optional>
#include <string>
#include <string_view>

#include "catalog/registry.h"

namespace quereus::bench {

class BenchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A prepared statement. Prepare once, then bind / step / reset per iteration.
class BenchStatement {
 public:
  virtual ~BenchStatement() = default;
  BenchStatement(const BenchStatement&) = delete;
  BenchStatement& operator=(const BenchStatement&) = delete;

  // Parameters are 1-based. bind_text's bytes must stay valid until the next step() or
  // reset() (SQLite binds them without copying, as a careful embedder would).
  virtual void bind_int(int index, int64_t value) = 0;
  virtual void bind_text(int index, std::string_view value) = 0;
  // Runs to the next row; false when the statement is done.
  virtual bool step() = 0;
  // Column accessors (0-based). REQUIRES: the last step() returned true.
  virtual bool is_null(int column) const = 0;
  virtual int64_t int_at(int column) const = 0;         // an integer column
  virtual std::string_view text_at(int column) const = 0;  // a text column
  // Ends the current execution; bindings stay.
  virtual void reset() = 0;

 protected:
  BenchStatement() = default;
};

class BenchEngine {
 public:
  virtual ~BenchEngine() = default;
  BenchEngine(const BenchEngine&) = delete;
  BenchEngine& operator=(const BenchEngine&) = delete;

  // Runs every statement of `sql`, draining rows.
  virtual void exec(const std::string& sql) = 0;
  // Prepares exactly one statement.
  virtual std::unique_ptr<BenchStatement> prepare(const std::string& sql) = 0;
  // True for SQLite: a workload whose SQL must differ (a view SQLite writes through only
  // with INSTEAD OF triggers) asks.
  virtual bool is_sqlite() const { return false; }
  // Replication (sync-store): a second database of the same kind beside this one (its own
  // directory), and the engine-routed apply of a page of a peer's changes. An engine that
  // does not replicate returns null / false.
  virtual std::unique_ptr<BenchEngine> peer() { return nullptr; }
  virtual bool sync_apply(const std::string& /*page*/) { return false; }
  // A replication request (Database::sync_request: "snapshot", "changes", …); nullopt for
  // an engine that does not replicate.
  virtual std::optional<std::string> sync_request(const std::string& /*op*/, const std::string& /*args*/) {
    return std::nullopt;
  }

 protected:
  BenchEngine() = default;
};

// Our engine: a Database over `registry` whose CREATE TABLE default module is `module`.
// With `data_dir` (the store module): the database's module_options for `module` are
// {path: data_dir, sync: sync}.
std::unique_ptr<BenchEngine> open_quereus(std::shared_ptr<Registry> registry, const std::string& module,
                                          const std::string& data_dir = "", bool sync = true);

// SQLite: sqlite3_open_v2(":memory:", SQLITE_OPEN_NOMUTEX), default settings otherwise.
// In memory, or with `file` a file database in WAL mode with synchronous = FULL (sync) or
// OFF: the durability a store commit has with sync on / off.
std::unique_ptr<BenchEngine> open_sqlite(const std::string& file = "", bool sync = true);

}  // namespace quereus::bench
