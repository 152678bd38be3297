// Runtime: secondary indexes in companion tables (see indexes.h).
#include "write/indexes.h"

#include "runtime/table_reads.h"
#include <algorithm>
#include <map>

#include "types/json_value.h"
#include "types/temporal.h"
#include "planner/scalar_expr.h"
#include "eval/exec_context.h"
#include "types/compare.h"

namespace quereus {

std::string companion_name(const TableSchema& base, const IndexSchema& index) {
  return base.name + "$idx$" + to_lower(index.name);
}

TableSchema companion_schema(const TableSchema& base, const IndexSchema& index) {
  TableSchema c;
  c.schema_name = base.schema_name;
  c.name = companion_name(base, index);
  c.module_name = base.module_name;
  c.module_options = base.module_options;
  c.primary_key_declared = true;
  auto add = [&c](ColumnSchema col, bool desc) {
    col.not_null = false;
    col.primary_key = true;
    col.default_expr = nullptr;
    col.not_null_conflict.reset();
    c.primary_key.push_back({static_cast<int>(c.columns.size()), desc});
    c.columns.push_back(std::move(col));
  };
  for (const IndexColumn& ic : index.columns) {
    ColumnSchema col = base.columns[ic.column];
    col.collation = ic.collation;
    add(std::move(col), ic.desc);
  }
  for (const KeyColumn& k : base.primary_key) {
    ColumnSchema col = base.columns[k.column];
    col.name = "_pk_" + col.name;
    add(std::move(col), k.desc);
  }
  return c;
}

Row index_entry(const TableSchema& base, const IndexSchema& index, const Row& row) {
  Row e;
  e.reserve(index.columns.size() + base.primary_key.size());
  for (const IndexColumn& ic : index.columns) e.push_back(row[ic.column]);
  for (const KeyColumn& k : base.primary_key) e.push_back(row[k.column]);
  return e;
}

namespace {

// Primary keys equal under the key's collations.
bool same_key(const TableSchema& ts, const Row& a, size_t a_off, const Row& b) {
  for (size_t i = 0; i < ts.primary_key.size(); ++i) {
    const Collation* coll = ts.columns[ts.primary_key[i].column].collation.get();
    const Value& x = a[a_off + i];
    const Value& y = b[i];
    if (x.is_null() != y.is_null()) return false;
    if (!x.is_null() && compare_values(x, y, coll) != 0) return false;
  }
  return true;
}

bool identical(const Row& a, const Row& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i])) return false;
  return true;
}

}  // namespace

const IndexRuntime& index_runtime(WriteContext& db, TableEntry& table) {
  if (table.index_runtime && table.index_runtime->indexes.size() == table.schema.indexes.size())
    return *table.index_runtime;
  if (table.index_tables.size() != table.schema.indexes.size())
    throw Error(StatusCode::kInternal, "indexes of " + table.qualified_name() + " are out of step with their storage");
  auto rt = std::make_shared<IndexRuntime>();
  for (size_t i = 0; i < table.schema.indexes.size(); ++i) {
    const IndexSchema& ix = table.schema.indexes[i];
    IndexRuntime::Index b;
    if (ix.where) b.where = db.bind_row_expr(table, *ix.where);
    b.probe_plan = plan_eq(*table.index_tables[i], ix.columns.size(), nullptr);
    rt->indexes.push_back(std::move(b));
  }
  table.index_runtime = rt;
  return *rt;
}

IndexWriter::IndexWriter(WriteContext& db, TableEntry& table, ExecContext* ctx, bool join)
    : db_(db), table_(table), ctx_(ctx) {
  if (table.schema.indexes.empty()) return;
  rt_ = &index_runtime(db, table);
  if (join)
    for (auto& c : table.index_tables) db.join(*c);
}

bool IndexWriter::member(size_t i, const Row& row) const {
  const ScalarPtr& where = rt_->indexes[i].where;
  if (!where) return true;
  EvalEnv env{&row, nullptr, ctx_};
  bool is_null = false;
  return where->eval(env).truthy(&is_null) && !is_null;
}

std::optional<IndexWriter::Conflict> IndexWriter::find_conflict(const Row& row, const Row& self, size_t start) const {
  const TableSchema& ts = table_.schema;
  for (size_t i = start; i < ts.indexes.size(); ++i) {
    const IndexSchema& ix = ts.indexes[i];
    if (!ix.unique) continue;
    Row& key = key_buf_;  // reused: no allocation per probe once its cells have grown
    key.resize(ix.columns.size());
    bool has_null = false;
    for (size_t m = 0; m < ix.columns.size(); ++m) {
      key[m] = row[ix.columns[m].column];
      has_null = has_null || key[m].is_null();
    }
    if (has_null || !member(i, row)) continue;  // NULLs are distinct; non-members are unconstrained
    const size_t k = ix.columns.size();
    // The first entry with this key, without a cursor: no entry means no conflict, and
    // another row's entry is the conflict. Only when the first entry is the row's own
    // (an update keeping its key) or the module has no lookup, the entries are scanned.
    TableEntry& companion = *table_.index_tables[i];
    switch (companion.table->lookup(key, entry_buf_)) {
      case LookupStatus::kNotFound: continue;
      case LookupStatus::kFound:
        if (!same_key(ts, entry_buf_, k, self))
          return Conflict{i, Row(entry_buf_.begin() + static_cast<std::ptrdiff_t>(k), entry_buf_.end())};
        break;
      case LookupStatus::kUnsupported: break;
    }
    ScanArgs args;
    for (Row& e : probe_eq(companion, rt_->indexes[i].probe_plan, nullptr, key, args)) {
      if (same_key(ts, e, k, self)) continue;
      return Conflict{i, Row(e.begin() + static_cast<std::ptrdiff_t>(k), e.end())};
    }
  }
  return std::nullopt;
}

std::string IndexWriter::unique_message(size_t i) const {
  const TableSchema& ts = table_.schema;
  std::string cols;
  for (const IndexColumn& ic : ts.indexes[i].columns) {
    if (!cols.empty()) cols += ", ";
    cols += ts.columns[ic.column].name;
  }
  return "UNIQUE constraint failed: " + ts.name + " (" + cols + ")";
}

void IndexWriter::write_entry(size_t i, const Row& entry, bool insert) {
  TableEntry& c = *table_.index_tables[i];
  UpdateResult r = insert ? c.table->update(RowOp::kInsert, entry, {}, ConflictAction::kReplace)
                          : c.table->update(RowOp::kDelete, {}, entry, ConflictAction::kAbort);
  if (r.outcome == UpdateResult::Outcome::kConstraint)
    throw Error(StatusCode::kInternal, "index '" + table_.schema.indexes[i].name + "' refused its entry");
}

void IndexWriter::fill_entry(size_t i, const Row& row) {
  const TableSchema& ts = table_.schema;
  const IndexSchema& ix = ts.indexes[i];
  Row& e = entry_out_;  // reused: its cells keep their buffers between rows
  e.resize(ix.columns.size() + ts.primary_key.size());
  size_t n = 0;
  for (const IndexColumn& ic : ix.columns) e[n++] = row[ic.column];
  for (const KeyColumn& k : ts.primary_key) e[n++] = row[k.column];
}

void IndexWriter::add(const Row& row) {
  for (size_t i = 0; i < table_.schema.indexes.size(); ++i)
    if (member(i, row)) {
      fill_entry(i, row);
      write_entry(i, entry_out_, true);
    }
}

void IndexWriter::remove(const Row& row) {
  for (size_t i = 0; i < table_.schema.indexes.size(); ++i)
    if (member(i, row)) {
      fill_entry(i, row);
      write_entry(i, entry_out_, false);
    }
}

void IndexWriter::change(const Row& old_row, const Row& new_row) {
  const TableSchema& ts = table_.schema;
  for (size_t i = 0; i < ts.indexes.size(); ++i) {
    bool was = member(i, old_row), is = member(i, new_row);
    Row old_entry = was ? index_entry(ts, ts.indexes[i], old_row) : Row{};
    Row new_entry = is ? index_entry(ts, ts.indexes[i], new_row) : Row{};
    if (was && is && identical(old_entry, new_entry)) continue;
    if (was) write_entry(i, old_entry, false);
    if (is) write_entry(i, new_entry, true);
  }
}

namespace {


struct KeyLess {
  const TableSchema* ts;
  bool operator()(const Row& a, const Row& b) const {
    for (const KeyColumn& k : ts->primary_key) {
      int c = compare_values(a[k.column], b[k.column], ts->columns[k.column].collation.get());
      if (c != 0) return c < 0;
    }
    return false;
  }
};

void destroy_companion(WriteContext& db, TableEntry& base, TableEntry& c) {
  db.forget(c);
  c.connection.reset();
  c.table.reset();
  base.module->destroy(c.schema.schema_name, c.schema.name);
}

}  // namespace

namespace {

std::shared_ptr<TableEntry> make_companion(TableEntry& table, const IndexSchema& ix) {
  auto comp = std::make_shared<TableEntry>();
  comp->schema = companion_schema(table.schema, ix);
  comp->module = table.module;
  comp->table = table.module->create(comp->schema);
  return comp;
}

// Fills the (empty, not yet joined) companion of index i from `committed` (the rows'
// committed state) and, inside a transaction, brings it to the transaction's view.
void fill_index(WriteContext& db, TableEntry& table, size_t i, const std::vector<Row>& committed, bool in_txn,
                ExecContext& ctx) {
  const IndexSchema& ix = table.schema.indexes[i];
  TableEntry& comp = *table.index_tables[i];
  IndexWriter w(db, table, &ctx, /*join=*/false);
  // The companion has not joined the transaction: these entries are written straight
  // to its committed state, like the committed rows they index.
  for (const Row& row : committed) {
    if (!w.member(i, row)) continue;
    Row entry = index_entry(table.schema, ix, row);
    // In a transaction uniqueness is judged on the transaction's view (below): a
    // pending delete may remove a committed duplicate.
    if (ix.unique && !in_txn &&
        w.find_conflict(row, Row(entry.begin() + static_cast<std::ptrdiff_t>(ix.columns.size()), entry.end()), i))
      throw Error(StatusCode::kConstraint, w.unique_message(i));
    comp.table->update(RowOp::kInsert, entry, {}, ConflictAction::kReplace);
  }
  if (!in_txn) return;
  // Bring the companion to the transaction's view of the table, inside the transaction,
  // so a rollback returns it to the committed rows' entries.
  db.join(comp);
  std::map<Row, Row, KeyLess> before{KeyLess{&table.schema}};
  for (const Row& row : committed) before.emplace(row, row);
  std::vector<Row> visible = scan_rows(table, false);
  for (const Row& row : visible) {
    auto it = before.find(row);
    if (it == before.end()) {
      if (w.member(i, row)) comp.table->update(RowOp::kInsert, index_entry(table.schema, ix, row), {}, ConflictAction::kReplace);
      continue;
    }
    if (!identical(it->second, row)) {
      if (w.member(i, it->second))
        comp.table->update(RowOp::kDelete, {}, index_entry(table.schema, ix, it->second), ConflictAction::kAbort);
      if (w.member(i, row)) comp.table->update(RowOp::kInsert, index_entry(table.schema, ix, row), {}, ConflictAction::kReplace);
    }
    before.erase(it);
  }
  for (auto& [key, row] : before)
    if (w.member(i, row)) comp.table->update(RowOp::kDelete, {}, index_entry(table.schema, ix, row), ConflictAction::kAbort);
  if (ix.unique)
    for (const Row& row : visible) {
      Row self;
      for (const KeyColumn& k : table.schema.primary_key) self.push_back(row[k.column]);
      if (auto c = w.find_conflict(row, self, i); c && c->index == i) throw Error(StatusCode::kConstraint, w.unique_message(i));
    }
}

std::vector<Row> committed_rows(WriteContext& db, TableEntry& table, bool in_txn, const char* what) {
  if (in_txn && !table.module->capabilities().committed_reads)
    throw Error(StatusCode::kUnsupported, std::string(what) + " inside a transaction needs a module with committed reads ('" +
                                              table.schema.module_name + "' has none)");
  return scan_rows(table, in_txn);
}

}  // namespace

void connect_index(TableEntry& table, size_t i) {
  {
    if (table.index_tables.size() != i)
      throw Error(StatusCode::kInternal, "indexes of " + table.qualified_name() + " are out of step with their storage");
    auto comp = std::make_shared<TableEntry>();
    comp->schema = companion_schema(table.schema, table.schema.indexes[i]);
    comp->module = table.module;
    comp->table = table.module->connect(comp->schema);
    table.index_tables.push_back(std::move(comp));
    table.index_runtime.reset();
  }
}

void build_index(WriteContext& db, TableEntry& table, size_t i, ExecContext& ctx) {
  bool in_txn = db.in_transaction();
  // Read the rows before the companion exists, so a failure leaves nothing to undo.
  std::vector<Row> committed = committed_rows(db, table, in_txn, "CREATE INDEX");
  if (table.index_tables.size() != i)
    throw Error(StatusCode::kInternal, "indexes of " + table.qualified_name() + " are out of step with their storage");
  auto comp = make_companion(table, table.schema.indexes[i]);
  table.index_tables.insert(table.index_tables.begin() + static_cast<std::ptrdiff_t>(i), comp);
  table.index_runtime.reset();
  try {
    fill_index(db, table, i, committed, in_txn, ctx);
  } catch (...) {
    destroy_companion(db, table, *comp);
    table.index_tables.erase(table.index_tables.begin() + static_cast<std::ptrdiff_t>(i));
    table.index_runtime.reset();
    throw;
  }
}

void rebuild_indexes(WriteContext& db, TableEntry& table, ExecContext& ctx) {
  for (auto& c : table.index_tables) destroy_companion(db, table, *c);
  table.index_tables.clear();
  table.index_runtime.reset();
  if (table.schema.indexes.empty()) return;
  bool in_txn = db.in_transaction();
  std::vector<Row> committed = committed_rows(db, table, in_txn, "ALTER TABLE on a table with indexes");
  try {
    for (const IndexSchema& ix : table.schema.indexes) table.index_tables.push_back(make_companion(table, ix));
    for (size_t i = 0; i < table.schema.indexes.size(); ++i) fill_index(db, table, i, committed, in_txn, ctx);
  } catch (...) {
    // Never leave the catalog naming indexes without storage: the table keeps none.
    for (auto& c : table.index_tables) destroy_companion(db, table, *c);
    table.index_tables.clear();
    table.schema.indexes.clear();
    table.index_runtime.reset();
    throw;
  }
}

namespace {

// Two index key values in the order the companion keeps them (module_adapter's key
// collation): a TIMESPAN or JSON member under BINARY orders by duration / structure.
int key_compare(const Value& a, const Value& b, const ColumnSchema& col, const Collation* coll) {
  bool binary = !coll || coll->name() == "BINARY";
  if (binary && a.type() == ValueType::kText && b.type() == ValueType::kText) {
    if (col.logical_type == QRS_LT_TIMESPAN) return temporal::compare_timespan_texts(a.str(), b.str());
    if (col.logical_type == QRS_LT_JSON) {
      int c = jsonv::compare_text(a.str(), b.str());
      return (c > 0) - (c < 0);
    }
  }
  return compare_values(a, b, coll);
}

}  // namespace

void check_unique_rows(const TableSchema& ts, const std::vector<Row>& rows,
                       const std::function<bool(size_t, size_t)>& member) {
  for (size_t i = 0; i < ts.indexes.size(); ++i) {
    const IndexSchema& ix = ts.indexes[i];
    if (!ix.unique) continue;
    std::vector<Row> keys;
    for (size_t r = 0; r < rows.size(); ++r) {
      const Row& row = rows[r];
      if (ix.where && !member(i, r)) continue;
      Row key;
      bool has_null = false;
      for (const IndexColumn& c : ix.columns) {
        key.push_back(row[c.column]);
        has_null = has_null || key.back().is_null();
      }
      if (!has_null) keys.push_back(std::move(key));
    }
    auto cmp = [&ix, &ts](const Row& a, const Row& b) {
      for (size_t k = 0; k < ix.columns.size(); ++k)
        if (int c = key_compare(a[k], b[k], ts.columns[ix.columns[k].column], ix.columns[k].collation.get())) return c;
      return 0;
    };
    std::sort(keys.begin(), keys.end(), [&cmp](const Row& a, const Row& b) { return cmp(a, b) < 0; });
    for (size_t r = 1; r < keys.size(); ++r)
      if (cmp(keys[r - 1], keys[r]) == 0) {
        std::string cols;
        for (const IndexColumn& c : ix.columns) cols += (cols.empty() ? "" : ", ") + ts.columns[c.column].name;
        throw Error(StatusCode::kConstraint, "UNIQUE constraint failed: " + ts.name + " (" + cols + ")");
      }
  }
}

void reconcile_index(WriteContext& db, TableEntry& table, size_t i, ExecContext& ctx) {
  const IndexSchema& ix = table.schema.indexes[i];
  TableEntry& comp = *table.index_tables[i];
  bool in_txn = db.in_transaction();
  IndexWriter w(db, table, &ctx, /*join=*/false);
  if (in_txn) db.join(comp);
  std::vector<Row> rows = scan_rows(table, false);
  std::map<Row, bool, KeyLess> want{KeyLess{&comp.schema}};  // entry -> seen in the companion
  for (const Row& row : rows)
    if (w.member(i, row)) want.emplace(index_entry(table.schema, ix, row), false);
  for (const Row& e : scan_rows(comp, false)) {
    auto it = want.find(e);
    if (it != want.end() && identical(it->first, e)) {
      it->second = true;
      continue;
    }
    comp.table->update(RowOp::kDelete, {}, e, ConflictAction::kAbort);
  }
  for (const auto& [e, seen] : want)
    if (!seen) comp.table->update(RowOp::kInsert, e, {}, ConflictAction::kReplace);
  if (!ix.unique) return;
  for (const Row& row : rows) {
    Row self;
    for (const KeyColumn& k : table.schema.primary_key) self.push_back(row[k.column]);
    if (auto c = w.find_conflict(row, self, i); c && c->index == i) throw Error(StatusCode::kConstraint, w.unique_message(i));
  }
}

void drop_index_storage(WriteContext& db, TableEntry& table, size_t i) {
  std::shared_ptr<TableEntry> comp = table.index_tables[i];
  table.index_tables.erase(table.index_tables.begin() + static_cast<std::ptrdiff_t>(i));
  table.schema.indexes.erase(table.schema.indexes.begin() + static_cast<std::ptrdiff_t>(i));
  table.index_runtime.reset();
  destroy_companion(db, table, *comp);
}

}  // namespace quereus
