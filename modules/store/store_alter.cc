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
// A row-rewriting arm arriving while an instance of the table holds uncommitted writes is
// refused with BUSY (commit or roll back first): pending rows are in the old layout.
#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "row_codec.h"
#include "store_table.h"

namespace quereus::store {
namespace {

using Cells = std::vector<qrs_value>;
using Transform = std::function<void(Cells& cells)>;

bool is_key_member(const sdk::TableSchema& schema, uint32_t column) {
  for (const sdk::KeyColumn& k : schema.primary_key)
    if (k.column == column) return true;
  return false;
}

// The row rewrite of one arm (in place over `cells`); empty when the arm rewrites no row.
Transform transform_of(const sdk::SchemaChange& ch, const sdk::TableSchema& old_schema, const sdk::TableSchema& ns) {
  using K = sdk::SchemaChangeKind;
  const uint32_t col = ch.column;
  switch (ch.kind) {
    case K::kAddColumn:
      if (col >= ns.columns.size()) throw sdk::Error::misuse("ADD COLUMN at a column the new schema lacks");
      return [&ch, &ns, col](Cells& cells) {
        qrs_value v = ch.fill(cells);
        if (v.type == QRS_TYPE_NULL && ns.columns[col].not_null)
          throw sdk::Error::constraint("NOT NULL constraint failed: " + ns.table_name + "." + ns.columns[col].name +
                                       " (the table has rows and the new column has no non-NULL default)");
        cells.insert(cells.begin() + col, v);
      };
    case K::kDropColumn:
      if (col >= old_schema.columns.size()) throw sdk::Error::misuse("DROP COLUMN of a missing column");
      return [col](Cells& cells) { cells.erase(cells.begin() + col); };
    case K::kSetDataType:
      if (col >= old_schema.columns.size()) throw sdk::Error::misuse("SET DATA TYPE of a missing column");
      return [&ch, col](Cells& cells) {
        if (cells[col].type != QRS_TYPE_NULL) cells[col] = ch.convert(cells[col]);
      };
    case K::kSetNotNull:
      if (col >= old_schema.columns.size()) throw sdk::Error::misuse("SET NOT NULL of a missing column");
      return [&ch, &ns, col](Cells& cells) {
        if (cells[col].type != QRS_TYPE_NULL) return;
        qrs_value v = ch.fill(cells);
        if (v.type == QRS_TYPE_NULL)
          throw sdk::Error::constraint("Cannot SET NOT NULL on column '" + ns.columns[col].name + "' of '" +
                                       ns.table_name + "': it contains NULL values and has no DEFAULT to backfill");
        cells[col] = v;
      };
    default:
      return {};
  }
}

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
    st.schema = ns;
    st.codec = std::move(codec);
    return;
  }
  for (const Txn* t : db.txns_of(st.id))
    if (!t->pending.empty())
      throw sdk::Error::busy("Cannot rewrite the rows of '" + table +
                             "' while a transaction has uncommitted changes to it. Commit/rollback and retry");

  // 1. Read and transform into memory.
  struct Moved {
    std::string old_key;
    std::string new_key;
    std::string row;
  };
  std::vector<Moved> rows;
  Cells cells;
  auto it = db.kv().iterate(KvRange{st.prefix, prefix_end(st.prefix)}, false);
  for (; it->valid(); it->next()) {
    std::string stored(it->value());
    decode_row(stored, cells, "row of " + table);
    if (f) f(cells);
    if (cells.size() != ns.columns.size())
      throw sdk::Error::internal("ALTER produced " + std::to_string(cells.size()) + " cells for " +
                                 std::to_string(ns.columns.size()) + " columns");
    Moved m;
    m.old_key.assign(it->key());
    m.new_key = st.prefix;
    codec.encode_row(m.new_key, cells);
    m.row = encode_row(cells);  // packed now: fill / convert views die at the next call
    rows.push_back(std::move(m));
  }
  it->check();

  // 2. Re-key check.
  if (rekey) {
    std::vector<const std::string*> keys;
    keys.reserve(rows.size());
    for (const Moved& m : rows) keys.push_back(&m.new_key);
    std::sort(keys.begin(), keys.end(), [](const std::string* a, const std::string* b) { return *a < *b; });
    for (size_t i = 1; i < keys.size(); ++i)
      if (*keys[i - 1] == *keys[i])
        throw sdk::Error::constraint("UNIQUE constraint failed: " + table +
                                     " primary key collides under the new key definition");
  }

  // 3. One atomic batch.
  KvBatch b;
  for (const Moved& m : rows)
    if (m.old_key != m.new_key) b.del(m.old_key);
  for (Moved& m : rows) b.put(std::move(m.new_key), std::move(m.row));
  db.kv().write(b, true);
  st.schema = ns;
  st.codec = std::move(codec);
}

}  // namespace quereus::store
