// modules/sync-store/column_lists.h — a table's column-name lists, by number (format 6).
//
// A row's versions name its columns. Written out in every row, the names cost 1 + their
// length a column a row; instead, the capture names a list of the table's lowered column
// names by a small number, stored once:
//
//   28 ‖ table id (8) ‖ k (4, big-endian) -> <varint n> <prefixed name> × n
//
// Entries never change once written (a rename rewrites the rows it touches, which then
// spell their names; a dropped column's versions still read through the list that names
// them), so a list read once is good for the replica's life. Lists are not collected. The
// capture writes a list's entry in the commit's own batch, and again in every later batch
// until one has landed, so a row never lands without the entry it names. Entries go with
// their table (Replica::table_event). Used only outside schema-change scopes, whose batches
// may still roll back after the commit's (number() returns 0 there).
#ifndef QUEREUS_MODULES_SYNC_STORE_COLUMN_LISTS_H_
#define QUEREUS_MODULES_SYNC_STORE_COLUMN_LISTS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "../store/kv.h"
#include "../store/store_db.h"
#include "row_versions.h"

namespace quereus::sync {

class ColumnLists : public ListSource {
 public:
  static constexpr char kSpace = 0x28;

  explicit ColumnLists(store::StoreDb& db) : db_(db) {}

  // List `k` of `table`, read from the store the first time. Throws QRS_CORRUPT when the
  // store has none (a record names a list that was never written).
  List get(uint64_t table, uint32_t k) override;
  // The capture's: the number of the list `names` (lowered) of `table`. A list the store
  // does not hold yet gets the next number, and its entry goes into `out` — again with
  // every batch until one lands (landed). 0: do not name a list (inside a schema-change
  // scope, or a list too long to be worth it).
  uint32_t number(uint64_t table, std::span<const std::string> names, store::KvBatch& out);
  // The batch of the last number() calls landed (or failed: entries it alone carried are
  // forgotten, and written again when next needed).
  void landed(bool ok);
  // Drops what is known of `table`'s lists (read again when next needed).
  void forget(uint64_t table);
  // `table` is dropped: its entries are deleted in `out`.
  void drop(uint64_t table, store::KvBatch& out);
  static std::string key(uint64_t table, uint32_t k);

 private:
  struct Entry {
    List names;
    bool stored = false;  // known to be in the store
  };
  struct Table {
    bool loaded = false;
    std::map<uint32_t, Entry> lists;
    uint32_t current = 0;  // the capture's last list
  };
  Table& load(uint64_t table);  // REQUIRES: mu_

  store::StoreDb& db_;
  std::mutex mu_;
  std::unordered_map<uint64_t, Table> tables_;
  std::vector<std::pair<uint64_t, uint32_t>> unlanded_;
};

}  // namespace quereus::sync

#endif  // QUEREUS_MODULES_SYNC_STORE_COLUMN_LISTS_H_
