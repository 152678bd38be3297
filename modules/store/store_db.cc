// modules/store/store_db.cc — the opened store: registry, coordinator, catalog.
#include "store_db.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "row_codec.h"

namespace quereus::store {
namespace {

const std::string kFormatKey = std::string(1, '\0') + "format";
const std::string kNextIdKey = std::string(1, '\0') + "next_table_id";
constexpr char kCatalog = 0x01;
constexpr char kRegistry = 0x02;
constexpr char kStats = 0x03;
constexpr char kRows = 0x04;
constexpr char kLegacyKeys = 0x05;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  return out;
}

void put_u64_be(std::string& out, uint64_t x) {
  for (int s = 56; s >= 0; s -= 8) out.push_back(static_cast<char>((x >> s) & 0xFF));
}

std::string varint(uint64_t v) {
  std::string s;
  put_varint(s, v);
  return s;
}

}  // namespace

std::string StoreDb::registry_key(std::string_view schema, std::string_view table) {
  std::string k(1, kRegistry);
  k += lower(schema);
  k += '\0';
  k += lower(table);
  return k;
}

std::string StoreDb::legacy_key(uint64_t id) {
  std::string k(1, kLegacyKeys);
  put_u64_be(k, id);
  return k;
}

std::string StoreDb::stats_key(uint64_t id) {
  std::string k(1, kStats);
  put_u64_be(k, id);
  return k;
}

std::string StoreDb::table_prefix(uint64_t id) {
  std::string k(1, kRows);
  put_u64_be(k, id);
  return k;
}

StoreDb::StoreDb(const StoreOptions& options) : sync_(options.sync) {
  if (options.kv.create_if_missing) {
    std::error_code ec;
    std::filesystem::path parent = std::filesystem::path(options.kv.path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);  // LevelDB creates the last level
  }
  base_ = open_leveldb(options.kv);
  kv_ = base_.get();
  check_format();
}

void StoreDb::check_format() {
  std::optional<std::string> v = kv_->get(kFormatKey);
  if (v && *v == kFormatVersion) return;
  if (v && *v == "1") {
    // Format 1 folded only A-Z in NOCASE keys. The upgrade is one batch: the new version,
    // and a mark on every table whose keys are still format 1's; each table is re-keyed
    // (and unmarked) in one batch of its own when it is first opened, since only then is
    // its key known (see rekey_legacy).
    KvBatch b;
    b.put(kFormatKey, std::string(kFormatVersion));
    const std::string reg(1, kRegistry);
    auto it = kv_->iterate(KvRange{reg, prefix_end(reg)}, false);
    for (; it->valid(); it->next()) {
      std::string_view in = it->value();
      uint64_t id;
      if (!get_varint(in, &id) || !in.empty())
        throw sdk::Error(QRS_CORRUPT, "store at '" + path() + "': corrupt registry entry");
      b.put(legacy_key(id), "1");
    }
    it->check();
    kv_->write(b, true);
    return;
  }
  if (v)
    throw sdk::Error(QRS_FORMAT, "store at '" + path() + "' was written in store format version " + *v +
                                     ", this build reads versions 1 and " + std::string(kFormatVersion) +
                                     "; open it with a matching Quereus build (or export and re-import "
                                     "the data)");
  auto it = kv_->iterate(KvRange{}, false);
  it->check();
  if (it->valid())
    throw sdk::Error(QRS_CANTOPEN, "store at '" + path() + "' holds data but no Quereus store format key: it is not a Quereus store "
                                     "(or was damaged); point the path at an empty or Quereus directory");
  KvBatch b;
  b.put(kFormatKey, std::string(kFormatVersion));
  kv_->write(b, true);
}

void StoreDb::backup(const std::string& dest_in, const std::function<bool(uint64_t, uint64_t)>& progress) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::string dest = dest_in;
  while (dest.size() > 1 && dest.back() == '/') dest.pop_back();
  const bool existed = fs::exists(dest, ec);
  if (existed && (!fs::is_directory(dest, ec) || !fs::is_empty(dest, ec)))
    throw sdk::Error(QRS_CANTOPEN, "'" + dest + "' exists and is not an empty directory: a backup goes to a new directory");
  // The copy is built beside the destination and renamed into place once whole and synced,
  // so the destination holds all of it or nothing, whenever the process dies.
  const std::string partial = dest + ".incomplete";
  fs::remove_all(partial, ec);  // the leftovers of a backup that was killed
  std::unique_ptr<KvIterator> it;
  uint64_t total = 0;
  {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    it = base_->iterate(KvRange{}, false);
    total = base_->approximate_bytes(KvRange{});
  }
  try {
    fs::create_directories(partial);
    {
      KvOptions ko;
      ko.path = partial;
      ko.create_if_missing = true;
      std::unique_ptr<KvStore> out = open_leveldb(ko);
      constexpr uint64_t kChunk = 4u << 20;
      KvBatch b;
      uint64_t pending = 0, done = 0;
      for (; it->valid(); it->next()) {
        b.put(it->key(), it->value());
        pending += it->key().size() + it->value().size();
        if (pending >= kChunk) {
          out->write(b, false);
          b.clear();
          done += pending;
          pending = 0;
          if (progress && !progress(done, std::max(total, done)))
            throw sdk::Error(QRS_INTERRUPT, "backup into '" + dest + "' stopped");
        }
      }
      it->check();
      it.reset();
      out->write(b, true);  // synced: the log holds every batch before it too
      done += pending;
      if (progress) (void)progress(done, done);
    }
    if (existed) fs::remove(dest);
    fs::rename(partial, dest);
    if (int fd = ::open(fs::path(dest).parent_path().empty() ? "." : fs::path(dest).parent_path().c_str(),
                        O_RDONLY | O_DIRECTORY);
        fd >= 0) {
      ::fsync(fd);  // the rename itself
      ::close(fd);
    }
  } catch (...) {
    it.reset();
    fs::remove_all(partial, ec);
    throw;
  }
}

void StoreDb::rekey_legacy(uint64_t id, const KeyCodec& codec, const sdk::TableSchema& schema) {
  const std::string mark = legacy_key(id);
  if (!kv_->get(mark)) return;
  KvBatch b;
  b.del(mark);
  bool nocase = false;
  for (size_t i = 0; i < codec.size(); ++i) nocase = nocase || codec.member(i).normalizer == Normalizer::kNocase;
  if (nocase) {
    const std::string prefix = table_prefix(id);
    const std::string name = schema.schema_name + "." + schema.table_name;
    std::vector<qrs_value> cells;
    std::vector<std::string> keys;  // every key under the new fold, to find two rows that meet
    size_t moved = 0;
    auto it = kv_->iterate(KvRange{prefix, prefix_end(prefix)}, false);
    for (; it->valid(); it->next()) {
      decode_row(it->value(), cells, name);
      std::string key = prefix;
      codec.encode_row(key, cells);
      if (key != it->key()) {
        b.del(it->key());
        b.put(key, it->value());
        ++moved;
      }
      keys.push_back(std::move(key));
    }
    it->check();
    if (moved > 0) {
      std::sort(keys.begin(), keys.end());
      if (std::adjacent_find(keys.begin(), keys.end()) != keys.end())
        throw sdk::Error(QRS_FORMAT, "store at '" + path() + "': table " + name +
                                         " holds two keys that differ only in the case of non-ASCII letters "
                                         "('É' and 'é'), which store format 2 keys as one under NOCASE. Open the "
                                         "store with the Quereus build that wrote it and make those keys distinct "
                                         "(or .dump it and restore the script here); nothing was changed");
    }
  }
  kv_->write(b, true);
}

std::shared_ptr<TableState> StoreDb::open_table(const sdk::TableSchema& schema, bool create) {
  KeyCodec codec = KeyCodec::of(schema);  // refuses an unencodable key before any write
  std::string rk = registry_key(schema.schema_name, schema.table_name);
  std::optional<std::string> idv = kv_->get(rk);
  KvBatch orphan;  // the rows of a table registered by a CREATE that never reached the catalog
  if (idv && create) {
    // The host creates only what its catalog lacks, and the catalog entry is written right
    // after this registration: a registry entry here is the trace of a CREATE TABLE
    // interrupted between the two (a crash). Its rows cannot be reached through the
    // catalog; they go with the new registration's batch, and the name starts afresh.
    std::string_view in = *idv;
    uint64_t old_id;
    if (!get_varint(in, &old_id) || !in.empty())
      throw sdk::Error(QRS_CORRUPT, "store at '" + path() + "': corrupt registry entry of " + schema.table_name);
    if (auto live = live_[old_id].lock())
      throw sdk::Error::generic("table " + schema.schema_name + "." + schema.table_name + " already exists in the store");
    orphan.del(stats_key(old_id));
    orphan.del(legacy_key(old_id));
    std::string old_prefix = table_prefix(old_id);
    auto it = kv_->iterate(KvRange{old_prefix, prefix_end(old_prefix)}, false);
    for (; it->valid(); it->next()) orphan.del(it->key());
    it->check();
    live_.erase(old_id);
    idv.reset();
  }
  uint64_t id;
  int64_t count = 0;
  if (idv) {
    std::string_view in = *idv;
    if (!get_varint(in, &id) || !in.empty())
      throw sdk::Error(QRS_CORRUPT, "store at '" + path() + "': corrupt registry entry of " + schema.table_name);
    if (auto live = live_[id].lock()) {
      touch(live);
      live->schema = schema;
      live->codec = std::move(codec);
      return live;
    }
    rekey_legacy(id, codec, schema);
    if (std::optional<std::string> c = kv_->get(stats_key(id))) {
      std::string_view cin = *c;
      uint64_t n;
      if (!get_varint(cin, &n))
        throw sdk::Error(QRS_CORRUPT, "store at '" + path() + "': corrupt row count of " + schema.table_name);
      count = static_cast<int64_t>(n);
    }
  } else if (!create) {
    // Connecting is reopening: the host's catalog names this table, so its storage must be
    // here. Registering an empty table instead would hide the loss of every row.
    throw sdk::Error(QRS_CORRUPT, "store at '" + path() + "': the catalog names table " + schema.schema_name + "." +
                                      schema.table_name +
                                      " but the store holds no storage for it (its registry entry is missing); "
                                      "restore the database from a backup");
  } else {
    uint64_t next = 1;
    if (std::optional<std::string> n = kv_->get(kNextIdKey)) {
      std::string_view in = *n;
      if (!get_varint(in, &next)) throw sdk::Error(QRS_CORRUPT, "store at '" + path() + "': corrupt table id counter");
    }
    id = next;
    KvBatch& b = orphan;
    b.put(kNextIdKey, varint(next + 1));
    b.put(rk, varint(id));
    b.put(stats_key(id), varint(0));
    if (observer_) observer_->table_event(CommitObserver::TableEvent::kCreated, id, schema.schema_name, schema.table_name, b);
    kv_->write(b, true);
  }
  auto t = std::make_shared<TableState>();
  t->id = id;
  t->prefix = table_prefix(id);
  t->schema = schema;
  t->codec = std::move(codec);
  t->row_count = count;
  live_[id] = t;
  return t;
}

bool StoreDb::has_table(std::string_view schema_name, std::string_view table_name) {
  return kv_->get(registry_key(schema_name, table_name)).has_value();
}

std::optional<uint64_t> StoreDb::table_id(std::string_view schema_name, std::string_view table_name) {
  std::optional<std::string> v = kv_->get(registry_key(schema_name, table_name));
  if (!v) return std::nullopt;
  std::string_view in = *v;
  uint64_t id;
  if (!get_varint(in, &id) || !in.empty())
    throw sdk::Error(QRS_CORRUPT, "store at '" + path() + "': corrupt registry entry of " + std::string(table_name));
  return id;
}

void StoreDb::destroy_table(std::string_view schema_name, std::string_view table_name) {
  std::string rk = registry_key(schema_name, table_name);
  std::optional<std::string> idv = kv_->get(rk);
  if (!idv) return;  // unknown tables are ignored (like mem)
  std::string_view in = *idv;
  uint64_t id;
  if (!get_varint(in, &id)) throw sdk::Error(QRS_CORRUPT, "store at '" + path() + "': corrupt registry entry");
  KvBatch b;
  b.del(rk);
  b.del(stats_key(id));
  b.del(legacy_key(id));
  std::string prefix = table_prefix(id);
  auto it = kv_->iterate(KvRange{prefix, prefix_end(prefix)}, false);
  for (; it->valid(); it->next()) b.del(std::string(it->key()));
  it->check();
  if (observer_) observer_->table_event(CommitObserver::TableEvent::kDropped, id, schema_name, table_name, b);
  kv_->write(b, true);
  live_.erase(id);
}

void StoreDb::rename_table(TableState& t, std::string_view new_name) {
  if (auto live = live_[t.id].lock()) touch(live);
  std::string from = registry_key(t.schema.schema_name, t.schema.table_name);
  std::string to = registry_key(t.schema.schema_name, new_name);
  if (from != to) {
    if (kv_->get(to))
      throw sdk::Error::generic("table " + t.schema.schema_name + "." + std::string(new_name) + " already exists");
    KvBatch b;
    b.del(from);
    b.put(to, varint(t.id));
    if (observer_) observer_->table_event(CommitObserver::TableEvent::kRenamed, t.id, t.schema.schema_name, new_name, b);
    kv_->write(b, true);
  }
  t.schema.table_name = std::string(new_name);
}

void StoreDb::remove_txn(Txn* t) {
  std::erase(txns_, t);
  std::erase(rewritten_txns_, t);
}

std::vector<Txn*> StoreDb::txns_of(uint64_t id) const {
  std::vector<Txn*> out;
  for (Txn* t : txns_)
    if (t->table->id == id) out.push_back(t);
  return out;
}

bool StoreDb::above_committed(TableState& t, std::string_view key) {
  if (t.bound == TableState::Bound::kUnknown) {
    auto it = kv_->iterate(KvRange{t.prefix, prefix_end(t.prefix)}, true);
    it->check();
    if (it->valid()) {
      t.max_key.assign(it->key());
      t.bound = TableState::Bound::kKnown;
    } else {
      t.bound = TableState::Bound::kEmpty;
    }
  }
  return t.bound == TableState::Bound::kEmpty || key > std::string_view(t.max_key);
}

RowRef StoreDb::find(const Txn& t, std::string_view key, bool committed_only) {
  if (!committed_only)
    if (const PendingSlot* s = t.pending.find(key)) return t.pending.row_of(*s);
  if (above_committed(*t.table, key)) return {};
  const uint64_t generation = kv_->generation();  // before the read: a write under way moves it
  // Read again with nothing written since (an UPDATE's lookup, then its write): as read.
  if (const Txn::Read* r = t.read(key, generation)) return r->row;
  std::optional<std::string> v = kv_->get(key);
  RowRef row = v ? RowRef::own(std::move(*v)) : RowRef{};
  if (row.bytes.size() > Txn::kReadKept) return row;  // a big row is not kept
  Txn::Read& r = t.reads[t.next_read];
  t.next_read = static_cast<uint8_t>((t.next_read + 1) % t.reads.size());
  r.key.assign(key);
  r.row = row;
  r.generation = generation;
  r.set = true;
  return row;
}

std::pmr::memory_resource* commit_memory() {
  // Never destroyed: a StoreDb or replica torn down after the statics at exit still frees
  // through it (it holds no state).
  static sdk::HugePageResource* huge = new sdk::HugePageResource;
  return huge;
}

void CommitObserver::Sidecar::assign(std::string_view bytes) {
  if (bytes.empty()) {
    len_ = 0;
    return;
  }
  if (bytes.data() >= arena_->data() && bytes.data() < arena_->data() + arena_->size()) {
    const std::string copy(bytes);  // bytes of the arena itself: appending may move them
    assign(copy);
    return;
  }
  at_ = arena_->size();
  arena_->append(bytes);
  len_ = bytes.size();
}

StoreDb::CommitRows::CommitRows(StoreDb& db) : db_(db), borrowed_(!db.row_pool_busy_) {
  pool_ = borrowed_ ? &db.row_pool_ : &local_;
  wrapped_ = borrowed_ ? &db.wrap_buffer_ : &local_wrapped_;
  arena_ = borrowed_ ? &db.sidecar_arena_ : &local_arena_;
  arena_->clear();
  db.row_pool_busy_ = true;
}

StoreDb::CommitRows::~CommitRows() {
  if (!borrowed_) return;
  // Kept for the next commit while small: a big transaction's rows and buffer go.
  constexpr size_t kKept = 64;
  if (pool_->size() > kKept) {
    pool_->resize(kKept);
    pool_->shrink_to_fit();
  }
  for (CommitObserver::RowWrite& w : *pool_) {
    w.table = nullptr;
    w.key = w.row = {};
    w.sidecar.clear();
    w.committed = nullptr;
  }
  if (wrapped_->capacity() > 4096) std::string().swap(*wrapped_);
  arena_->clear();
  if (arena_->capacity() > 16384) arena_->shrink_to_fit();
  db_.row_pool_busy_ = false;
}

void StoreDb::CommitRows::add(TableState* table, std::string_view key, std::string_view row,
                              const PendingWrites::Committed* committed) {
  if (n_ == pool_->size()) pool_->push_back({nullptr, {}, {}, CommitObserver::Sidecar(arena_)});
  CommitObserver::RowWrite& w = (*pool_)[n_++];
  w.table = table;
  w.key = key;
  w.row = row;
  w.sidecar = CommitObserver::Sidecar(arena_);
  w.committed = committed;
}

void StoreDb::write(Txn& t, std::span<const Put> puts) {
  if (!t.active) {  // autocommit: one batch of its own
    KvBatch b;
    int64_t d = 0;
    std::string_view top;
    // What the statement read before writing each row (for the observer; the rows point at
    // them until the commit's end). An UPDATE that moves its key writes two rows.
    std::array<PendingWrites::Committed, 2> few;
    std::vector<PendingWrites::Committed> many(puts.size() > few.size() ? puts.size() : 0);
    PendingWrites::Committed* reads = many.empty() ? few.data() : many.data();
    CommitRows commit(*this);
    std::span<CommitObserver::RowWrite> rows;
    if (observer_) {
      // The observer's writes go first here: they never name a key of `puts` (its own
      // rows' versions ride in their sidecars).
      const uint64_t now = kv_->generation();
      for (size_t i = 0; i < puts.size(); ++i) {
        const Put& p = puts[i];
        const bool known = t.read_of(p.key, now, reads[i]);
        commit.add(t.table.get(), p.key, p.deletion ? std::string_view() : p.row, known ? &reads[i] : nullptr);
      }
      rows = commit.rows();
      if (staged_) observer_->carry_sidecars(rows); else observer_->before_commit(rows, b);
    }
    for (size_t i = 0; i < puts.size(); ++i) {
      const Put& p = puts[i];
      if (p.deletion) {
        b.del(p.key);
      } else if (!rows.empty() && !rows[i].sidecar.empty()) {
        wrap_row(commit.wrapped(), rows[i].sidecar.view(), p.row);
        b.put(p.key, commit.wrapped());
      } else {
        b.put(p.key, p.row);
      }
      d += (p.deletion ? 0 : 1) - (p.existed ? 1 : 0);
      if (p.key > top) top = p.key;
    }
    int64_t count = std::max<int64_t>(t.table->row_count + d, 0);
    if (d != 0) b.put(stats_key(t.table->id), varint(static_cast<uint64_t>(count)));
    touch(t.table);
    if (observer_ && !staged_) {
      try {
        kv_->write(b, sync_);
      } catch (...) {
        observer_->after_commit(false);
        throw;
      }
      observer_->after_commit(true);
    } else {
      kv_->write(b, sync_);
    }
    t.table->row_count = count;
    if (!top.empty()) t.table->raise_bound(top);
    return;
  }
  for (const Put& p : puts) {
    PendingSlot prev;
    bool had = false;
    // The committed row, kept with the key when this write follows its read (for the
    // observer, which would read it again).
    PendingWrites::Committed read;
    const bool known = observer_ && t.read_of(p.key, kv_->generation(), read);
    std::string_view k = t.pending.put(p.key, p.row, p.deletion, &prev, &had, known ? &read : nullptr);
    if (!t.marks.empty()) t.undo.push_back(Txn::Undo{k, had, prev});
    if (had && p.deletion && prev.live()) t.ghosts[k] = prev;  // written, then deleted
    t.delta += (p.deletion ? 0 : 1) - (p.existed ? 1 : 0);
  }
}

void StoreDb::begin(Txn& t) {
  if (t.active) throw sdk::Error::misuse("a transaction is already open on " + t.table->schema.table_name);
  t.active = true;
  t.ready = false;
}

void StoreDb::clear(Txn& t) {
  for (Txn::Read& r : t.reads) r = Txn::Read{};  // (a big row is not kept past the transaction)
  t.pending.clear();
  t.ghosts.clear();
  t.undo.clear();
  t.marks.clear();
  t.delta = 0;
  t.active = false;
  t.ready = false;
}

void StoreDb::discard_pending(Txn& t) {
  t.pending.clear();
  t.ghosts.clear();
  t.undo.clear();
  for (auto& m : t.marks) m = {0, 0};
  t.delta = 0;
}

void StoreDb::commit(Txn& t) {
  if (t.doomed) {
    // The whole transaction goes: the group's other participants, ready or still open,
    // are discarded too (their commit then fails the same way), so no part of it lands.
    for (Txn* o : txns_) {
      if (o == &t || !o->active) continue;
      bool waiting = o->ready;  // committed by the host, waiting for the group: dropped
      clear(*o);
      if (!waiting) {
        o->doomed = true;  // not committed yet: its commit fails too, its rollback clears
        o->active = true;
      }
    }
    clear(t);
    t.doomed = false;
    throw sdk::Error(QRS_ABORT, "the transaction's uncommitted writes to " + t.table->schema.table_name +
                                    " were rewritten by an ALTER TABLE that then failed; they were discarded and "
                                    "the transaction must be rolled back");
  }
  if (t.active) t.ready = true;  // (an instance that never began only resolves the group)
  flush_ready();
}

void StoreDb::rollback(Txn& t) {
  if (observer_) observer_->rolled_back();
  clear(t);
  t.doomed = false;
  flush_ready();  // the rest of the group may have been waiting for this one
}

void StoreDb::flush_ready() {
  bool any = false;
  for (const Txn* t : txns_) {
    if (t->active && !t->ready) return;  // a participant is still open: wait for it
    any = any || t->ready;
  }
  if (!any) return;
  // The group's pending writes go straight into the engine's batch, then the row counts.
  // With an observer the rows are emitted from what it saw (each with its sidecar).
  CommitRows commit(*this);
  struct Group : KvWrites {
    const std::vector<Txn*>* txns;
    std::span<const CommitObserver::RowWrite> rows;
    std::string* wrapped = nullptr;
    bool with_rows = false;
    KvBatch stats;
    bool empty() const override {
      for (const Txn* t : *txns)
        if (t->ready && !t->pending.empty()) return false;
      return stats.empty();
    }
    void emit(KvSink& sink) const override {
      if (with_rows) {
        for (const CommitObserver::RowWrite& w : rows) {
          if (w.row.data() == nullptr) {
            sink.del(w.key);
          } else if (!w.sidecar.empty()) {
            wrap_row(*wrapped, w.sidecar.view(), w.row);
            sink.put(w.key, *wrapped);
          } else {
            sink.put(w.key, w.row);
          }
        }
      } else {
        for (const Txn* t : *txns) {
          if (!t->ready) continue;
          for (const auto& [key, slot] : t->pending.map()) {
            if (slot.live()) sink.put(key, slot.row); else sink.del(key);
          }
        }
      }
      stats.emit(sink);
    }
  } b;
  b.txns = &txns_;
  std::map<TableState*, int64_t> deltas;
  for (Txn* t : txns_)
    if (t->ready && t->delta != 0) {
      deltas[t->table.get()] += t->delta;
      touch(t->table);
    }
  for (const auto& [table, d] : deltas)
    b.stats.put(stats_key(table->id), varint(static_cast<uint64_t>(std::max<int64_t>(table->row_count + d, 0))));
  // Inside a schema-change scope the observer sees the transaction too (a data repair an
  // open-time reconciliation runs is replicated like any write); what it adds lands with the
  // scope, or not at all.
  CommitObserver* observer = observer_;
  try {
    if (observer) {
      size_t total = 0;
      for (const Txn* t : txns_)
        if (t->ready) total += t->pending.map().size();
      commit.reserve(total, 32);
      for (Txn* t : txns_) {
        if (!t->ready) continue;
        for (const auto& [key, slot] : t->pending.map())
          commit.add(t->table.get(), key, slot.live() ? slot.row : std::string_view(), t->pending.committed(slot));
      }
      if (!commit.rows().empty()) {
        observer->before_commit(commit.rows(), b.stats);
        b.rows = commit.rows();
        b.wrapped = &commit.wrapped();
        b.with_rows = true;
      } else {
        observer = nullptr;
      }
    }
  } catch (...) {
    for (Txn* t : txns_)
      if (t->ready) clear(*t);  // nothing of the group landed
    throw;
  }
  try {
    kv_->write(b, sync_);
  } catch (...) {
    if (observer) observer->after_commit(false);
    for (Txn* t : txns_)
      if (t->ready) clear(*t);  // nothing of the group landed
    throw;
  }
  if (observer) observer->after_commit(true);
  for (const auto& [table, d] : deltas) table->row_count = std::max<int64_t>(table->row_count + d, 0);
  for (Txn* t : txns_) {
    if (!t->ready) continue;
    if (!t->pending.empty()) t->table->raise_bound(t->pending.map().rbegin()->first);
    clear(*t);
  }
}

void StoreDb::savepoint(Txn& t, uint32_t depth) {
  if (depth == 0) throw sdk::Error::misuse("savepoint depth starts at 1");
  t.active = true;  // a savepoint outside begin opens the transaction
  t.marks.resize(depth - 1 < t.marks.size() ? depth - 1 : t.marks.size());
  t.marks.resize(depth, {t.undo.size(), t.delta});
}

static void check_depth(const Txn& t, uint32_t depth) {
  if (depth == 0 || depth > t.marks.size())
    throw sdk::Error::misuse("no savepoint at depth " + std::to_string(depth) + " (" +
                             std::to_string(t.marks.size()) + " open)");
}

void StoreDb::release_savepoint(Txn& t, uint32_t depth) {
  check_depth(t, depth);
  t.marks.resize(depth - 1);
  if (t.marks.empty()) t.undo.clear();
}

void StoreDb::rollback_to_savepoint(Txn& t, uint32_t depth) {
  check_depth(t, depth);
  auto [mark, delta] = t.marks[depth - 1];
  while (t.undo.size() > mark) {
    const Txn::Undo& u = t.undo.back();
    t.pending.restore(u.key, u.prev, u.existed);
    t.undo.pop_back();
  }
  t.delta = delta;
  t.marks.resize(depth);
}

// ---- the schema-change scope ----

void StoreDb::schema_begin() {
  if (staged_) throw sdk::Error::misuse("store at '" + path() + "': a schema-change scope is already open");
  staged_ = std::make_unique<StagedKv>(*base_);
  kv_ = staged_.get();
  saved_live_ = live_;
}

void StoreDb::touch(const std::shared_ptr<TableState>& t) {
  if (!staged_ || !t) return;
  for (const auto& [state, copy] : saved_)
    if (state == t) return;
  saved_.emplace_back(t, *t);
}

void StoreDb::touch_txn(Txn* t) {
  if (staged_ && std::find(rewritten_txns_.begin(), rewritten_txns_.end(), t) == rewritten_txns_.end())
    rewritten_txns_.push_back(t);
}

void StoreDb::schema_commit() {
  if (!staged_) throw sdk::Error::misuse("store at '" + path() + "': no schema-change scope is open");
  size_t n = staged_->size();
  try {
    staged_->commit();  // one synced batch: all of the scope or none of it
  } catch (...) {
    schema_rollback();
    throw;
  }
  kv_ = base_.get();
  staged_.reset();
  saved_.clear();
  saved_live_.clear();
  rewritten_txns_.clear();
  ++scope_stats_.committed;
  scope_stats_.staged_writes += n;
}

void StoreDb::schema_rollback() {
  if (!staged_) return;
  kv_ = base_.get();
  base_->changed();  // the staged writes are gone: reads may differ from what the scope saw
  staged_.reset();
  for (auto& [state, copy] : saved_) *state = std::move(copy);
  saved_.clear();
  live_ = std::move(saved_live_);
  saved_live_.clear();
  for (Txn* t : rewritten_txns_) t->doomed = true;
  rewritten_txns_.clear();
  ++scope_stats_.rolled_back;
}

void StoreDb::catalog_put(std::string_view key, std::string_view text) {
  std::string k(1, kCatalog);
  k += key;
  KvBatch b;
  if (text.empty()) b.del(std::move(k)); else b.put(std::move(k), std::string(text));
  kv_->write(b, true);  // durable on return (or with its scope), whatever the commit sync setting
}

void StoreDb::catalog_list(const std::function<void(std::string_view, std::string_view)>& emit) {
  std::string lo(1, kCatalog);
  std::vector<std::pair<std::string, std::string>> entries;  // emit outside the walk: emit may write
  auto it = kv_->iterate(KvRange{lo, prefix_end(lo)}, false);
  for (; it->valid(); it->next()) entries.emplace_back(std::string(it->key().substr(1)), std::string(it->value()));
  it->check();
  for (const auto& [k, v] : entries) emit(k, v);
}

}  // namespace quereus::store
