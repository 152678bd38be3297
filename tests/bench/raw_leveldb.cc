#include "raw_leveldb.h"

#include <leveldb/cache.h>
#include <leveldb/db.h>
#include <leveldb/filter_policy.h>
#include <leveldb/write_batch.h>

#include <chrono>
#include <memory>

#include "bench_engine.h"
#include "workloads.h"

namespace quereus::bench {

namespace {

std::string key_of(uint64_t id) {
  std::string k = "t";  // a table prefix, as the store has
  for (int i = 7; i >= 0; --i) k += static_cast<char>((id >> (i * 8)) & 0xff);
  return k;
}

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

std::unique_ptr<leveldb::DB> open(const std::string& path) {
  leveldb::Options o;
  o.create_if_missing = true;
  o.block_cache = nullptr;  // LevelDB's default 8 MB cache, as the store's default
  o.filter_policy = leveldb::NewBloomFilterPolicy(10);
  leveldb::DB* raw = nullptr;
  leveldb::Status s = leveldb::DB::Open(o, path, &raw);
  if (!s.ok()) throw BenchError("leveldb open " + path + ": " + s.ToString());
  return std::unique_ptr<leveldb::DB>(raw);
}

void fill(leveldb::DB& db, int64_t rows, size_t value_size, bool random, bool sync) {
  leveldb::WriteBatch batch;
  std::string value(value_size, 'v');
  for (int64_t i = 1; i <= rows; ++i) {
    uint64_t id = random ? 1 + mix(static_cast<uint64_t>(i)) % static_cast<uint64_t>(rows) : static_cast<uint64_t>(i);
    value[0] = static_cast<char>(i);
    batch.Put(key_of(id), value);
  }
  leveldb::WriteOptions w;
  w.sync = sync;
  leveldb::Status s = db.Write(w, &batch);
  if (!s.ok()) throw BenchError("leveldb write: " + s.ToString());
}

}  // namespace

RawLevelDbResult run_raw_leveldb(const std::string& dir, int64_t rows, int64_t lookups, size_t value_size, bool sync) {
  RawLevelDbResult r;
  {
    auto db = open(dir + "/fillseq");
    auto t = std::chrono::steady_clock::now();
    fill(*db, rows, value_size, false, sync);
    r.fillseq_ms = ms_since(t);
    std::string v;
    uint64_t found = 0;
    t = std::chrono::steady_clock::now();
    for (int64_t k = 0; k < lookups; ++k) {
      uint64_t id = 1 + mix(static_cast<uint64_t>(k) + 0x2000) % static_cast<uint64_t>(rows);
      if (db->Get(leveldb::ReadOptions(), key_of(id), &v).ok()) ++found;
    }
    r.readrandom_ms = ms_since(t);
    if (found != static_cast<uint64_t>(lookups)) throw BenchError("leveldb readrandom found " + std::to_string(found));
  }
  {
    auto db = open(dir + "/fillrandom");
    auto t = std::chrono::steady_clock::now();
    fill(*db, rows, value_size, true, sync);
    r.fillrandom_ms = ms_since(t);
  }
  return r;
}

}  // namespace quereus::bench
