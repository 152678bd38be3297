// modules/mem/alter.cc — ALTER TABLE over a memory table (ABI 1.2 alter_table).
//
// Every arm runs in three phases under the store's exclusive lock:
//
//   1. transform: each stored row — committed rows, every instance's pending
//   rows and
//      deletion keys, the savepoint undo logs — is rewritten into the new
//      layout into fresh vectors. Nothing shared is touched, so a refusal (a
//      value that does not convert, a NULL a NOT NULL column cannot take)
//      leaves the table exactly as it was. Only rows the altering transaction
//      can SEE may refuse: a committed row it deleted keeps its old cell when
//      that cell does not convert.
//   2. re-key check (a new key order: SET COLLATE or SET NOT NULL on a key
//   member, ALTER
//      PRIMARY KEY): two visible rows on one new key are CONSTRAINT; a
//      collision confined to rows only a rollback could restore (committed rows
//      the transaction deleted, or two of its deletion keys) is BUSY.
//   3. swap: the schema, the key order and every tree are rebuilt from the
//   vectors.
#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "quereus/rekey.hpp"
#include "table_store.h"

namespace quereus::mem {
namespace {

using Cells = absl::InlinedVector<qrs_value, 8>;
using Transform = std::function<Packed(const Packed& row, bool visible)>;

bool is_key_member(const sdk::TableSchema& schema, uint32_t column) {
  for (const sdk::KeyColumn& k : schema.primary_key)
    if (k.column == column) return true;
  return false;
}

Packed with_cell(std::span<const qrs_value> cells, uint32_t column, const qrs_value& v) {
  Cells out(cells.begin(), cells.end());
  out[column] = v;
  return pack_row(out);
}

// The row rewrite of one arm; empty when the arm rewrites no row.
Transform transform_of(const sdk::SchemaChange& ch, const sdk::TableSchema& old_schema, const sdk::TableSchema& ns) {
  using K = sdk::SchemaChangeKind;
  const uint32_t col = ch.column;
  switch (ch.kind) {
    case K::kAddColumn:
      if (col >= ns.columns.size()) throw sdk::Error::misuse("ADD COLUMN at a column the new schema lacks");
      return [&ch, &ns, col](const Packed& row, bool visible) {
        std::span<const qrs_value> cells = cells_of(row);
        qrs_value v = ch.fill(cells);
        if (v.type == QRS_TYPE_NULL && ns.columns[col].not_null && visible)
          throw sdk::Error::constraint("NOT NULL constraint failed: " + ns.table_name + "." + ns.columns[col].name +
                                       " (the table has rows and the new column has no non-NULL default)");
        Cells out(cells.begin(), cells.end());
        out.insert(out.begin() + col, v);
        return pack_row(out);
      };
    case K::kDropColumn:
      if (col >= old_schema.columns.size()) throw sdk::Error::misuse("DROP COLUMN of a missing column");
      return [col](const Packed& row, bool) {
        std::span<const qrs_value> cells = cells_of(row);
        Cells out(cells.begin(), cells.end());
        out.erase(out.begin() + col);
        return pack_row(out);
      };
    case K::kSetDataType:
      return [&ch, col](const Packed& row, bool visible) {
        std::span<const qrs_value> cells = cells_of(row);
        if (cells[col].type == QRS_TYPE_NULL) return row;
        qrs_value v;
        try {
          v = ch.convert(cells[col]);
        } catch (const sdk::Error&) {
          if (visible) throw;
          return row;  // a deleted row's value does not block the retype
        }
        return with_cell(cells, col, v);
      };
    case K::kSetNotNull:
      return [&ch, &ns, col](const Packed& row, bool visible) {
        std::span<const qrs_value> cells = cells_of(row);
        if (cells[col].type != QRS_TYPE_NULL) return row;
        qrs_value v = ch.fill(cells);
        if (v.type == QRS_TYPE_NULL) {
          if (!visible) return row;
          throw sdk::Error::constraint("Cannot SET NOT NULL on column '" + ns.columns[col].name + "' of '" +
                                       ns.table_name + "': it contains NULL values and has no DEFAULT to backfill");
        }
        return with_cell(cells, col, v);
      };
    default:
      return {};
  }
}

// Sign-free equality of two rows' keys under `order`.
bool same_key(const KeyOrder& order, const Packed& a, const Packed& b) {
  return order.compare(cells_of(a).data(), cells_of(b).data()) == 0;
}

// Whether two of `rows` share a key under `order`.
bool has_duplicate(const KeyOrder& order, std::vector<Packed> rows) {
  std::sort(rows.begin(), rows.end(), [&](const Packed& a, const Packed& b) {
    return order.compare(cells_of(a).data(), cells_of(b).data()) < 0;
  });
  for (size_t i = 1; i < rows.size(); ++i)
    if (same_key(order, rows[i - 1], rows[i])) return true;
  return false;
}

struct NewPending {
  std::vector<std::pair<Packed, Packed>> entries;  // key row -> row (nullptr: deleted)
  struct Undo {
    Packed key;
    bool existed;
    Packed prev;
  };
  std::vector<Undo> undo;
};

}  // namespace

void TableStore::alter(const sdk::SchemaChange& ch, const sdk::TableSchema& ns, const TableTxn& self) {
  using K = sdk::SchemaChangeKind;
  if (ns.columns.empty()) throw sdk::Error::misuse("a table needs at least one column");
  Transform f = transform_of(ch, schema_, ns);
  bool rekey = ch.kind == K::kAlterPrimaryKey ||
               ((ch.kind == K::kSetCollation || ch.kind == K::kSetNotNull) && is_key_member(schema_, ch.column));
  const std::string& table = ns.table_name;
  // The altering transaction's own pending rows are re-keyed below (memory-table.md,
  // "Schema Evolution"); another transaction's cannot be judged from here.
  if (ch.kind == K::kAlterPrimaryKey) {
    for (const TableTxn* t : txns_)
      if (t != &self && !t->pending_.empty())
        throw sdk::Error::busy("Cannot change the primary key of '" + table +
                               "' while another transaction has uncommitted changes "
                               "to it. Commit/rollback and retry");
  }
  if (!f && !rekey) {  // schema-only: no row and no key moves
    schema_ = ns;
    order_ = KeyOrder(key_members(schema_));
    return;
  }
  auto apply = [&](const Packed& row, bool visible) { return f ? f(row, visible) : row; };

  // 1. Transform into fresh vectors.
  std::vector<Packed> committed;
  std::vector<bool> committed_visible;
  committed.reserve(rows_.size());
  committed_visible.reserve(rows_.size());
  for (const Slot& s : rows_) {
    bool visible = self.pending_.find(s) == self.pending_.end();
    committed.push_back(apply(s.row, visible));
    committed_visible.push_back(visible);
  }
  std::vector<NewPending> pendings(txns_.size());
  for (size_t t = 0; t < txns_.size(); ++t) {
    const TableTxn& txn = *txns_[t];
    NewPending& np = pendings[t];
    for (const auto& [key, row] : txn.pending_) {
      if (row) {
        Packed nr = apply(row, true);
        np.entries.emplace_back(nr,
                                nr);  // the key of a live entry is its row's key
      } else {
        np.entries.emplace_back(apply(key.row, false), nullptr);
      }
    }
    for (const TableTxn::Undo& u : txn.undo_)
      np.undo.push_back({apply(u.key.row, false), u.existed, u.prev ? apply(u.prev, false) : nullptr});
  }

  // 2. Re-key: two rows on one new key.
  KeyOrder new_order(key_members(ns));
  if (rekey) {
    std::vector<Packed> visible;
    for (size_t i = 0; i < committed.size(); ++i)
      if (committed_visible[i]) visible.push_back(committed[i]);
    for (size_t t = 0; t < txns_.size(); ++t)
      if (txns_[t] == &self)
        for (const auto& [key, row] : pendings[t].entries)
          if (row) visible.push_back(row);
    if (has_duplicate(new_order, std::move(visible)))
      throw sdk::rekey_collision(table);
    if (has_duplicate(new_order, committed))
      throw sdk::rekey_busy(table);
    // Pending entries meeting on one new key (quereus/rekey.hpp).
    auto less = [&](const Packed& x, const Packed& y) {
      return new_order.compare(cells_of(x).data(), cells_of(y).data()) < 0;
    };
    for (NewPending& np : pendings) sdk::merge_rekeyed_pending(np.entries, less, table);
  }

  // 3. Swap. Nothing below throws except allocation.
  schema_ = ns;
  order_ = std::move(new_order);
  RowSet rows(SlotLess{&order_});
  for (Packed& r : committed) rows.insert(make_slot(order_, std::move(r)));
  rows_ = std::move(rows);
  for (size_t t = 0; t < txns_.size(); ++t) {
    TableTxn& txn = *txns_[t];
    PendingMap pending(SlotLess{&order_});
    for (auto& [key, row] : pendings[t].entries) pending.insert_or_assign(make_slot(order_, key), std::move(row));
    txn.pending_ = std::move(pending);
    txn.hint_valid_ = false;
    txn.undo_.clear();
    for (auto& u : pendings[t].undo)
      txn.undo_.push_back(TableTxn::Undo{make_slot(order_, std::move(u.key)), u.existed, std::move(u.prev)});
  }
}

}  // namespace quereus::mem
