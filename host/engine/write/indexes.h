// Secondary indexes and UNIQUE constraints, kept by the engine in companion tables.
//
// Every index of a table (a CREATE [UNIQUE] INDEX, or the structure enforcing a UNIQUE
// constraint) is stored as a companion table of the same module whose columns are the
// index columns followed by the base table's primary-key columns, and whose primary key
// is all of them (index columns in the index's direction and collation). One entry per
// base row that is a member of the index (partial indexes: the predicate holds). So any
// module gets ordered, transactional — and, in a persistent module, durable — indexes
// through the slots it already implements; see docs/design-writes.md §2.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "transaction/write_context.h"
#include "planner/scalar_expr.h"
#include "catalog/module.h"
#include "runtime/table_reads.h"

namespace quereus {

struct ExecContext;

// The companion table's name and schema for `index` of `base`.
std::string companion_name(const TableSchema& base, const IndexSchema& index);
TableSchema companion_schema(const TableSchema& base, const IndexSchema& index);

// The entry of `row` in `index` (index columns ‖ primary-key columns).
Row index_entry(const TableSchema& base, const IndexSchema& index, const Row& row);

// Write-side state of one table's indexes, bound once per index set.
struct IndexRuntime {
  struct Index {
    ScalarPtr where;  // the bound partial predicate over the base row; null: every row
    PlanResult probe_plan;  // the companion's plan for EQ on every index column
  };
  std::vector<Index> indexes;
};

// The index runtime of `table`, bound on first use (and after its indexes changed).
const IndexRuntime& index_runtime(WriteContext& db, TableEntry& table);



// Maintains the indexes of one table for one writer (DmlWriter).
class IndexWriter {
 public:
  // Joins the companions to the current transaction unless `join` is false.
  IndexWriter(WriteContext& db, TableEntry& table, ExecContext* ctx, bool join = true);

  bool empty() const { return table_.schema.indexes.empty(); }
  // Whether `row` has an entry in index i.
  bool member(size_t i, const Row& row) const;
  // The first UNIQUE index (from `start`) holding another row with the key `row` has,
  // and that row's primary key. Rows whose primary key equals `self` are not conflicts.
  struct Conflict {
    size_t index = 0;
    Row key;  // the conflicting row's primary key
  };
  std::optional<Conflict> find_conflict(const Row& row, const Row& self, size_t start = 0) const;
  // The violation message for unique index i.
  std::string unique_message(size_t i) const;

  void add(const Row& row);
  void remove(const Row& row);
  void change(const Row& old_row, const Row& new_row);

 private:
  void write_entry(size_t i, const Row& entry, bool insert);
  // entry_out_ = the entry of `row` in index i.
  void fill_entry(size_t i, const Row& row);

  WriteContext& db_;
  TableEntry& table_;
  ExecContext* ctx_;
  const IndexRuntime* rt_ = nullptr;
  mutable Row key_buf_, entry_buf_;  // find_conflict's probe key and looked-up entry
  Row entry_out_;                     // the entry add / remove write
};

// Builds the companion table of index `i` of `table` (already in table.schema.indexes)
// and fills it from the table's rows. Throws a UNIQUE violation (and leaves nothing
// behind) when a unique index finds duplicates.
void build_index(WriteContext& db, TableEntry& table, size_t i, ExecContext& ctx);

// Reopening a persistent database: connects the companion of index `i` (which holds its
// entries already) instead of building it.
void connect_index(TableEntry& table, size_t i);

// Replaces every companion of `table` by new ones built for table.schema.indexes from
// the table's rows (after an ALTER TABLE changed columns, types, collations or keys).
void rebuild_indexes(WriteContext& db, TableEntry& table, ExecContext& ctx);

// Brings the companion of index `i` to the index entries of the table's rows as this
// transaction sees them (committed rows outside one): after a rollback undid the entries
// a CREATE INDEX wrote for rows that survive it. Writes only the difference. Throws the
// UNIQUE violation when the rows now break a unique index (a rollback revived a
// duplicate the transaction had deleted).
void reconcile_index(WriteContext& db, TableEntry& table, size_t i, ExecContext& ctx);

// Throws the UNIQUE violation of the first unique index of `ts` that `rows` (rows of
// `ts`) violate. `member(i, r)` says whether rows[r] belongs to partial index i.
void check_unique_rows(const TableSchema& ts, const std::vector<Row>& rows,
                       const std::function<bool(size_t, size_t)>& member);

// Drops the companion of index `i` and removes the index from the table's schema.
void drop_index_storage(WriteContext& db, TableEntry& table, size_t i);

}  // namespace quereus
