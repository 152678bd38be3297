// modules/mem/table_store.h — the rows of one memory table and the transaction layer.
//
// TableStore holds the committed rows of one schema.table, shared by every connected
// instance. TableTxn is one instance's write state: outside a transaction writes go
// straight to the committed rows (autocommit); inside begin..commit they are buffered in
// an ordered `pending` map (key -> new row, or nullptr for a delete) that reads merge over
// the committed rows. Commit applies pending in key order: O(changes), not O(table).
// Savepoints record an undo log of pending-map changes, kept only while one is open.
//
// Isolation is read-committed plus read-your-own-writes: another instance sees this
// transaction's rows only after commit; two transactions writing one key resolve
// last-committer-wins (no write-write conflict detection).
#ifndef QUEREUS_MODULES_MEM_TABLE_STORE_H_
#define QUEREUS_MODULES_MEM_TABLE_STORE_H_

#include <cstdint>
#include <string>
#include <memory>
#include <shared_mutex>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "key_order.h"
#include "quereus/sdk.hpp"

namespace quereus::mem {

// B-trees (abseil) of slots: rows sit inline in wide nodes with their abbreviated keys,
// so a search touches a few cache lines per level instead of a red-black tree's pointer
// chain through every row it compares.
using RowSet = absl::btree_set<Slot, SlotLess>;
using PendingMap = absl::btree_map<Slot, Packed, SlotLess>;  // key row -> new row (nullptr: deleted)

class TableTxn;

// The key order a schema's primary key defines.
std::vector<KeyMember> key_members(const sdk::TableSchema& schema);

class TableStore {
 public:
  explicit TableStore(sdk::TableSchema schema);
  TableStore(const TableStore&) = delete;
  TableStore& operator=(const TableStore&) = delete;

  const sdk::TableSchema& schema() const { return schema_; }
  const KeyOrder& order() const { return order_; }
  // Guards rows() and the pending state of every TableTxn over this store.
  std::shared_mutex& mutex() const { return mu_; }
  RowSet& rows() { return rows_; }  // REQUIRES: mutex() held
  const RowSet& rows() const { return rows_; }

  // ALTER TABLE (alter.cc): rewrites the committed rows and the pending state of every
  // instance over this store to `new_schema` by `change`; `self` is the altering
  // instance, whose view (committed rows overlaid by its pending writes) decides which
  // rows are visible. All or nothing: throws sdk::Error leaving everything untouched.
  // REQUIRES: mutex() held exclusively.
  void alter(const sdk::SchemaChange& change, const sdk::TableSchema& new_schema, const TableTxn& self);
  // A rename: only the schema's table name changes. REQUIRES: mutex() held exclusively.
  void rename(std::string new_name) { schema_.table_name = std::move(new_name); }

 private:
  friend class TableTxn;
  sdk::TableSchema schema_;
  KeyOrder order_;
  mutable std::shared_mutex mu_;
  RowSet rows_;
  std::vector<TableTxn*> txns_;  // every instance's transaction state (guarded by mu_)
};

// REQUIRES for every method: store().mutex() held (exclusively for the mutating ones).
class TableTxn {
 public:
  // Registers with the store, so ALTER TABLE rewrites this state too.
  explicit TableTxn(std::shared_ptr<TableStore> store);
  ~TableTxn();
  TableTxn(const TableTxn&) = delete;
  TableTxn& operator=(const TableTxn&) = delete;

  TableStore& store() const { return *store_; }
  bool active() const { return active_; }
  const PendingMap& pending() const { return pending_; }

  // The row at `probe` (an exact probe) as this instance sees it, or nullptr.
  Packed find(const Probe& probe) const;
  // The first row in key order whose leading key members equal `key` (1..order().size()
  // cells in key order) as this instance sees it, or nullptr. Remembers where the prefix
  // starts in the pending overlay: the next insert_if_absent starts there when nothing
  // was written in between (a UNIQUE probe followed by the entry's insert).
  Packed first_with_prefix(std::span<const qrs_value> key);
  // Sets the row at key(key_row) to `row` (nullptr deletes).
  void write(const Packed& key_row, Packed row);
  // Inserts `row` unless a row with its key is visible to this instance; then returns
  // that row and writes nothing. The same as find + write, with one search.
  Packed insert_if_absent(Packed row);

  // Drops every pending write (a replace_contents swapped the committed rows under them);
  // an open transaction and its savepoints stay open, now with nothing to undo.
  void discard_pending();

  void begin();
  void commit();
  void rollback();
  void savepoint(uint32_t depth);
  void release_savepoint(uint32_t depth);
  void rollback_to_savepoint(uint32_t depth);

 private:
  struct Undo {
    Slot key;
    bool existed;  // was there a pending entry before the write
    Packed prev;   // its value
  };
  friend class TableStore;  // ALTER TABLE rewrites pending_ and undo_
  void check_depth(uint32_t depth) const;
  void undo_to(size_t mark);

  std::shared_ptr<TableStore> store_;
  bool active_ = false;
  PendingMap pending_;
  std::vector<Undo> undo_;      // recorded only while a savepoint is open
  // A pending_ position left by first_with_prefix; valid only until pending_ changes
  // (every mutation clears hint_valid_).
  PendingMap::iterator hint_;
  bool hint_valid_ = false;
  std::vector<size_t> marks_;   // marks_[d - 1]: undo_ size when savepoint d was taken
};

}  // namespace quereus::mem

#endif  // QUEREUS_MODULES_MEM_TABLE_STORE_H_
