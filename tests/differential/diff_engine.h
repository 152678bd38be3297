// Differential testing: one small interface over the two engines a generated query runs
// on — Quereus (through the public Database / Statement API, main/database.h) and SQLite
// (libsqlite3, in memory) — returning every result as engine-neutral cells.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "catalog/registry.h"

namespace quereus::difftest {

// One result value, as either engine produced it (a BOOLEAN is kInt 0 / 1: SQLite has none).
struct Cell {
  enum class Kind { kNull, kInt, kReal, kText, kBlob };
  Kind kind = Kind::kNull;
  int64_t i = 0;
  double r = 0;
  std::string s;  // text or blob bytes
};

struct QueryResult {
  bool ok = true;
  bool internal = false;  // Quereus: the error was INTERNAL (always a bug)
  std::string error;      // when !ok
  std::vector<std::vector<Cell>> rows;
  bool truncated = false;  // stopped at the row limit of query()
  bool timed_out = false;  // stopped after 10 s (Quereus: statement_timeout_ms; SQLite: a progress handler)
};

class DiffEngine {
 public:
  virtual ~DiffEngine() = default;
  DiffEngine(const DiffEngine&) = delete;
  DiffEngine& operator=(const DiffEngine&) = delete;

  // Runs every statement of `sql`, draining rows; the error text on failure.
  virtual QueryResult exec(const std::string& sql) = 0;
  // Runs one query and collects its rows, stopping after `row_limit` (0: no limit).
  virtual QueryResult query(const std::string& sql, size_t row_limit = 0) = 0;

 protected:
  DiffEngine() = default;
};

// Quereus: a Database over `registry` (which must outlive it) whose tables go to `module`
// ("memory", or "store" with `data_dir` a fresh directory it owns: removed when the engine
// is destroyed), every other option at its default. Null when the database cannot open.
std::unique_ptr<DiffEngine> open_quereus(const std::shared_ptr<Registry>& registry, const std::string& module,
                                         const std::string& data_dir);

// SQLite in memory, with `pragma case_sensitive_like = on` (Quereus's LIKE is
// case-sensitive, docs/sql-dialect.md "Text: case, collations, patterns") and
// `pragma automatic_index = off` (a SQLite 3.40.1 bug, see diff_engine.cc).
std::unique_ptr<DiffEngine> open_sqlite();

}  // namespace quereus::difftest
