// modules/store/store_table.cc — StoreTable, its cursor and its connection.
#include "store_table.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "row_codec.h"
#include "store_plan.h"

namespace quereus::store {
namespace {

// A stored row whose cell count is not the table's column count (a row written under
// another definition) is CORRUPT, named after the table: never handed to the host, which
// trusts a row to have one cell per column.
[[noreturn]] void shape_mismatch(size_t cells, const TableState& t) {
  throw sdk::Error(QRS_CORRUPT, "store: a stored row of " + t.schema.schema_name + "." + t.schema.table_name + " has " +
                                    std::to_string(cells) + " cells where the table has " +
                                    std::to_string(t.schema.columns.size()) +
                                    " columns: the rows and the table's definition disagree; restore the database "
                                    "from a backup (`quereus check` lists what is damaged)");
}

void decode_checked(std::string_view bytes, std::vector<qrs_value>& cells, const TableState& t) {
  decode_row(bytes, cells, t.schema.table_name);
  if (cells.size() != t.schema.columns.size()) shape_mismatch(cells.size(), t);
}

sdk::RowPtr owned_checked(std::string_view bytes, const TableState& t) {
  sdk::RowPtr row = decode_row_owned(bytes);
  if (row && row->size() != t.schema.columns.size()) shape_mismatch(row->size(), t);
  return row;
}

using Check = sdk::FilterCheck;

// Copies of committed rows, packed into shared chunks: only the chunk being filled is held
// here, so a long scan keeps no more than the batches still in use.
class RowChunks {
 public:
  RowRef copy(std::string_view bytes) {
    if (!chunk_ || used_ + bytes.size() > cap_) {
      cap_ = std::max<size_t>(bytes.size(), 32 * 1024);
      chunk_ = std::shared_ptr<char[]>(new char[cap_]);
      used_ = 0;
    }
    char* at = chunk_.get() + used_;
    if (!bytes.empty()) std::memcpy(at, bytes.data(), bytes.size());
    used_ += bytes.size();
    return RowRef{std::string_view(at, bytes.size()), std::shared_ptr<const void>(chunk_, at)};
  }

 private:
  std::shared_ptr<char[]> chunk_;
  size_t used_ = 0, cap_ = 0;
};

class StoreCursor : public sdk::Cursor {
 public:
  StoreCursor(std::shared_ptr<StoreDb> db, std::shared_ptr<Txn> txn, std::vector<ByteRange> ranges, bool reverse,
              std::vector<Check> checks, int64_t limit, bool committed_only)
      : db_(std::move(db)), txn_(std::move(txn)), ranges_(std::move(ranges)), reverse_(reverse),
        checks_(std::move(checks)), limit_(limit), committed_only_(committed_only) {}

  void next_batch(sdk::RowBatch& out) override {
    std::lock_guard lock(db_->mu());
    while (!out.full() && next_range_ < ranges_.size() && limit_ != 0) {
      const ByteRange& r = ranges_[reverse_ ? ranges_.size() - 1 - next_range_ : next_range_];
      bool done;
      if (r.point) {
        RowRef row = db_->find(*txn_, r.lo, committed_only_);
        if (row) emit(std::move(row), out);
        done = true;
      } else if (!has_last_) {
        done = walk(r.lo, r.hi, out);
      } else if (!reverse_) {
        // Resume strictly after (before) the last key visited: writes between batches
        // never invalidate the walk.
        done = walk(last_ + '\0', r.hi, out);
      } else {
        done = walk(r.lo, last_, out);
      }
      if (done) {
        ++next_range_;
        has_last_ = false;
      }
    }
  }

 private:
  // Merges committed rows with pending changes over [lo, hi) in the walk's direction;
  // pending wins on equal keys. True when the range is exhausted.
  bool walk(const std::string& lo, const std::string& hi, sdk::RowBatch& out) {
    auto it = db_->kv().iterate(KvRange{lo, hi}, reverse_);
    const PendingWrites& pending = txn_->pending;
    static const PendingWrites::Map kNone;
    const PendingWrites::Map& p = committed_only_ ? kNone : pending.map();
    // Pending entries of [lo, hi) in walk order.
    auto p_lo = p.lower_bound(lo), p_hi = p.lower_bound(hi);
    auto pf = p_lo;                                  // forward position
    auto pr = std::make_reverse_iterator(p_hi);      // reverse position
    auto pr_end = std::make_reverse_iterator(p_lo);
    for (;;) {
      it->check();
      bool has_c = it->valid();
      bool has_p = reverse_ ? pr != pr_end : pf != p_hi;
      if (!has_c && !has_p) return true;
      std::string_view pkey = has_p ? std::string_view(reverse_ ? pr->first : pf->first) : std::string_view();
      int cmp;
      if (!has_p) {
        cmp = -1;
      } else if (!has_c) {
        cmp = 1;
      } else {
        int c = it->key().compare(pkey);
        cmp = c == 0 ? 0 : ((c < 0) != reverse_ ? -1 : 1);
      }
      RowRef row;
      if (cmp < 0) {
        last_.assign(it->key());
        // Committed rows are copied into the cursor's arena: a batch's rows share chunks
        // instead of taking an allocation each.
        row = rows_.copy(it->value());
        it->next();
      } else {
        last_.assign(pkey);
        row = pending.row_of(reverse_ ? pr->second : pf->second);
        if (cmp == 0) it->next();
        if (reverse_) ++pr; else ++pf;
      }
      has_last_ = true;
      if (!row) continue;  // deleted in this transaction
      if (!emit(std::move(row), out)) continue;
      if (limit_ == 0) return true;
      if (out.full()) return false;
    }
  }

  // Adds the row when it passes the checks; false when it did not.
  bool emit(RowRef row, sdk::RowBatch& out) {
    decode_checked(row.bytes, cells_, *txn_->table);
    for (const Check& c : checks_)
      if (!c.matches(cells_.data())) return false;
    out.add_cells(cells_, std::move(row.owner));
    if (limit_ > 0) --limit_;
    return true;
  }

  std::shared_ptr<StoreDb> db_;
  std::shared_ptr<Txn> txn_;
  std::vector<ByteRange> ranges_;
  bool reverse_;
  std::vector<Check> checks_;
  int64_t limit_;
  bool committed_only_;
  size_t next_range_ = 0;
  bool has_last_ = false;
  std::string last_;  // full key of the last row visited in the current range
  std::vector<qrs_value> cells_;
  RowChunks rows_;  // committed rows read by the walk
};

class StoreConnection : public sdk::Connection {
 public:
  StoreConnection(std::shared_ptr<StoreDb> db, std::shared_ptr<Txn> txn) : db_(std::move(db)), txn_(std::move(txn)) {}
  ~StoreConnection() override {
    try {
      std::lock_guard lock(db_->mu());
      if (txn_->active) db_->rollback(*txn_);
    } catch (...) {
    }
  }
  void begin() override { locked([&] { db_->begin(*txn_); }); }
  void commit() override { locked([&] { db_->commit(*txn_); }); }
  void rollback() override { locked([&] { db_->rollback(*txn_); }); }
  void savepoint(uint32_t depth) override { locked([&] { db_->savepoint(*txn_, depth); }); }
  void release_savepoint(uint32_t depth) override { locked([&] { db_->release_savepoint(*txn_, depth); }); }
  void rollback_to_savepoint(uint32_t depth) override { locked([&] { db_->rollback_to_savepoint(*txn_, depth); }); }

 private:
  template <class F>
  void locked(F&& f) {
    std::lock_guard lock(db_->mu());
    f();
  }
  std::shared_ptr<StoreDb> db_;
  std::shared_ptr<Txn> txn_;
};

}  // namespace

StoreTable::StoreTable(std::shared_ptr<StoreDb> db, std::shared_ptr<TableState> state)
    : db_(std::move(db)), state_(std::move(state)) {
  std::shared_ptr<StoreDb> d = db_;
  txn_ = std::shared_ptr<Txn>(new Txn(state_), [d](Txn* t) {
    std::lock_guard lock(d->mu());
    d->remove_txn(t);
    delete t;
  });
  db_->add_txn(txn_.get());  // REQUIRES: the caller holds db mu()
}

StoreTable::~StoreTable() = default;

sdk::PlanResult StoreTable::best_access_plan(const sdk::PlanRequest& request) {
  std::lock_guard lock(db_->mu());
  const double row_count = static_cast<double>(std::max<int64_t>(state_->row_count + txn_->delta, 0));
  return sdk::plan_key_access<Seek>("store", state_->schema, state_->codec, request, row_count);
}

std::unique_ptr<sdk::Cursor> StoreTable::open_cursor(const sdk::ScanArgs& args) {
  std::lock_guard lock(db_->mu());
  const sdk::TableSchema& schema = state_->schema;
  const KeyCodec& codec = state_->codec;
  Seek seek = choose_seek(codec, args.filters, args.handled);
  int64_t limit = -1;
  std::vector<Check> checks = sdk::residual_checks<std::vector<Check>>(schema, codec, seek, args, &limit);
  // Full keys: the table prefix in front of every bound.
  std::vector<ByteRange> ranges = build_ranges(codec, seek, args.filters);
  for (ByteRange& r : ranges) {
    r.lo.insert(0, state_->prefix);
    r.hi = r.hi.empty() ? prefix_end(state_->prefix) : state_->prefix + r.hi;
  }
  return std::make_unique<StoreCursor>(db_, txn_, std::move(ranges), plan_reverse(args.plan_id),
                                       std::move(checks), limit, args.read_committed);
}

sdk::UpdateResult StoreTable::update(sdk::UpdateArgs args) {
  std::vector<qrs_value> values, key;
  for (const sdk::Value& v : args.values) values.push_back(v.to_c());
  for (const sdk::Value& v : args.old_key) key.push_back(v.to_c());
  return update_cells(sdk::UpdateCells{args.op, args.on_conflict, values, key});
}

sdk::UpdateResult StoreTable::update_cells(const sdk::UpdateCells& args) {
  using sdk::Conflict;
  using sdk::UpdateResult;
  std::lock_guard lock(db_->mu());
  const sdk::TableSchema& schema = state_->schema;
  const KeyCodec& codec = state_->codec;
  auto check_row = [&] {
    if (args.values.size() != schema.columns.size())
      throw sdk::Error::misuse("row has " + std::to_string(args.values.size()) + " cells, table " +
                               schema.table_name + " has " + std::to_string(schema.columns.size()) + " columns");
  };
  // The keys are built in buffers the instance reuses: no allocation per write.
  auto row_key = [&]() -> std::string& {
    std::string& k = key_buf_;
    k.assign(state_->prefix);
    codec.encode_row(k, args.values);
    return k;
  };
  auto old_key = [&]() -> std::string& {
    std::string& k = old_key_buf_;
    k.assign(state_->prefix);
    codec.encode_key(k, args.old_key);
    return k;
  };
  std::string& row = row_buf_;
  switch (args.op) {
    case sdk::RowOp::kInsert: {
      check_row();
      const std::string& key = row_key();
      row.clear();
      encode_row(row, args.values);
      if (RowRef existing = db_->find(*txn_, key)) {
        if (args.on_conflict == Conflict::kIgnore) return UpdateResult::noop();
        if (args.on_conflict != Conflict::kReplace)
          return UpdateResult::constraint(sdk::ConstraintKind::kUnique, owned_checked(existing.bytes, *state_));
        db_->write(*txn_, key, row, false, true);
        return UpdateResult::ok(nullptr, owned_checked(existing.bytes, *state_));
      }
      db_->write(*txn_, key, row, false, false);
      return UpdateResult::ok(nullptr);
    }
    case sdk::RowOp::kUpdate: {
      check_row();
      const std::string& from = old_key();
      RowRef old = db_->find(*txn_, from);
      if (!old) return UpdateResult::noop();
      const std::string& to = row_key();
      row.clear();
      encode_row(row, args.values);
      if (to == from) {  // same key: overwrite in place
        db_->write(*txn_, from, row, false, true);
        return UpdateResult::ok(nullptr);
      }
      RowRef target = db_->find(*txn_, to);  // the key moves: collide like an insert
      if (target) {
        if (args.on_conflict == Conflict::kIgnore) return UpdateResult::noop();
        if (args.on_conflict != Conflict::kReplace)
          return UpdateResult::constraint(sdk::ConstraintKind::kUnique, owned_checked(target.bytes, *state_));
      }
      sdk::RowPtr replaced = target ? owned_checked(target.bytes, *state_) : nullptr;
      StoreDb::Put puts[2] = {{from, {}, true, true}, {to, row, false, static_cast<bool>(target)}};
      db_->write(*txn_, puts);
      return UpdateResult::ok(nullptr, std::move(replaced));
    }
    case sdk::RowOp::kDelete: {
      const std::string& from = old_key();
      RowRef old = db_->find(*txn_, from);
      if (!old) return UpdateResult::noop();
      sdk::RowPtr gone = owned_checked(old.bytes, *state_);
      db_->write(*txn_, from, {}, true, true);
      return UpdateResult::ok(std::move(gone));
    }
  }
  throw sdk::Error::misuse("unknown row op");
}

sdk::LookupResult StoreTable::lookup(std::span<const qrs_value> key) {
  std::lock_guard lock(db_->mu());
  const KeyCodec& codec = state_->codec;
  if (key.size() > codec.size()) throw sdk::Error::misuse("lookup key has more cells than the primary key");
  std::string& k = key_buf_;
  k.assign(state_->prefix);
  for (size_t i = 0; i < key.size(); ++i)
    encode_component(k, key[i], codec.member(i).normalizer, codec.member(i).desc);
  // A full key is one read; a prefix (a unique index probe on a companion, whose key is
  // the index columns then the primary key) is the first row of its key range.
  RowRef row = key.size() == codec.size() ? db_->find(*txn_, k) : first_row(k, prefix_end(k));
  if (!row) return sdk::LookupResult::not_found();
  // The cells view the row's bytes (kept by the owner); they stay in lookup_cells_ until
  // the next call on this table, as LookupResult requires.
  decode_checked(row.bytes, lookup_cells_, *state_);
  return sdk::LookupResult::of_cells(lookup_cells_, std::move(row.owner));
}

RowRef StoreTable::first_row(const std::string& lo, const std::string& hi) {
  const PendingWrites::Map& p = txn_->pending.map();
  auto pi = p.lower_bound(lo);
  const auto pend = hi.empty() ? p.end() : p.lower_bound(hi);
  // Above every committed key: only the pending writes can hold it (no LevelDB walk).
  if (db_->above_committed(*state_, lo)) {
    for (; pi != pend; ++pi)
      if (pi->second.live()) return txn_->pending.row_of(pi->second);
    return {};
  }
  auto it = db_->kv().iterate(KvRange{lo, hi}, false);
  for (;;) {
    it->check();
    const bool has_c = it->valid(), has_p = pi != pend;
    if (!has_c && !has_p) return {};
    if (has_p && (!has_c || pi->first <= it->key())) {  // pending first (it wins a tie)
      if (has_c && pi->first == it->key()) it->next();
      if (pi->second.live()) return txn_->pending.row_of(pi->second);
      ++pi;  // deleted in this transaction
      continue;
    }
    return RowRef::own(std::string(it->value()));
  }
}

std::unique_ptr<sdk::Connection> StoreTable::open_connection() {
  return std::make_unique<StoreConnection>(db_, txn_);
}

void StoreTable::apply_maintenance(std::span<const sdk::MaintenanceOp> ops, sdk::ChangeSink& sink) {
  std::lock_guard lock(db_->mu());
  const sdk::TableSchema& schema = state_->schema;
  const KeyCodec& codec = state_->codec;
  std::vector<qrs_value> old_cells;
  for (const sdk::MaintenanceOp& op : ops) {
    std::string& key = key_buf_;
    key.assign(state_->prefix);
    if (op.kind == sdk::MaintenanceKind::kUpsert) {
      if (op.row.size() != schema.columns.size())
        throw sdk::Error::misuse("maintenance row has " + std::to_string(op.row.size()) + " cells, table " +
                                 schema.table_name + " has " + std::to_string(schema.columns.size()) + " columns");
      codec.encode_row(key, op.row);
      row_buf_.clear();
      encode_row(row_buf_, op.row);
      RowRef old = db_->find(*txn_, key);
      if (old && row_body(old.bytes) == row_buf_) continue;  // value-identical: the encoding keeps type and bytes
      db_->write(*txn_, key, row_buf_, false, static_cast<bool>(old));
      if (old) {
        decode_checked(old.bytes, old_cells, *state_);
        sink.updated(old_cells, op.row);
      } else {
        sink.inserted(op.row);
      }
    } else {
      if (op.row.size() != codec.size())
        throw sdk::Error::misuse("maintenance key has " + std::to_string(op.row.size()) + " cells, primary key has " +
                                 std::to_string(codec.size()));
      codec.encode_key(key, op.row);
      RowRef old = db_->find(*txn_, key);
      if (!old) continue;
      decode_checked(old.bytes, old_cells, *state_);
      db_->write(*txn_, key, {}, true, true);
      sink.deleted(old_cells);
    }
  }
}

void StoreTable::replace_contents(sdk::RowSource& source) {
  // The new contents, encoded and ordered by key, built before anything is written (and
  // without the lock: the host may compute the rows by reading other tables).
  std::map<std::string, std::string> fresh;
  {
    sdk::TableSchema schema;
    KeyCodec codec;
    {
      std::lock_guard lock(db_->mu());
      schema = state_->schema;
      codec = state_->codec;
    }
    for (std::span<const qrs_value> cells; source.next(cells);) {
      if (cells.size() != schema.columns.size())
        throw sdk::Error::misuse("replacement row has " + std::to_string(cells.size()) + " cells, table " +
                                 schema.table_name + " has " + std::to_string(schema.columns.size()) + " columns");
      std::string key;
      codec.encode_row(key, cells);
      auto [it, inserted] = fresh.try_emplace(std::move(key));
      if (!inserted) {
        std::vector<qrs_value> k;
        for (size_t m = 0; m < codec.size(); ++m) k.push_back(cells[codec.member(m).column]);
        throw sdk::Error::constraint("UNIQUE constraint failed: " + schema.table_name + " primary key " +
                                     sdk::describe_cells(k) + " appears twice in the replacement rows");
      }
      encode_row(it->second, cells);
    }
  }
  std::lock_guard lock(db_->mu());
  const std::string& prefix = state_->prefix;
  KvBatch b;
  {
    auto it = db_->kv().iterate(KvRange{prefix, prefix_end(prefix)}, false);
    for (; it->valid(); it->next()) b.del(it->key());
    it->check();
  }
  if (CommitObserver* observer = db_->observer()) {
    // A replacement is not a captured write: each row whose key stays keeps the observer's
    // sidecar it has now (a replica's versions), as any uncaptured write does.
    std::vector<std::string> keys;
    keys.reserve(fresh.size());
    for (const auto& [key, row] : fresh) keys.push_back(prefix + key);
    std::vector<CommitObserver::RowWrite> rows;
    rows.reserve(fresh.size());
    CommitObserver::Sidecar::Arena sidecars;
    size_t i = 0;
    for (const auto& [key, row] : fresh) rows.push_back({state_.get(), keys[i++], row, CommitObserver::Sidecar(&sidecars)});
    observer->carry_sidecars(rows);
    std::string wrapped;
    for (const CommitObserver::RowWrite& w : rows) {
      if (w.sidecar.empty()) {
        b.put(w.key, w.row);
      } else {
        wrap_row(wrapped, w.sidecar.view(), w.row);
        b.put(w.key, wrapped);
      }
    }
  } else {
    for (const auto& [key, row] : fresh) b.put(prefix + key, row);
  }
  b.put(StoreDb::stats_key(state_->id), [&] {
    std::string v;
    put_varint(v, fresh.size());
    return v;
  }());
  db_->touch(state_);  // a schema-change scope rolled back restores the count and bound
  db_->write_batch(b);  // one atomic batch (staged with the scope when one is open)
  state_->row_count = static_cast<int64_t>(fresh.size());
  state_->bound = TableState::Bound::kUnknown;  // recomputed when next asked
  db_->discard_pending(*txn_);
}

void StoreTable::alter_table(const sdk::SchemaChange& change, const sdk::TableSchema& new_schema) {
  std::lock_guard lock(db_->mu());
  if (change.kind == sdk::SchemaChangeKind::kRenameTable) {
    db_->rename_table(*state_, new_schema.table_name);
    state_->schema = new_schema;
    return;
  }
  alter_stored_table(*db_, *state_, change, new_schema);
}

}  // namespace quereus::store
