// Benchmark: the named workloads. Each loads its data (untimed, except bulk_insert),
// times its SQL with std::chrono::steady_clock, and returns a checksum of what the SQL
// produced so that the two engines' answers can be compared.
//
// Data (docs/benchmarks.md): table t (id integer primary key, a integer, b text) with
// `rows` rows, id = 1..rows, a a pseudo-random integer in [0, rows), b 20 pseudo-random
// lower-case letters; table d (id integer primary key, v integer) with `dim_rows` rows,
// id = 1..dim_rows. The generator is deterministic, so both engines see the same data.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench_engine.h"

namespace quereus::bench {

// Row and iteration counts; Sizes::at(1.0) is the scale.
struct Sizes {
  int64_t rows = 1000000;     // t
  int64_t dim_rows = 10000;   // d
  int64_t lookups = 100000;   // point_select
  int64_t ranges = 1000;      // range_scan
  int64_t range_width = 100;  // rows per range
  int64_t groups = 100000;    // group_by

  // Every count scaled by `scale` (at least 1), except range_width (capped at rows).
  static Sizes at(double scale);
};

struct WorkloadResult {
  double ms = 0;         // the timed section
  std::string checksum;  // what the SQL produced, equal across engines when correct
};

// Called when the timed section begins (after the untimed setup); may be empty.
using TimedStart = std::function<void()>;

struct Workload {
  const char* name;
  const char* description;
  WorkloadResult (*run)(BenchEngine& engine, const Sizes& sizes, const TimedStart& started);
};

// All workloads, in the order they are run by default.
const std::vector<Workload>& workloads();

}  // namespace quereus::bench
