// modules/store/store_db.h — one opened store: its KV store, table registry, row counts,
// catalog and the transaction coordinator.
//
// Layout of the keyspace (one LevelDB per database):
//
//   00 "format"              the store's format version ("2"); "1" is upgraded at open,
//                            another is refused
//   00 "next_table_id"       varint: the next table id to hand out
//   01 <catalog key>         the host's catalog entries (catalog_put / catalog_list)
//   02 <schema> 00 <table>   the table registry: lower-case names -> varint table id
//   03 <id: 8 bytes BE>      the table's committed row count (varint)
//   04 <id: 8 bytes BE> <encoded primary key>   one row (row_codec.h)
//   05 <id: 8 bytes BE>      "1": the table's keys are still format 1's (NOCASE folded
//                            A-Z only); re-keyed when the table is first opened
//
// Rows live under the table's stable id, so RENAME TO rewrites one registry entry and no
// row. Secondary indexes are the engine's companion tables: just more tables here.
//
// Transactions. Each connected table instance owns a Txn: its pending writes (full KV key
// -> row bytes, or null for a delete), its row-count delta and its savepoint undo log.
// Reads merge the instance's pending writes over the committed store, in key order.
// The coordinator groups the transaction: commit() marks a Txn ready, and when no Txn of
// the database is still open-and-unresolved, ONE KvBatch carries every ready Txn's rows
// and their tables' new row counts, synced when the database says so. A write outside
// begin..commit is its own batch (autocommit).
//
// Thread safety: every method locks mu() (the host may use different tables of one
// database from different threads).
#ifndef QUEREUS_MODULES_STORE_STORE_DB_H_
#define QUEREUS_MODULES_STORE_STORE_DB_H_

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "key_codec.h"
#include "kv.h"
#include "kv_staged.h"
#include "pending.h"
#include "quereus/sdk.hpp"

namespace quereus::store {

// Format 2 keys NOCASE text by its Unicode fold (format 1: A-Z only).
inline constexpr std::string_view kFormatVersion = "2";


// The live state of one stored table, shared by its connected instances.
struct TableState {
  uint64_t id = 0;
  std::string prefix;  // 04 ‖ id: every row key starts with it
  sdk::TableSchema schema;
  KeyCodec codec;
  int64_t row_count = 0;  // committed
  // An upper bound of the committed row keys: an insert above it needs no read to know its
  // key is free (the append shortcut). Unknown until first asked (one reverse seek).
  enum class Bound { kUnknown, kEmpty, kKnown };
  Bound bound = Bound::kUnknown;
  std::string max_key;
  // Records that the committed keys now include keys up to `key`.
  void raise_bound(std::string_view key) {
    if (bound == Bound::kUnknown) return;  // computed from the store when next asked
    if (bound == Bound::kEmpty || key > std::string_view(max_key)) max_key.assign(key);
    bound = Bound::kKnown;
  }
};

class StoreDb;

// One instance's transaction state. REQUIRES for every member access: db mu() held.
struct Txn {
  explicit Txn(std::shared_ptr<TableState> t) : table(std::move(t)) {}
  std::shared_ptr<TableState> table;
  bool active = false;
  bool ready = false;  // committed by the host, waiting for the group's batch
  PendingWrites pending;  // full key -> row or deletion
  int64_t delta = 0;      // pending change of the row count
  struct Undo {
    std::string_view key;  // in the pending arena
    bool existed;          // was there a pending entry before the write
    PendingSlot prev;
  };
  // Rows this transaction inserted and then deleted, by their (tombstoned) key: a re-key
  // must still see where they would land (a collision among them is BUSY, as in mem).
  absl::btree_map<std::string_view, PendingSlot> ghosts;
  std::vector<Undo> undo;                         // recorded only while a savepoint is open
  std::vector<std::pair<size_t, int64_t>> marks;  // per savepoint: undo size and delta
  // Set when a schema-change scope that rewrote this transaction's pending writes (an
  // ALTER) was rolled back: they no longer match the table's schema, so the transaction
  // can only roll back (commit fails with ABORT).
  bool doomed = false;
  // The last committed rows read by key (StoreDb::find), with the store's generation when
  // they were read: a write that follows its read notes the committed row in `pending`.
  struct Read {
    std::string key;
    RowRef row;
    uint64_t generation = 0;
    bool set = false;
  };
  static constexpr size_t kReadKept = 64 * 1024;  // a bigger row is read again
  mutable std::array<Read, 2> reads;
  mutable uint8_t next_read = 0;
  // The kept read of `key` at store generation `now`, or null.
  const Read* read(std::string_view key, uint64_t now) const {
    for (const Read& r : reads)
      if (r.set && r.generation == now && r.key == key) return &r;
    return nullptr;
  }
  // The same, as a PendingWrites::Committed; false if none.
  bool read_of(std::string_view key, uint64_t now, PendingWrites::Committed& out) const {
    const Read* r = read(key, now);
    if (r) out = PendingWrites::Committed{r->row.bytes, static_cast<bool>(r->row), now};
    return r != nullptr;
  }
};

// Memory for a commit's big, short-lived buffers (its observer's rows and sidecars, the
// capture's log references): huge-page blocks from 2 MB up (quereus/block_memory.hpp), so
// filling them takes a fault per 2 MB rather than per 4 KB page (~14 us each on a VM).
std::pmr::memory_resource* commit_memory();

// Sees every batch of row writes of a transaction (or of an autocommit write) before it is
// written, and may add writes of its own to the same atomic batch: sync-store's change
// capture stages its replication metadata this way, so data and metadata land together or
// not at all. Calls are made with mu() held; the committed store (StoreDb::kv) still reads
// as it was before the batch.
class CommitObserver {
 public:
  // A row's sidecar: its bytes live in one buffer shared by the commit's rows (a big
  // transaction's sidecars are not one allocation each). Setting it again appends the new
  // bytes; the old ones stay unused until the commit ends.
  class Sidecar {
   public:
    // A commit's sidecars of a big transaction fill megabytes: huge-page memory
    // (commit_memory), where a fresh 4 KB page would cost a fault each.
    using Arena = std::pmr::string;
    explicit Sidecar(Arena* arena = nullptr) : arena_(arena) {}
    bool empty() const { return len_ == 0; }
    size_t size() const { return len_; }
    std::string_view view() const { return len_ == 0 ? std::string_view() : std::string_view(arena_->data() + at_, len_); }
    operator std::string_view() const { return view(); }  // NOLINT: reads as the bytes
    void assign(std::string_view bytes);
    Sidecar& operator=(std::string_view bytes) {
      assign(bytes);
      return *this;
    }
    // Writing in place: append the sidecar's bytes to the string open() returns, then close().
    Arena& open() {
      at_ = arena_->size();
      return *arena_;
    }
    void close() { len_ = arena_->size() - at_; }
    void clear() { len_ = 0; }

   private:
    Arena* arena_;
    size_t at_ = 0;
    size_t len_ = 0;
  };
  struct RowWrite {
    TableState* table;
    std::string_view key;  // the full row key (TableState::prefix ‖ encoded primary key)
    std::string_view row;  // the new encoded row; data() == nullptr: the row is deleted
    // Set by the observer: bytes stored with the row (row_codec's 02 form), read back with
    // row_sidecar. Empty: the row is stored without one.
    Sidecar sidecar;
    // What the committed store held under `key` when the transaction read it before its
    // first write of the key; null when it did not. Current while its generation is the
    // store's (KvStore::generation): then it is what kv().get(key) returns.
    const PendingWrites::Committed* committed = nullptr;
  };
  virtual ~CommitObserver() = default;
  // `rows`: the batch's net row writes. What the observer puts in `out` lands in the same
  // batch (keys other than `rows`' own: their order against the rows is not fixed); a live
  // row's `sidecar` lands in its own entry. A throw abandons the batch (nothing lands).
  virtual void before_commit(std::span<RowWrite> rows, KvBatch& out) = 0;
  // Rows written inside a schema-change scope outside a transaction (not captured): the
  // observer keeps each live row's sidecar as the committed row has it.
  virtual void carry_sidecars(std::span<RowWrite> /*rows*/) {}
  // The batch landed (`landed`) or failed; not called when before_commit threw.
  virtual void after_commit(bool landed) = 0;
  // A transaction on one of the store's tables rolled back (nothing of it lands).
  virtual void rolled_back() {}
  // A table was registered, dropped or renamed (`name` is the new name): what the observer
  // puts in `out` lands with the registry change (in the schema-change scope's batch when
  // one is open).
  enum class TableEvent { kCreated, kDropped, kRenamed };
  virtual void table_event(TableEvent /*kind*/, uint64_t /*id*/, std::string_view /*schema*/,
                           std::string_view /*name*/, KvBatch& /*out*/) {}
  // A row that is gone, as (lower-case column name, value) cells — what an observer kept of
  // a deleted row — and where the ALTER would have moved it.
  using NamedRow = std::vector<std::pair<std::string, sdk::Value>>;
  struct MovedKey {
    std::string key;      // the new full row key
    std::string address;  // the new primary-key cells, encoded as a row (row_codec)
  };
  // Runs the ALTER's own row transformation on `row` (its columns matched by name to the
  // table's columns before the ALTER; a column it lacks reads NULL). nullopt: the ALTER
  // could not convert it.
  using Rekey = std::function<std::optional<MovedKey>(const NamedRow& row)>;
  // An ALTER moves `table`'s committed rows to new keys (ALTER PRIMARY KEY, or a key
  // column's collation, type or nullability): `moves` are (old full key, new full key, row) of the
  // rows whose key changed; `rekey` computes the same move for a row that is no longer
  // stored (a deleted row whose tombstone must follow it). What the observer puts in `out`
  // lands with the moved rows (in the schema-change scope's batch). Throw to refuse the
  // ALTER before anything is written.
  struct KeyMove {
    std::string old_key, new_key;
    std::string_view row;  // the row as it lands at new_key (its sidecar carried over)
  };
  virtual void rekeyed(const TableState& /*table*/, const std::vector<KeyMove>& /*moves*/, const Rekey& /*rekey*/,
                       KvBatch& /*out*/) {}
};

struct StoreOptions {
  KvOptions kv;
  bool sync = true;
};

// Counters of the schema-change scopes of one StoreDb (for tests and logs).
struct ScopeStats {
  uint64_t committed = 0;
  uint64_t rolled_back = 0;
  uint64_t staged_writes = 0;  // writes held back by the scopes, in all
};

class StoreDb {
 public:
  // Opens (or creates) the store and checks its format version. Throws sdk::Error naming
  // the path and what to do.
  explicit StoreDb(const StoreOptions& options);
  StoreDb(const StoreDb&) = delete;
  StoreDb& operator=(const StoreDb&) = delete;

  std::recursive_mutex& mu() { return mu_; }
  // The KV store as the module sees it: inside a schema-change scope, the scope's staged
  // writes over the store.
  KvStore& kv() { return *kv_; }
  const std::string& path() const { return kv_->path(); }

  // ---- tables (REQUIRES: mu() held) ----
  // create: registers schema.table (QRS_ERROR when it exists); connect: the registered
  // table (QRS_CORRUPT when the store has none: the catalog names a table whose storage
  // is gone).
  std::shared_ptr<TableState> open_table(const sdk::TableSchema& schema, bool create);
  void destroy_table(std::string_view schema_name, std::string_view table_name);
  bool has_table(std::string_view schema_name, std::string_view table_name);
  // The stable id of a registered table (nullopt: none by that name).
  std::optional<uint64_t> table_id(std::string_view schema_name, std::string_view table_name);
  void rename_table(TableState& t, std::string_view new_name);

  // ---- transactions (REQUIRES: mu() held) ----
  void add_txn(Txn* t) { txns_.push_back(t); }
  void remove_txn(Txn* t);
  // The row at `key` as `t` sees it (its pending writes over the committed store).
  RowRef find(const Txn& t, std::string_view key, bool committed_only = false);
  // Sets the row at `key` (`deletion`: deletes it); `existed`: a row is there now as t
  // sees it. Outside a transaction the writes of one call are one batch (autocommit).
  // The views need only live for the call.
  struct Put {
    std::string_view key;
    std::string_view row;
    bool deletion;
    bool existed;
  };
  void write(Txn& t, std::span<const Put> puts);
  void write(Txn& t, std::string_view key, std::string_view row, bool deletion, bool existed) {
    Put p{key, row, deletion, existed};
    write(t, std::span<const Put>(&p, 1));
  }
  // True when `key` is above every committed key of `t`, so nothing is stored under it.
  bool above_committed(TableState& t, std::string_view key);

  // Drops t's pending writes (a replace_contents rewrote the committed rows under them);
  // its transaction and savepoints stay open, with nothing to undo.
  void discard_pending(Txn& t);
  void begin(Txn& t);
  void commit(Txn& t);
  void rollback(Txn& t);
  void savepoint(Txn& t, uint32_t depth);
  void release_savepoint(Txn& t, uint32_t depth);
  void rollback_to_savepoint(Txn& t, uint32_t depth);
  // The live state of table `id` (null when no instance holds it).
  std::shared_ptr<TableState> live_state(uint64_t id) {
    auto it = live_.find(id);
    return it == live_.end() ? nullptr : it->second.lock();
  }
  // The txns of table `id` (for ALTER's busy check).
  std::vector<Txn*> txns_of(uint64_t id) const;
  // Whether any connection holds a transaction open on this store.
  bool any_open_transaction() const {
    for (const Txn* t : txns_)
      if (t->active) return true;
    return false;
  }
  // The observer of every row batch (null: none). Not owned; it outlives the StoreDb's use.
  void set_observer(CommitObserver* o) { observer_ = o; }
  CommitObserver* observer() const { return observer_; }
  // Writes `batch` (plus nothing else) durably per the sync option.
  void write_batch(const KvBatch& batch) { kv_->write(batch, sync_); }

  // ---- the schema-change scope (SDK 1.4; REQUIRES: mu() held) ----
  // Between schema_begin and schema_commit every write goes to a staged overlay (reads
  // see it); schema_commit writes the overlay as one synced batch, schema_rollback drops
  // it and restores the table states the scope changed. Scopes do not nest.
  void schema_begin();
  void schema_commit();
  void schema_rollback();
  bool in_schema_scope() const { return staged_ != nullptr; }
  // Records `t` as it is now, once per scope, so schema_rollback can restore it. Call
  // before changing a TableState inside a scope (a no-op outside one).
  void touch(const std::shared_ptr<TableState>& t);
  // An ALTER inside the scope rewrote `t`'s pending writes: a rollback dooms it.
  void touch_txn(Txn* t);
  const ScopeStats& scope_stats() const { return scope_stats_; }

  // ---- catalog ----
  void catalog_put(std::string_view key, std::string_view text);
  void catalog_list(const std::function<void(std::string_view, std::string_view)>& emit);

  static std::string registry_key(std::string_view schema, std::string_view table);
  static std::string stats_key(uint64_t id);
  static std::string legacy_key(uint64_t id);
  static std::string table_prefix(uint64_t id);

 private:
  void check_format();
 public:
  // An online copy into `dest` (new or empty): every key of one snapshot of the committed
  // store, taken under mu() — batches are written under it, so a snapshot is a commit
  // boundary — and copied without it, so writers go on. The copy is built in
  // `<dest>.incomplete` and renamed to `dest` once whole and synced: `dest` holds all of it
  // or nothing. On failure what was written is removed.
  // `progress(bytes_done, bytes_total)` returning false stops it (QRS_INTERRUPT).
  void backup(const std::string& dest, const std::function<bool(uint64_t, uint64_t)>& progress);
 private:
  // A format-1 table's keys moved to the format-2 NOCASE fold, in one batch with the removal
  // of its mark; no-op for a table without the mark. Two rows that meet: QRS_FORMAT, nothing
  // written.
  void rekey_legacy(uint64_t id, const KeyCodec& codec, const sdk::TableSchema& schema);
  void flush_ready();  // the group commit
  void clear(Txn& t);

  std::recursive_mutex mu_;  // recursive: ALTER's host callbacks (fill / convert) may read tables of this store
  std::unique_ptr<KvStore> base_;  // the store on disk
  KvStore* kv_ = nullptr;          // base_, or staged_ inside a schema-change scope
  // The open schema-change scope: its overlay, the table states as they were before the
  // scope changed them, the registry of live states at schema_begin, and the transactions
  // whose pending writes it rewrote.
  std::unique_ptr<StagedKv> staged_;
  std::vector<std::pair<std::shared_ptr<TableState>, TableState>> saved_;
  std::map<uint64_t, std::weak_ptr<TableState>> saved_live_;
  std::vector<Txn*> rewritten_txns_;
  ScopeStats scope_stats_;
  bool sync_;
  CommitObserver* observer_ = nullptr;
  std::map<uint64_t, std::weak_ptr<TableState>> live_;
  std::vector<Txn*> txns_;

  // The observer's rows of one commit, from a pool reused from commit to commit (so a small
  // commit allocates neither the vector nor, once warm, its rows' sidecars) and the buffer a
  // row is wrapped with its sidecar in. REQUIRES: mu().
  class CommitRows {
   public:
    explicit CommitRows(StoreDb& db);
    ~CommitRows();
    CommitRows(const CommitRows&) = delete;
    CommitRows& operator=(const CommitRows&) = delete;
    void add(TableState* table, std::string_view key, std::string_view row,
             const PendingWrites::Committed* committed = nullptr);
    // Room for `n` rows in all (a big transaction's rows are not reallocated as they come),
    // and for their sidecars at `sidecar_bytes` each.
    void reserve(size_t n, size_t sidecar_bytes) {
      if (n > pool_->size()) pool_->reserve(n);
      arena_->reserve(n * sidecar_bytes);
    }
    std::span<CommitObserver::RowWrite> rows() { return {pool_->data(), n_}; }
    std::string& wrapped() { return *wrapped_; }

   private:
    StoreDb& db_;
    bool borrowed_;  // the pool (false: it is in use further up the stack; a local one)
    std::pmr::vector<CommitObserver::RowWrite> local_{commit_memory()};
    std::string local_wrapped_;
    CommitObserver::Sidecar::Arena local_arena_{commit_memory()};
    std::pmr::vector<CommitObserver::RowWrite>* pool_;
    std::string* wrapped_;
    CommitObserver::Sidecar::Arena* arena_;  // the rows' sidecars
    size_t n_ = 0;
  };
  std::pmr::vector<CommitObserver::RowWrite> row_pool_{commit_memory()};
  std::string wrap_buffer_;
  CommitObserver::Sidecar::Arena sidecar_arena_{commit_memory()};
  bool row_pool_busy_ = false;
};

}  // namespace quereus::store

#endif  // QUEREUS_MODULES_STORE_STORE_DB_H_
