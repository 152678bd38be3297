// modules/store/kv_leveldb.cc — KvStore over LevelDB.
#include <leveldb/cache.h>
#include <leveldb/db.h>
#include <leveldb/filter_policy.h>
#include <leveldb/iterator.h>
#include <leveldb/options.h>
#include <leveldb/write_batch.h>

#include <filesystem>
#include <memory>
#include <string>
#include <system_error>

#include "kv.h"
#include "quereus/sdk.hpp"

namespace quereus::store {

std::string prefix_end(std::string_view prefix) {
  std::string s(prefix);
  while (!s.empty()) {
    auto c = static_cast<unsigned char>(s.back());
    if (c != 0xFF) {
      s.back() = static_cast<char>(c + 1);
      return s;
    }
    s.pop_back();
  }
  return s;
}

namespace {

leveldb::Slice slice(std::string_view s) { return leveldb::Slice(s.data(), s.size()); }

// A LevelDB failure as an sdk::Error naming the store and what to do.
[[noreturn]] void fail(const leveldb::Status& st, const std::string& path, const std::string& doing) {
  std::string what = st.ToString();
  // A table file cut short reads as an I/O error in some paths: it is damage, not a
  // transient failure.
  // (A table file shorter than the manifest records fails its read with EINVAL.)
  bool table_file = what.find(".ldb") != std::string::npos || what.find(".sst") != std::string::npos;
  bool truncated = what.find("truncated") != std::string::npos || what.find("too short") != std::string::npos ||
                   (table_file && what.find("Invalid argument") != std::string::npos);
  if (st.IsCorruption() || truncated)
    throw sdk::Error(QRS_CORRUPT, "store at '" + path + "' is corrupt while " + doing + " (" + what +
                                      "); restore it from a backup or repair it with LevelDB's RepairDB");
  throw sdk::Error(QRS_IOERR, "store at '" + path + "': I/O error while " + doing + " (" + what + ")");
}

class LevelIterator : public KvIterator {
 public:
  LevelIterator(std::unique_ptr<leveldb::Iterator> it, const leveldb::Snapshot* snap, leveldb::DB* db,
                KvRange range, bool reverse, std::string path)
      : it_(std::move(it)), snap_(snap), db_(db), range_(std::move(range)), reverse_(reverse), path_(std::move(path)) {
    if (!reverse_) {
      it_->Seek(slice(range_.lo));
    } else if (range_.hi.empty()) {
      it_->SeekToLast();
    } else {
      it_->Seek(slice(range_.hi));  // first key >= hi, then one back
      if (it_->Valid()) {
        it_->Prev();
      } else {
        it_->SeekToLast();
      }
    }
    settle();
  }
  ~LevelIterator() override {
    it_.reset();
    db_->ReleaseSnapshot(snap_);
  }

  bool valid() const override { return valid_; }
  void next() override {
    if (reverse_) it_->Prev(); else it_->Next();
    settle();
  }
  std::string_view key() const override { return {it_->key().data(), it_->key().size()}; }
  std::string_view value() const override { return {it_->value().data(), it_->value().size()}; }
  void check() const override {
    if (!it_->status().ok()) fail(it_->status(), path_, "reading");
  }

 private:
  void settle() {
    valid_ = it_->Valid();
    if (!valid_) return;
    std::string_view k = key();
    if (!reverse_) {
      if (!range_.hi.empty() && k >= std::string_view(range_.hi)) valid_ = false;
    } else if (k < std::string_view(range_.lo)) {
      valid_ = false;
    }
  }

  std::unique_ptr<leveldb::Iterator> it_;
  const leveldb::Snapshot* snap_;
  leveldb::DB* db_;
  KvRange range_;
  bool reverse_;
  std::string path_;
  bool valid_ = false;
};

class LevelStore : public KvStore {
 public:
  LevelStore(std::unique_ptr<leveldb::DB> db, std::unique_ptr<leveldb::Cache> cache,
             std::unique_ptr<const leveldb::FilterPolicy> filter, std::string path, bool verify)
      : cache_(std::move(cache)), filter_(std::move(filter)), db_(std::move(db)), path_(std::move(path)) {
    read_.verify_checksums = verify;
  }
  ~LevelStore() override { db_.reset(); }  // before the cache and filter it uses

  const std::string& path() const override { return path_; }

  std::optional<std::string> get(std::string_view key) override {
    std::string out;
    leveldb::Status st = db_->Get(read_, slice(key), &out);
    if (st.IsNotFound()) return std::nullopt;
    if (!st.ok()) fail(st, path_, "reading");
    return out;
  }

  std::unique_ptr<KvIterator> iterate(const KvRange& range, bool reverse) override {
    const leveldb::Snapshot* snap = db_->GetSnapshot();
    leveldb::ReadOptions ro = read_;
    ro.snapshot = snap;
    ro.fill_cache = true;
    std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(ro));
    return std::make_unique<LevelIterator>(std::move(it), snap, db_.get(), range, reverse, path_);
  }

  void write(const KvWrites& batch, bool sync) override {
    if (batch.empty()) return;
    struct Sink : KvSink {
      leveldb::WriteBatch wb;
      void put(std::string_view k, std::string_view v) override { wb.Put(slice(k), slice(v)); }
      void del(std::string_view k) override { wb.Delete(slice(k)); }
    } sink;
    leveldb::WriteBatch& wb = sink.wb;
    batch.emit(sink);
    leveldb::WriteOptions wo;
    wo.sync = sync;
    changed();
    leveldb::Status st = db_->Write(wo, &wb);
    changed();
    if (!st.ok()) fail(st, path_, "writing");
  }

  uint64_t approximate_bytes(const KvRange& range) override {
    std::string hi = range.hi.empty() ? std::string(1, '\xff') : range.hi;
    leveldb::Range r(slice(range.lo), slice(hi));
    uint64_t size = 0;
    db_->GetApproximateSizes(&r, 1, &size);
    return size;
  }

 private:
  std::unique_ptr<leveldb::Cache> cache_;
  std::unique_ptr<const leveldb::FilterPolicy> filter_;
  std::unique_ptr<leveldb::DB> db_;
  std::string path_;
  leveldb::ReadOptions read_;
};

// LevelDB's own files in a directory: a store lives here even if CURRENT is gone.
bool has_leveldb_files(const std::string& dir, std::string* example) {
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    auto ends = [&](std::string_view suffix) {
      return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    // Data files only: LevelDB writes LOG even for an open that fails, and a MANIFEST
    // before the CURRENT of a brand-new store; a numbered log or table file exists only
    // once CURRENT did.
    if (ends(".ldb") || ends(".sst") || ends(".log")) {
      *example = name;
      return true;
    }
  }
  return false;
}

}  // namespace

std::unique_ptr<KvStore> open_leveldb(const KvOptions& o) {
  leveldb::Options opts;
  opts.create_if_missing = o.create_if_missing;
  opts.paranoid_checks = o.paranoid_checks;
  std::unique_ptr<leveldb::Cache> cache;
  if (o.cache_size >= 0) {
    cache.reset(leveldb::NewLRUCache(static_cast<size_t>(o.cache_size)));
    opts.block_cache = cache.get();
  }
  // Bloom filters make the existence probe of every insert (a miss) cheap.
  std::unique_ptr<const leveldb::FilterPolicy> filter(leveldb::NewBloomFilterPolicy(10));
  opts.filter_policy = filter.get();
  // Without CURRENT, LevelDB would start a new database here and delete the old files as
  // garbage: a directory that already holds a store's files is refused instead.
  std::error_code ec;
  std::string example;
  if (!std::filesystem::exists(std::filesystem::path(o.path) / "CURRENT", ec) && has_leveldb_files(o.path, &example))
    throw sdk::Error(QRS_CORRUPT, "store at '" + o.path + "' holds LevelDB files ('" + example +
                                      "', …) but no CURRENT file: the store is damaged. It was not re-created, which "
                                      "would delete its data; restore CURRENT or the directory from a backup, or "
                                      "rebuild it with LevelDB's RepairDB");
  leveldb::DB* raw = nullptr;
  leveldb::Status st = leveldb::DB::Open(opts, o.path, &raw);
  if (!st.ok()) {
    std::string what = st.ToString();
    if (st.IsInvalidArgument() && what.find("does not exist") != std::string::npos)
      throw sdk::Error(QRS_CANTOPEN, "store at '" + o.path +
                                         "' does not exist (create_if_missing is false); create it, or set "
                                         "create_if_missing: true, or fix the path (" + what + ")");
    if (st.IsIOError() && what.find("lock") != std::string::npos)
      throw sdk::Error(QRS_BUSY, "store at '" + o.path +
                                     "' is locked by another process (or another database in this one); close "
                                     "the other user of the directory and retry (" + what + ")");
    if (st.IsCorruption())
      throw sdk::Error(QRS_CORRUPT, "store at '" + o.path + "' is corrupt (" + what +
                                        "); restore it from a backup or repair it with LevelDB's RepairDB");
    throw sdk::Error(QRS_CANTOPEN, "cannot open the store at '" + o.path + "': " + what +
                                       " (check that the directory exists and is writable)");
  }
  return std::make_unique<LevelStore>(std::unique_ptr<leveldb::DB>(raw), std::move(cache), std::move(filter), o.path,
                                      o.verify_checksums);
}

}  // namespace quereus::store
