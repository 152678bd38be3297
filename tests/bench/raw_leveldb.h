// Raw LevelDB doing the key/value work of our store workloads, for the "fraction of raw
// LevelDB" figures (issue 6, point 6; docs/benchmarks.md): the same number of rows, keys
// of the same shape (an 8-byte big-endian id under a table prefix), values of about the
// size our row codec writes, and the same batching as our transactions.
#pragma once

#include <cstdint>
#include <string>

namespace quereus::bench {

struct RawLevelDbResult {
  double fillseq_ms = 0;     // `rows` puts in key order, one write batch (bulk_insert's transaction)
  double fillrandom_ms = 0;  // the same puts in random key order, one write batch
  double readrandom_ms = 0;  // `lookups` gets of random existing keys (point_select)
};

// Runs the three in `dir` (created; left for the caller to remove). `sync`: the batches
// are synced writes, as the store's commits are with sync on. Throws BenchError.
RawLevelDbResult run_raw_leveldb(const std::string& dir, int64_t rows, int64_t lookups, size_t value_size, bool sync);

}  // namespace quereus::bench
