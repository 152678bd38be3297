// modules/store/kv.h — the ordered key-value store under the store module.
//
// Everything the module needs from a storage engine, so that another ordered KV engine
// (RocksDB, LMDB, an in-memory map for tests) can be slotted in behind the same calls:
//
//   get                  one key, from the last committed state
//   iterate(range)       a bounded forward or reverse walk over [lo, hi), in byte order
//   write(batch, sync)   an atomic batch of puts and deletes, durable before return when
//                        `sync` is set
//   approximate_bytes    the space a key range takes (a cheap size estimate)
//
// Keys compare as unsigned bytes (memcmp, then shorter first). Failures throw
// sdk::Error (QRS_IOERR / QRS_CORRUPT) naming the store's path.
#ifndef QUEREUS_MODULES_STORE_KV_H_
#define QUEREUS_MODULES_STORE_KV_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace quereus::store {

// A set of writes applied atomically by KvStore::write, in the order they were added.
class KvBatch {
 public:
  struct Op {
    std::string key_owned;
    std::optional<std::string> value_owned;  // nullopt: delete (owned ops)
    // A borrowed op (put_ref / del_ref): views of memory the caller keeps alive until
    // the batch is written. They never point into an Op, so the vector may grow.
    bool borrowed = false;
    bool is_delete = false;
    std::string_view key_ref, value_ref;

    std::string_view key() const { return borrowed ? key_ref : std::string_view(key_owned); }
    bool deletes() const { return borrowed ? is_delete : !value_owned.has_value(); }
    std::string_view value() const { return borrowed ? value_ref : std::string_view(*value_owned); }
  };
  void put(std::string key, std::string value) {
    Op op;
    op.key_owned = std::move(key);
    op.value_owned = std::move(value);
    ops_.push_back(std::move(op));
  }
  void del(std::string key) {
    Op op;
    op.key_owned = std::move(key);
    ops_.push_back(std::move(op));
  }
  // Without copying: `key` and `value` must outlive the write of this batch.
  void put_ref(std::string_view key, std::string_view value) {
    Op op;
    op.borrowed = true;
    op.key_ref = key;
    op.value_ref = value;
    ops_.push_back(std::move(op));
  }
  void del_ref(std::string_view key) {
    Op op;
    op.borrowed = true;
    op.is_delete = true;
    op.key_ref = key;
    ops_.push_back(std::move(op));
  }
  void reserve(size_t n) { ops_.reserve(n); }
  bool empty() const { return ops_.empty(); }
  size_t size() const { return ops_.size(); }
  const std::vector<Op>& ops() const { return ops_; }
  void clear() { ops_.clear(); }

 private:
  std::vector<Op> ops_;
};

// A key range [lo, hi): an empty `hi` means "to the end of the store".
struct KvRange {
  std::string lo;
  std::string hi;
};

// A walk over one range, forwards or backwards. Valid until the store is closed; sees the
// state of the store when it was created (a snapshot).
class KvIterator {
 public:
  virtual ~KvIterator() = default;
  virtual bool valid() const = 0;
  virtual void next() = 0;  // REQUIRES: valid()
  virtual std::string_view key() const = 0;
  virtual std::string_view value() const = 0;
  // Throws sdk::Error when the walk stopped on an error rather than at the end.
  virtual void check() const = 0;
};

class KvStore {
 public:
  virtual ~KvStore() = default;
  virtual const std::string& path() const = 0;
  virtual std::optional<std::string> get(std::string_view key) = 0;
  // Positioned on the first key of `range` in the walk's direction (reverse: the last).
  virtual std::unique_ptr<KvIterator> iterate(const KvRange& range, bool reverse) = 0;
  virtual void write(const KvBatch& batch, bool sync) = 0;
  virtual uint64_t approximate_bytes(const KvRange& range) = 0;
};

// Options of an ordered KV store opened on a directory.
struct KvOptions {
  std::string path;
  bool create_if_missing = true;
  bool paranoid_checks = false;
  int64_t cache_size = -1;  // bytes; < 0: the engine's default
};

// Opens a LevelDB store (kv_leveldb.cc). Throws sdk::Error naming the path and what to
// do when the directory is missing, locked by another process or corrupt.
std::unique_ptr<KvStore> open_leveldb(const KvOptions& options);

// The smallest key greater than every key starting with `prefix` ("" when none is: the
// prefix is all 0xFF bytes).
std::string prefix_end(std::string_view prefix);

}  // namespace quereus::store

#endif  // QUEREUS_MODULES_STORE_KV_H_
