// Benchmark: the named workloads. Each loads its data (untimed, except bulk_insert),
// times its SQL with std::chrono::steady_clock, and returns a checksum of what the SQL
// produced so that the two engines' answers can be compared.
//
// Data (docs/benchmarks.md): table t (id integer primary key, a integer, b text) with
// `rows` rows, id = 1..rows, a a pseudo-random integer in [0, rows), b 20 pseudo-random
// lower-case letters; table d (id integer primary key, v integer) with `dim_rows` rows,
// id = 1..dim_rows. The write-path workloads add table w (same shape as t, filled by the
// workload) and tables p (parent) / c (child with a UNIQUE column and a FOREIGN KEY to p).
// The generator is deterministic, so both engines see the same data.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench_engine.h"

namespace quereus::bench {

// splitmix64: a deterministic, well-mixed stream from a counter (the workloads' keys).
uint64_t mix(uint64_t x);

// Row and iteration counts; Sizes::at(1.0) is the scale.
struct Sizes {
  int64_t rows = 1000000;     // t
  int64_t dim_rows = 10000;   // d
  int64_t lookups = 100000;   // point_select
  int64_t ranges = 1000;      // range_scan
  int64_t range_width = 100;  // rows per range
  int64_t groups = 100000;    // group_by
  int64_t writes = 100000;    // insert_autocommit, update_by_key, delete_by_key, insert_unique_fk
  int64_t flat_txn = 1000000;        // insert_flat_txn: one-row inserts in one transaction
  int64_t flat_autocommit = 100000;  // insert_flat_autocommit: one-row inserts, each its own transaction

  // Every count scaled by `scale` (at least 1), except range_width (capped at rows).
  static Sizes at(double scale);
};

struct WorkloadResult {
  double ms = 0;         // the timed section
  std::string checksum;  // what the SQL produced, equal across engines when correct
  // Flat-cost workloads only (else negative): the mean cost per statement, in
  // microseconds, of the first and of the last 10% of the statements.
  double first_us = -1;
  double last_us = -1;
};

// What the timed sections measure: wall time (the default) or the process's CPU time, all
// threads (--clock cpu: steadier on a machine shared with other work; LevelDB's background
// compaction counts, time waiting on the disk does not).
void set_cpu_clock(bool cpu);

// Called when the timed section begins (after the untimed setup); may be empty.
using TimedStart = std::function<void()>;

struct Workload {
  const char* name;
  const char* description;
  WorkloadResult (*run)(BenchEngine& engine, const Sizes& sizes, const TimedStart& started);
  bool flat_cost = false;  // reports first_us / last_us, judged against kFlatBar
};

// The flat-cost bar: the last 10% of the statements cost at most this times the first 10%.
constexpr double kFlatBar = 1.2;

// All workloads, in the order they are run by default.
const std::vector<Workload>& workloads();

}  // namespace quereus::bench
