// modules/store/store_alter.cc — ALTER TABLE over a store table (ABI 1.2 alter_table).
//
// Schema-only arms (renames, DROP NOT NULL, defaults, constraints, SET COLLATE on a
// non-key column) only swap the table's schema. The others rewrite every stored row:
//
//   1. read and transform: each committed row is decoded, rewritten into the new layout
//      (ADD COLUMN's fill, DROP COLUMN, SET DATA TYPE's convert, SET NOT NULL's backfill)
//      and re-keyed under the new key definition, into memory. A refusal (a value that
//      does not convert, a NULL the column cannot take) throws here: nothing was written.
//   2. re-key check: two rows on one new key are CONSTRAINT, nothing written.
//   3. one synced KvBatch deletes the keys that moved and writes every rewritten row.
//
// The pending writes of open transactions (rows, deletion keys, savepoint undo logs) are
// rewritten too, in memory, after the batch landed. Only rows the altering transaction can
// see may refuse the arm; a re-key collision confined to rows it deleted is BUSY; ALTER
// PRIMARY KEY with uncommitted writes is BUSY (as mem).
#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "quereus/rekey.hpp"
#include "row_codec.h"
#include "store_table.h"

namespace quereus::store {
namespace {

using Cells = std::vector<qrs_value>;
// Rewrites `cells` in place; `visible`: the altering transaction sees the row (only such
// rows may refuse the arm).
using Transform = std::function<void(Cells& cells, bool visible)>;

bool is_key_member(const sdk::TableSchema& schema, uint32_t column) {
  for (const sdk::KeyColumn& k : schema.primary_key)
    if (k.column == column) return true;
  return false;
}

// The row rewrite of one arm; empty when the arm rewrites no row.
Transform transform_of(const sdk::SchemaChange& ch, const sdk::TableSchema& old_schema, const sdk::TableSchema& ns) {
  using K = sdk::SchemaChangeKind;
  const uint32_t col = ch.column;
  switch (ch.kind) {
    case K::kAddColumn:
      if (col >= ns.columns.size()) throw sdk::Error::misuse("ADD COLUMN at a column the new schema lacks");
      return [&ch, &ns, col](Cells& cells, bool visible) {
        qrs_value v = ch.fill(cells);
        if (v.type == QRS_TYPE_NULL && ns.columns[col].not_null && visible)
          throw sdk::Error::constraint("NOT NULL constraint failed: " + ns.table_name + "." + ns.columns[col].name +
                                       " (the table has rows and the new column has no non-NULL default)");
        cells.insert(cells.begin() + col, v);
      };
    case K::kDropColumn:
      if (col >= old_schema.columns.size()) throw sdk::Error::misuse("DROP COLUMN of a missing column");
      return [col](Cells& cells, bool) { cells.erase(cells.begin() + col); };
    case K::kSetDataType:
      if (col >= old_schema.columns.size()) throw sdk::Error::misuse("SET DATA TYPE of a missing column");
      return [&ch, col](Cells& cells, bool visible) {
        if (cells[col].type == QRS_TYPE_NULL) return;
        try {
          cells[col] = ch.convert(cells[col]);
        } catch (const sdk::Error&) {
          if (visible) throw;  // a deleted row's value does not block the retype
        }
      };
    case K::kSetNotNull:
      if (col >= old_schema.columns.size()) throw sdk::Error::misuse("SET NOT NULL of a missing column");
      return [&ch, &ns, col](Cells& cells, bool visible) {
        if (cells[col].type != QRS_TYPE_NULL) return;
        qrs_value v = ch.fill(cells);
        if (v.type == QRS_TYPE_NULL) {
          if (!visible) return;
          throw sdk::Error::constraint("Cannot SET NOT NULL on column '" + ns.columns[col].name + "' of '" +
                                       ns.table_name + "': it contains NULL values and has no DEFAULT to backfill");
        }
        cells[col] = v;
      };
    default:
      return {};
  }
}

struct Rewritten {
  std::string key;  // full key under the new definition
  std::string row;  // the row in the new layout
};

// A transaction's pending state in the new layout.
struct NewTxn {
  std::vector<std::pair<std::string, std::optional<std::string>>> entries;  // new key -> row (nullopt: deleted)
  struct Undo {
    std::string key;
    bool existed;
    std::optional<std::string> prev;  // nullopt: the slot was a deletion
  };
  std::vector<Undo> undo;
};

}  // namespace

void alter_stored_table(StoreDb& db, TableState& st, const sdk::SchemaChange& ch, const sdk::TableSchema& ns) {
  using K = sdk::SchemaChangeKind;
  if (ns.columns.empty()) throw sdk::Error::misuse("a table needs at least one column");
  KeyCodec codec = KeyCodec::of(ns);  // refuses an unencodable key collation up front
  Transform f = transform_of(ch, st.schema, ns);
  bool rekey = ch.kind == K::kAlterPrimaryKey ||
               ((ch.kind == K::kSetCollation || ch.kind == K::kSetNotNull || ch.kind == K::kSetDataType) &&
                is_key_member(st.schema, ch.column));
  const std::string& table = ns.table_name;
  if (!f && !rekey) {  // schema-only: no stored byte changes
    if (auto live = db.live_state(st.id)) db.touch(live);
    st.schema = ns;
    st.codec = std::move(codec);
    return;
  }
  std::vector<Txn*> txns = db.txns_of(st.id);
  // The altering transaction: the instance with pending writes (the host writes and alters
  // through one instance per table); its view decides which committed rows are visible,
  // and its pending rows are re-keyed below. Pending writes of a second one cannot be
  // judged from here.
  const Txn* self = nullptr;
  for (const Txn* t : txns) {
    if (t->pending.empty()) continue;
    if (self && ch.kind == K::kAlterPrimaryKey)
      throw sdk::Error::busy("Cannot change the primary key of '" + table +
                             "' while another transaction has uncommitted changes to it. Commit/rollback and retry");
    self = t;
  }

  Cells cells;
  auto rewrite = [&](std::string_view stored, bool visible) {
    decode_row(stored, cells, table);
    if (f) f(cells, visible);
    if (cells.size() != ns.columns.size())
      throw sdk::Error::internal("ALTER produced " + std::to_string(cells.size()) + " cells for " +
                                 std::to_string(ns.columns.size()) + " columns");
    Rewritten r;
    r.key = st.prefix;
    codec.encode_row(r.key, cells);
    r.row = encode_row(cells);  // packed now: fill / convert views die at the next call
    // An observer's sidecar (a replica's versions) stays with its row.
    if (const std::string_view sidecar = row_sidecar(stored, table); !sidecar.empty()) {
      std::string wrapped;
      wrap_row(wrapped, sidecar, r.row);
      r.row = std::move(wrapped);
    }
    return r;
  };

  // 1. Transform the committed rows, then every transaction's pending state, into memory.
  struct Moved {
    std::string old_key;
    Rewritten now;
    bool visible;
  };
  std::vector<Moved> rows;
  std::map<std::string, std::string> new_key_of;  // old full key -> new full key
  {
    auto it = db.kv().iterate(KvRange{st.prefix, prefix_end(st.prefix)}, false);
    for (; it->valid(); it->next()) {
      std::string old_key(it->key());
      bool visible = !self || self->pending.find(old_key) == nullptr;
      std::string stored(it->value());
      Moved m{old_key, rewrite(stored, visible), visible};
      new_key_of[old_key] = m.now.key;
      rows.push_back(std::move(m));
    }
    it->check();
  }
  std::vector<NewTxn> news(txns.size());
  for (size_t i = 0; i < txns.size(); ++i) {
    const Txn& t = *txns[i];
    for (const auto& [key_view, slot] : t.pending.map()) {
      std::string key(key_view);
      if (slot.live()) {
        Rewritten r = rewrite(slot.row, true);
        new_key_of.emplace(key, r.key);
        news[i].entries.emplace_back(r.key, std::move(r.row));
      } else if (auto k = new_key_of.find(key); k != new_key_of.end()) {
        news[i].entries.emplace_back(k->second, std::nullopt);
      } else if (auto g = t.ghosts.find(key_view); rekey && g != t.ghosts.end() && g->second.live()) {
        // A row this transaction inserted and deleted: its deletion key moves with the
        // re-key, so two such rows meeting on one new key are refused (BUSY), as in mem.
        // A deleted row the arm cannot convert leaves no trace (it is gone either way).
        try {
          news[i].entries.emplace_back(rewrite(g->second.row, false).key, std::nullopt);
        } catch (const sdk::Error&) {
        }
      }  // else: a deletion of a row nothing stores — nothing to keep
    }
  }
  for (size_t i = 0; i < txns.size(); ++i) {
    for (const Txn::Undo& u : txns[i]->undo) {
      std::optional<std::string> prev;
      std::string key;
      if (u.existed && u.prev.live()) {
        Rewritten r = rewrite(u.prev.row, false);
        key = r.key;
        prev = std::move(r.row);
      }
      if (auto k = new_key_of.find(std::string(u.key)); k != new_key_of.end()) key = k->second;
      if (key.empty()) continue;  // a key no row of the new layout has: nothing to restore
      news[i].undo.push_back(NewTxn::Undo{key, u.existed, std::move(prev)});
    }
  }

  // 2. Re-key checks.
  if (rekey) {
    auto has_duplicate = [](std::vector<const std::string*> keys) {
      std::sort(keys.begin(), keys.end(), [](const std::string* a, const std::string* b) { return *a < *b; });
      for (size_t i = 1; i < keys.size(); ++i)
        if (*keys[i - 1] == *keys[i]) return true;
      return false;
    };
    std::vector<const std::string*> visible, all;
    for (const Moved& m : rows) {
      all.push_back(&m.now.key);
      if (m.visible) visible.push_back(&m.now.key);
    }
    for (size_t i = 0; i < txns.size(); ++i)
      if (txns[i] == self)
        for (const auto& [key, row] : news[i].entries)
          if (row) visible.push_back(&key);
    if (has_duplicate(visible))
      throw sdk::rekey_collision(table);
    if (has_duplicate(all))
      throw sdk::rekey_busy(table);
    for (NewTxn& nt : news)
      sdk::merge_rekeyed_pending(nt.entries, [](const std::string& x, const std::string& y) { return x < y; }, table);
  }

  // 3. One atomic batch for the committed rows, then the pending state swaps in memory.
  KvBatch b;
  for (const Moved& m : rows)
    if (m.old_key != m.now.key) b.del(m.old_key);
  if (auto live = db.live_state(st.id)) db.touch(live);
  for (Txn* t : txns)
    if (!t->pending.empty() || !t->undo.empty()) db.touch_txn(t);
  for (Moved& m : rows) b.put(m.now.key, m.now.row);
  if (rekey && db.observer()) {
    std::vector<CommitObserver::KeyMove> moves;
    for (const Moved& m : rows)
      if (m.old_key != m.now.key) moves.push_back({m.old_key, m.now.key, m.now.row});
    // A deleted row the observer kept: matched by name into the old layout, then moved by the
    // same transformation as a stored row.
    CommitObserver::Rekey rekey_row = [&](const CommitObserver::NamedRow& named) -> std::optional<CommitObserver::MovedKey> {
      std::vector<sdk::Value> values(st.schema.columns.size());
      for (size_t i = 0; i < st.schema.columns.size(); ++i) {
        std::string lower = st.schema.columns[i].name;
        for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        for (const auto& [name, v] : named)
          if (name == lower) values[i] = v;
      }
      std::vector<qrs_value> old_cells;
      for (const sdk::Value& v : values) old_cells.push_back(v.to_c());
      try {
        const std::string old_row = encode_row(old_cells);
        Rewritten r = rewrite(old_row, false);
        std::vector<qrs_value> now, pk;
        decode_row(r.row, now, table);
        for (const auto& k : ns.primary_key) pk.push_back(now.at(k.column));
        return CommitObserver::MovedKey{std::move(r.key), encode_row(pk)};
      } catch (const sdk::Error&) {
        return std::nullopt;  // the ALTER could not convert it
      }
    };
    db.observer()->rekeyed(st, moves, rekey_row, b);
  }
  db.kv().write(b, true);
  st.bound = TableState::Bound::kUnknown;  // the keys moved
  st.schema = ns;
  st.codec = std::move(codec);
  for (size_t i = 0; i < txns.size(); ++i) {
    Txn& t = *txns[i];
    // The ghosts in the new layout, read before the arena they live in is cleared.
    std::vector<Rewritten> ghosts;
    for (const auto& [key, slot] : t.ghosts) {
      if (!slot.live()) continue;
      try {
        ghosts.push_back(rewrite(slot.row, false));
      } catch (const sdk::Error&) {  // unconvertible: forgotten, as above
      }
    }
    t.pending.clear();
    t.ghosts.clear();
    t.undo.clear();
    PendingSlot unused;
    bool had;
    for (const auto& [key, row] : news[i].entries) t.pending.put(key, row ? *row : std::string_view(), !row, &unused, &had);
    for (const Rewritten& g : ghosts) {
      std::string_view k = t.pending.intern(g.key);
      t.ghosts.insert_or_assign(k, t.pending.store_row(g.row));
    }
    for (const NewTxn::Undo& u : news[i].undo) {
      PendingSlot prev;
      if (u.prev) prev = t.pending.store_row(*u.prev);
      t.undo.push_back(Txn::Undo{t.pending.intern(u.key), u.existed, prev});
    }
  }
}

}  // namespace quereus::store
