// modules/mem/table_store.cc — committed rows and the per-instance transaction layer.
#include "table_store.h"

#include <mutex>
#include <string>

namespace quereus::mem {

std::vector<KeyMember> key_members(const sdk::TableSchema& schema) {
  std::vector<KeyMember> out;
  for (const sdk::KeyColumn& k : schema.primary_key) {
    if (k.column >= schema.columns.size()) throw sdk::Error::schema("primary key names a missing column");
    qrs_logical_type t = schema.columns[k.column].logical_type;
    out.push_back(KeyMember{k.column, k.desc, k.collation, t == QRS_LT_INTEGER || t == QRS_LT_REAL});
  }
  return out;
}

TableStore::TableStore(sdk::TableSchema schema)
    : schema_(std::move(schema)), order_(key_members(schema_)), rows_(SlotLess{&order_}) {}

TableTxn::TableTxn(std::shared_ptr<TableStore> store) : store_(std::move(store)), pending_(SlotLess{&store_->order()}) {
  std::unique_lock lock(store_->mutex());
  store_->txns_.push_back(this);
}

TableTxn::~TableTxn() {
  std::unique_lock lock(store_->mutex());
  std::erase(store_->txns_, this);
}

Packed TableTxn::find(const Probe& probe) const {
  const KeyOrder& order = store_->order();
  SeekKey key = make_seek(order, probe);
  // Probes past the last key (appends in key order, i.e. bulk loads) need no search.
  if (!pending_.empty() && compare_slot(order, pending_.rbegin()->first, key) >= 0) {
    if (auto p = pending_.find(key); p != pending_.end()) return p->second;
  }
  const RowSet& rows = store_->rows();
  if (rows.empty() || compare_slot(order, *rows.rbegin(), key) < 0) return nullptr;
  auto c = rows.find(key);
  return c == rows.end() ? nullptr : c->row;
}

Packed TableTxn::first_with_prefix(std::span<const qrs_value> key) {
  const KeyOrder& order = store_->order();
  if (key.size() == order.size()) return find(order.at_key(key));
  // The committed rows merged with the pending overlay from the prefix's first position,
  // as a cursor's walk does: pending wins on equal keys, and a pending delete hides its row.
  Probe from = order.at_key(key, Probe::kBefore), prefix = order.at_key(key);
  SeekKey k = make_seek(order, from);
  const RowSet& rows = store_->rows();
  auto c = rows.lower_bound(k);
  auto p = pending_.lower_bound(k);
  hint_ = p;
  hint_valid_ = true;
  SlotLess less{&order};
  for (;;) {
    bool has_c = c != rows.end(), has_p = p != pending_.end();
    if (!has_c && !has_p) return nullptr;
    int cmp = !has_p ? -1 : !has_c ? 1 : (less(*c, p->first) ? -1 : less(p->first, *c) ? 1 : 0);
    const Slot& slot = cmp < 0 ? *c : p->first;
    // Past the prefix? Equal first values have equal abbreviations, so a different one
    // answers without touching the row (the common miss of a UNIQUE probe).
    if (k.has_abbr && slot.abbr != k.abbr) return nullptr;
    if (order.compare(slot.cells(), prefix) != 0) return nullptr;
    const Packed& row = cmp < 0 ? c->row : p->second;
    if (row) return row;
    if (cmp <= 0) ++c;
    if (cmp >= 0) ++p;
  }
}

void TableTxn::write(const Packed& key_row, Packed row) {
  hint_valid_ = false;
  const KeyOrder& order = store_->order();
  Slot key = make_slot(order, key_row);
  SlotLess less{&order};
  if (!active_) {  // autocommit
    RowSet& rows = store_->rows();
    auto it = rows.lower_bound(key);
    if (it != rows.end() && !less(key, *it)) it = rows.erase(it);
    if (row) rows.insert(it, Slot{key.abbr, std::move(row)});
    return;
  }
  auto it = pending_.empty() || less(pending_.rbegin()->first, key) ? pending_.end() : pending_.lower_bound(key);
  if (it == pending_.end() || less(key, it->first)) {
    if (!marks_.empty()) undo_.push_back(Undo{key, false, nullptr});
    pending_.emplace_hint(it, std::move(key), std::move(row));
  } else {
    if (!marks_.empty()) undo_.push_back(Undo{it->first, true, it->second});
    it->second = std::move(row);
  }
}

Packed TableTxn::insert_if_absent(Packed row) {
  bool hinted = hint_valid_;
  hint_valid_ = false;
  const KeyOrder& order = store_->order();
  Slot key = make_slot(order, row);
  SlotLess less{&order};
  RowSet& rows = store_->rows();
  if (!active_) {  // autocommit: one search (none for an append) for the check and the insert
    auto it = rows.empty() || less(*rows.rbegin(), key) ? rows.end() : rows.lower_bound(key);
    if (it != rows.end() && !less(key, *it)) return it->row;
    rows.insert(it, Slot{key.abbr, std::move(row)});
    return nullptr;
  }
  // One search of the pending overlay serves the check and the insert (none when the
  // last prefix probe left the key's position); the committed rows are searched only
  // when the overlay says nothing about the key.
  PendingMap::iterator it;
  if (hinted) {
    // The hint is the key's lower bound when the key falls between it and its predecessor.
    it = hint_;
    hinted = (it == pending_.end() || !less(it->first, key)) && (it == pending_.begin() || less(std::prev(it)->first, key));
  }
  if (!hinted)
    it = pending_.empty() || less(pending_.rbegin()->first, key) ? pending_.end() : pending_.lower_bound(key);
  if (it != pending_.end() && !less(key, it->first)) {
    if (it->second) return it->second;  // inserted or updated in this transaction
    // Deleted in this transaction: the key is free again.
    if (!marks_.empty()) undo_.push_back(Undo{it->first, true, it->second});
    it->second = std::move(row);
    return nullptr;
  }
  if (!rows.empty() && !less(*rows.rbegin(), key)) {
    auto c = rows.find(key);
    if (c != rows.end()) return c->row;
  }
  if (!marks_.empty()) undo_.push_back(Undo{key, false, nullptr});
  pending_.emplace_hint(it, std::move(key), std::move(row));
  return nullptr;
}

void TableTxn::discard_pending() {
  hint_valid_ = false;
  pending_.clear();
  undo_.clear();
  for (size_t& m : marks_) m = 0;
}

void TableTxn::begin() {
  if (active_) throw sdk::Error::misuse("a transaction is already open on " + store_->schema().table_name);
  active_ = true;
}

void TableTxn::commit() {
  RowSet& rows = store_->rows();
  SlotLess less{&store_->order()};
  for (auto& [key, row] : pending_) {
    // Fast path for appends in key order (bulk loads): no search.
    if (row && (rows.empty() || less(*rows.rbegin(), key))) {
      rows.emplace_hint(rows.end(), Slot{key.abbr, std::move(row)});
      continue;
    }
    auto it = rows.find(key);
    if (it != rows.end()) it = rows.erase(it);
    if (row) rows.emplace_hint(it, Slot{key.abbr, std::move(row)});
  }
  rollback();  // clears the transaction state
}

void TableTxn::rollback() {
  hint_valid_ = false;
  pending_.clear();
  undo_.clear();
  marks_.clear();
  active_ = false;
}

void TableTxn::check_depth(uint32_t depth) const {
  if (depth == 0 || depth > marks_.size())
    throw sdk::Error::misuse("no savepoint at depth " + std::to_string(depth) + " (" +
                             std::to_string(marks_.size()) + " open)");
}

void TableTxn::savepoint(uint32_t depth) {
  if (depth == 0) throw sdk::Error::misuse("savepoint depth starts at 1");
  active_ = true;  // a savepoint outside begin opens the transaction
  marks_.resize(depth - 1 < marks_.size() ? depth - 1 : marks_.size());
  marks_.resize(depth, undo_.size());  // intermediate depths (a late registration) mark here too
}

void TableTxn::release_savepoint(uint32_t depth) {
  check_depth(depth);
  marks_.resize(depth - 1);
  if (marks_.empty()) undo_.clear();  // nothing can roll back into the log any more
}

void TableTxn::rollback_to_savepoint(uint32_t depth) {
  check_depth(depth);
  undo_to(marks_[depth - 1]);
  marks_.resize(depth);  // savepoint `depth` stays open
}

void TableTxn::undo_to(size_t mark) {
  hint_valid_ = false;
  while (undo_.size() > mark) {
    Undo& u = undo_.back();
    if (u.existed) {
      pending_[u.key] = std::move(u.prev);
    } else {
      pending_.erase(u.key);
    }
    undo_.pop_back();
  }
}

}  // namespace quereus::mem
