// modules/mem/mem_table.cc — MemTable, its cursor and its connection.
#include "mem_table.h"

#include <algorithm>
#include <iterator>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "access_plan.h"
#include "mem_module.h"

namespace quereus::mem {
namespace {


using Check = sdk::FilterCheck;

using Checks = absl::InlinedVector<Check, 2>;
using KeyCells = absl::InlinedVector<qrs_value, 4>;

// C views of a key given as values (valid while `key` lives).
KeyCells key_cells(const sdk::Row& key) {
  KeyCells out;
  for (const Value& v : key) out.push_back(v.to_c());
  return out;
}

class MemCursor : public sdk::Cursor {
 public:
  MemCursor(std::shared_ptr<TableTxn> txn, KeyRanges ranges, bool reverse, Checks checks,
            int64_t limit, bool committed_only)
      : txn_(std::move(txn)), ranges_(std::move(ranges)), reverse_(reverse), checks_(std::move(checks)),
        limit_(limit), committed_only_(committed_only), no_pending_(SlotLess{&txn_->store().order()}) {}

  void next_batch(sdk::RowBatch& out) override {
    const TableStore& store = txn_->store();
    const KeyOrder& order = store.order();
    std::shared_lock lock(store.mutex());
    const RowSet& rows = store.rows();
    // A committed read (`committed.<table>`) sees the committed rows only.
    const PendingMap& pending = committed_only_ ? no_pending_ : txn_->pending();
    while (!out.full() && next_range_ < ranges_.size() && limit_ != 0) {
      const KeyRange& r = ranges_[reverse_ ? ranges_.size() - 1 - next_range_ : next_range_];
      bool range_done;
      if (!reverse_) {
        Probe from = last_ ? order.at(cells_of(last_).data(), Probe::kAfter) : r.lo.probe(from_buf_);
        Probe stop = r.hi.probe(stop_buf_);
        SeekKey k = make_seek(order, from);
        range_done = walk(rows.lower_bound(k), rows.end(), pending.lower_bound(k), pending.end(), 1,
                          make_seek(order, stop), out);
      } else {
        Probe from = last_ ? order.at(cells_of(last_).data(), Probe::kBefore) : r.hi.probe(from_buf_);
        Probe stop = r.lo.probe(stop_buf_);
        SeekKey k = make_seek(order, from);
        range_done = walk(std::make_reverse_iterator(rows.lower_bound(k)), rows.rend(),
                          std::make_reverse_iterator(pending.lower_bound(k)), pending.rend(), -1,
                          make_seek(order, stop), out);
      }
      if (range_done) {
        ++next_range_;
        last_.reset();
      }
    }
  }

 private:
  // Merges committed rows (c) with pending changes (p) in direction `dir` until `stop`;
  // pending wins on equal keys. Returns true when the range is exhausted, false when the
  // batch filled up (the walk resumes after last_).
  template <class CIt, class PIt>
  bool walk(CIt c, CIt c_end, PIt p, PIt p_end, int dir, const SeekKey& stop, sdk::RowBatch& out) {
    const KeyOrder& order = txn_->store().order();
    SlotLess less{&order};
    const Packed* last = nullptr;  // owned by the trees while the lock is held
    for (;;) {
      bool has_c = c != c_end, has_p = p != p_end;
      if (!has_c && !has_p) return true;
      int cmp = !has_p ? -1 : !has_c ? 1 : dir * (less(*c, p->first) ? -1 : less(p->first, *c) ? 1 : 0);
      const Slot& key = cmp < 0 ? *c : p->first;
      if (dir * compare_slot(order, key, stop) > 0) return true;
      const Packed& row = cmp < 0 ? c->row : p->second;
      last = &key.row;
      if (cmp <= 0) ++c;
      if (cmp >= 0) ++p;
      if (!row) continue;  // deleted in this transaction
      std::span<const qrs_value> cells = cells_of(row);
      if (!matches(cells.data())) continue;
      out.add_cells(cells, row);
      if (limit_ > 0 && --limit_ == 0) return true;
      if (out.full()) {
        last_ = *last;
        return false;
      }
    }
  }

  bool matches(const qrs_value* row) const {
    for (const Check& c : checks_)
      if (!c.matches(row)) return false;
    return true;
  }

  std::shared_ptr<TableTxn> txn_;
  KeyRanges ranges_;
  bool reverse_;
  Checks checks_;
  int64_t limit_;  // rows still allowed, -1 for no cap
  bool committed_only_;
  PendingMap no_pending_;  // the empty overlay of a committed read
  size_t next_range_ = 0;
  Packed last_;  // key of the last row visited in the current range
  absl::InlinedVector<qrs_value, 4> from_buf_, stop_buf_;  // C views of the current bounds
};

class MemConnection : public sdk::Connection {
 public:
  explicit MemConnection(std::shared_ptr<TableTxn> txn) : txn_(std::move(txn)) {}
  ~MemConnection() override {
    try {
      std::unique_lock lock(txn_->store().mutex());
      if (txn_->active()) txn_->rollback();
    } catch (...) {
    }
  }

  void begin() override { locked([&] { txn_->begin(); }); }
  void commit() override { locked([&] { txn_->commit(); }); }
  void rollback() override { locked([&] { txn_->rollback(); }); }
  void savepoint(uint32_t depth) override { locked([&] { txn_->savepoint(depth); }); }
  void release_savepoint(uint32_t depth) override { locked([&] { txn_->release_savepoint(depth); }); }
  void rollback_to_savepoint(uint32_t depth) override { locked([&] { txn_->rollback_to_savepoint(depth); }); }

 private:
  template <class F>
  void locked(F&& f) {
    std::unique_lock lock(txn_->store().mutex());
    f();
  }

  std::shared_ptr<TableTxn> txn_;
};

}  // namespace

sdk::PlanResult MemTable::best_access_plan(const sdk::PlanRequest& request) {
  const KeyOrder& order = store_->order();
  double row_count;
  {
    std::shared_lock lock(store_->mutex());
    row_count = static_cast<double>(store_->rows().size());
  }
  return sdk::plan_key_access<Seek>("mem", store_->schema(), order, request, row_count);
}

std::unique_ptr<sdk::Cursor> MemTable::open_cursor(const sdk::ScanArgs& args) {
  const sdk::TableSchema& schema = store_->schema();
  const KeyOrder& order = store_->order();
  Seek seek = choose_seek(order, args.filters, args.handled);
  int64_t limit = -1;
  Checks checks = sdk::residual_checks<Checks>(schema, order, seek, args, &limit);
  return std::make_unique<MemCursor>(txn_, build_ranges(order, seek, args.filters), plan_reverse(args.plan_id),
                                     std::move(checks), limit, args.read_committed);
}

sdk::UpdateResult MemTable::update(sdk::UpdateArgs args) {
  KeyCells values = key_cells(args.values), key = key_cells(args.old_key);
  return update_cells(sdk::UpdateCells{args.op, args.on_conflict, values, key});
}

sdk::UpdateResult MemTable::update_cells(const sdk::UpdateCells& args) {
  const sdk::TableSchema& schema = store_->schema();
  const KeyOrder& order = store_->order();
  auto check_row = [&] {
    if (args.values.size() != schema.columns.size())
      throw sdk::Error::misuse("row has " + std::to_string(args.values.size()) + " cells, table " +
                               schema.table_name + " has " + std::to_string(schema.columns.size()) + " columns");
  };
  auto check_key = [&] {
    if (args.old_key.size() != order.size())
      throw sdk::Error::misuse("key has " + std::to_string(args.old_key.size()) + " cells, primary key has " +
                               std::to_string(order.size()));
  };
  using sdk::Conflict;
  using sdk::UpdateResult;
  std::unique_lock lock(store_->mutex());
  switch (args.op) {
    // Results carry no row when the stored row is the row given ("as written"); the
    // rows a conflict found or a write displaced are unpacked for the host.
    case sdk::RowOp::kInsert: {
      check_row();
      Packed row = pack_row(args.values);
      if (Packed existing = txn_->insert_if_absent(row)) {
        if (args.on_conflict == Conflict::kIgnore) return UpdateResult::noop();
        if (args.on_conflict != Conflict::kReplace)
          return UpdateResult::constraint(sdk::ConstraintKind::kUnique, unpack_row(existing));
        txn_->write(existing, std::move(row));
        return UpdateResult::ok(nullptr, unpack_row(existing));
      }
      return UpdateResult::ok(nullptr);
    }
    case sdk::RowOp::kUpdate: {
      check_row();
      check_key();
      Packed old = txn_->find(order.at_key(args.old_key));
      if (!old) return UpdateResult::noop();
      Packed row = pack_row(args.values);
      if (order.compare(cells_of(old).data(), cells_of(row).data()) == 0) {  // same key: overwrite in place
        txn_->write(old, std::move(row));
        return UpdateResult::ok(nullptr);
      }
      Packed target = txn_->find(order.at(cells_of(row).data()));  // the key moves: collide like an insert
      if (target) {
        if (args.on_conflict == Conflict::kIgnore) return UpdateResult::noop();
        if (args.on_conflict != Conflict::kReplace)
          return UpdateResult::constraint(sdk::ConstraintKind::kUnique, unpack_row(target));
      }
      txn_->write(old, nullptr);
      txn_->write(row, row);
      return UpdateResult::ok(nullptr, unpack_row(target));
    }
    case sdk::RowOp::kDelete: {
      check_key();
      Packed old = txn_->find(order.at_key(args.old_key));
      if (!old) return UpdateResult::noop();
      txn_->write(old, nullptr);
      return UpdateResult::ok(unpack_row(old));
    }
  }
  throw sdk::Error::misuse("unknown row op");
}

std::unique_ptr<sdk::Connection> MemTable::open_connection() { return std::make_unique<MemConnection>(txn_); }

sdk::LookupResult MemTable::lookup(std::span<const qrs_value> key) {
  const KeyOrder& order = store_->order();
  if (key.empty() || key.size() > order.size())
    throw sdk::Error::misuse("lookup key has " + std::to_string(key.size()) + " cells, primary key has " +
                             std::to_string(order.size()));
  std::shared_lock lock(store_->mutex());
  Packed row = txn_->first_with_prefix(key);
  if (!row) return sdk::LookupResult::not_found();
  std::span<const qrs_value> cells = cells_of(row);
  return sdk::LookupResult::of_cells(cells, std::move(row));
}

void MemTable::apply_maintenance(std::span<const sdk::MaintenanceOp> ops, sdk::ChangeSink& sink) {
  const sdk::TableSchema& schema = store_->schema();
  const KeyOrder& order = store_->order();
  std::unique_lock lock(store_->mutex());
  for (const sdk::MaintenanceOp& op : ops) {
    if (op.kind == sdk::MaintenanceKind::kUpsert) {
      if (op.row.size() != schema.columns.size())
        throw sdk::Error::misuse("maintenance row has " + std::to_string(op.row.size()) + " cells, table " +
                                 schema.table_name + " has " + std::to_string(schema.columns.size()) + " columns");
      Packed row = pack_row(op.row);
      Packed old = txn_->find(order.at(cells_of(row).data()));
      if (old && sdk::identical(cells_of(old), cells_of(row))) continue;  // value-identical: no write
      txn_->write(row, row);
      if (old) sink.updated(cells_of(old), cells_of(row)); else sink.inserted(cells_of(row));
    } else {
      if (op.row.size() != order.size())
        throw sdk::Error::misuse("maintenance key has " + std::to_string(op.row.size()) + " cells, primary key has " +
                                 std::to_string(order.size()));
      Packed old = txn_->find(order.at_key(op.row));
      if (!old) continue;
      txn_->write(old, nullptr);
      sink.deleted(cells_of(old));
    }
  }
}

void MemTable::replace_contents(sdk::RowSource& source) {
  const sdk::TableSchema& schema = store_->schema();
  const KeyOrder& order = store_->order();
  const size_t width = schema.columns.size();
  // Pulled without the lock: the host may compute the rows by reading other tables.
  RowSet fresh(SlotLess{&order});
  for (std::span<const qrs_value> cells; source.next(cells);) {
    if (cells.size() != width)
      throw sdk::Error::misuse("replacement row has " + std::to_string(cells.size()) + " cells, table " +
                               schema.table_name + " has " + std::to_string(width) + " columns");
    Packed row = pack_row(cells);
    auto [it, inserted] = fresh.insert(make_slot(order, row));
    if (!inserted) {
      KeyCells key;
      for (size_t m = 0; m < order.size(); ++m) key.push_back(cells[order.member(m).column]);
      throw sdk::Error::constraint("UNIQUE constraint failed: " + schema.table_name + " primary key " +
                                   sdk::describe_cells(key) + " appears twice in the replacement rows");
    }
  }
  {
    std::unique_lock lock(store_->mutex());
    store_->rows().swap(fresh);
    txn_->discard_pending();
  }
  // `fresh` now holds the old rows: released here, outside the lock.
}

void MemTable::alter_table(const sdk::SchemaChange& change, const sdk::TableSchema& new_schema) {
  if (change.kind == sdk::SchemaChangeKind::kRenameTable) {
    module_->rename(store_, change.name, new_schema.table_name);
    return;
  }
  std::unique_lock lock(store_->mutex());
  store_->alter(change, new_schema, *txn_);
}

}  // namespace quereus::mem
