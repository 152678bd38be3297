// modules/store/kv.h — the ordered key-value store under the store module.
//
// Everything the module needs from a storage engine, so that another ordered KV engine
// (RocksDB, LMDB, an in-memory map for tests) can be slotted in behind the same calls:
//
//   get                  one key, from the last committed state
//   iterate(range)       a bounded forward or reverse walk over [lo, hi), in byte order
//   write(writes, sync)  an atomic batch of puts and deletes, durable before return when
//                        `sync` is set
//   approximate_bytes    the space a key range takes (a cheap size estimate)
//
// Keys compare as unsigned bytes (memcmp, then shorter first). Failures throw
// sdk::Error (QRS_IOERR / QRS_CORRUPT) naming the store's path.
#ifndef QUEREUS_MODULES_STORE_KV_H_
#define QUEREUS_MODULES_STORE_KV_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace quereus::store {

// Receives the writes of a batch, in order (KvStore::write hands one to the batch).
class KvSink {
 public:
  virtual ~KvSink() = default;
  virtual void put(std::string_view key, std::string_view value) = 0;
  virtual void del(std::string_view key) = 0;
};

// The writes of one atomic batch: a KvBatch, or any other source that can list them —
// the store streams a transaction's pending writes straight into the engine's own batch
// without building an intermediate copy.
class KvWrites {
 public:
  virtual ~KvWrites() = default;
  virtual bool empty() const = 0;
  virtual void emit(KvSink& sink) const = 0;
};

// A set of writes applied atomically by KvStore::write, in the order they were added.
// The writes are copied into one contiguous buffer (tag, lengths, bytes), so a batch of a
// million rows is a handful of allocations.
class KvBatch : public KvWrites {
 public:
  void put(std::string_view key, std::string_view value) {
    add(kPut, key);
    put_length(value.size());
    rep_.append(value);
  }
  void del(std::string_view key) { add(kDel, key); }
  // Room for `ops` writes carrying `bytes` of keys and values.
  void reserve(size_t ops, size_t bytes) { rep_.reserve(rep_.size() + bytes + ops * 11); }
  bool empty() const override { return count_ == 0; }
  size_t size() const { return count_; }
  void emit(KvSink& sink) const override {
    for_each([&](std::string_view k, std::string_view v) { sink.put(k, v); }, [&](std::string_view k) { sink.del(k); });
  }
  void clear() {
    rep_.clear();
    count_ = 0;
  }
  // Calls put(key, value) or del(key) for each write, in order.
  template <class Put, class Del>
  void for_each(Put&& put, Del&& del) const {
    std::string_view in = rep_;
    while (!in.empty()) {
      char tag = in[0];
      in.remove_prefix(1);
      std::string_view key = take(in);
      if (tag == kPut) put(key, take(in)); else del(key);
    }
  }

 private:
  static constexpr char kPut = 1, kDel = 0;
  void add(char tag, std::string_view key) {
    rep_.push_back(tag);
    put_length(key.size());
    rep_.append(key);
    ++count_;
  }
  void put_length(size_t n) {
    while (n >= 0x80) {
      rep_.push_back(static_cast<char>((n & 0x7F) | 0x80));
      n >>= 7;
    }
    rep_.push_back(static_cast<char>(n));
  }
  static std::string_view take(std::string_view& in) {
    size_t n = 0;
    for (int shift = 0;; shift += 7) {
      auto b = static_cast<unsigned char>(in[0]);
      in.remove_prefix(1);
      n |= static_cast<size_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) break;
    }
    std::string_view out = in.substr(0, n);
    in.remove_prefix(n);
    return out;
  }
  std::string rep_;
  size_t count_ = 0;
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
  virtual void write(const KvWrites& batch, bool sync) = 0;
  virtual uint64_t approximate_bytes(const KvRange& range) = 0;
  // Grows whenever what get() or iterate() return may have changed (every write, staged
  // or not). A value read at generation g is still the stored one while generation() == g.
  // A write moves it before and after it lands. Readers and writers of one store hold its
  // database's mutex (StoreDb::mu), which is what makes "unchanged" mean "nothing landed".
  virtual uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  // Marks a change of what reads return (a layer over this store staged or dropped writes).
  virtual void changed() { generation_.fetch_add(1, std::memory_order_acq_rel); }

 private:
  std::atomic<uint64_t> generation_{0};
};

// Options of an ordered KV store opened on a directory.
struct KvOptions {
  std::string path;
  bool create_if_missing = true;
  bool paranoid_checks = false;
  // Every read verifies the checksum of the blocks it reads (a flipped byte in a table
  // file is CORRUPT, never data).
  bool verify_checksums = true;
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
