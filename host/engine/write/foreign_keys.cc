// Runtime: FOREIGN KEY resolution and lookups (see foreign_keys.h).
#include "write/foreign_keys.h"

#include "transaction/write_context.h"
#include "planner/type_coercion.h"
#include <algorithm>

#include "write/dml_writer.h"
#include "write/indexes.h"
#include "types/compare.h"

namespace quereus {

namespace {

CollationBid column_bid(const ColumnSchema& c) {
  return collation_bid(c.collation.get(), c.collation_declared ? CollationSource::kDeclared : CollationSource::kDefault);
}

// The parent columns a key references: the named ones, or the primary key.
std::vector<int> referenced_columns(const TableSchema& child, const ForeignKeySchema& fk, const TableSchema& parent) {
  std::vector<int> cols;
  if (fk.referenced_columns.empty()) {
    if (parent.primary_key.size() != fk.columns.size())
      throw Error(StatusCode::kError,
                  "Foreign key '" + fk.name + "' on table '" + child.schema_name + "." + child.name + "': " +
                      std::to_string(fk.columns.size()) + " column(s) reference the primary key of '" +
                      parent.schema_name + "." + parent.name + "', which has " +
                      std::to_string(parent.primary_key.size()) + " column(s).");
    for (const KeyColumn& k : parent.primary_key) cols.push_back(k.column);
    return cols;
  }
  for (const std::string& name : fk.referenced_columns) {
    int idx = parent.find_column(name);
    if (idx < 0)
      throw Error(StatusCode::kError, "Foreign key '" + fk.name + "' on table '" + child.name +
                                          "': parent column '" + name + "' not found in table '" + parent.name + "'");
    cols.push_back(idx);
  }
  return cols;
}

// Converts `v` to `col`'s stored form for a lookup; nullopt when it cannot be stored
// there (then no row of that column can equal it).
std::optional<Value> probe_value(const Value& v, const ColumnSchema& col, const TableSchema& table) {
  try {
    return DmlWriter::coerce(v, col, table);
  } catch (const Error&) {
    return std::nullopt;
  }
}

bool matches(const Row& row, const std::vector<int>& cols, const Row& probes, const std::vector<const Collation*>& colls) {
  for (size_t i = 0; i < cols.size(); ++i)
    if (row[cols[i]].is_null() || compare_values(row[cols[i]], probes[i], colls[i]) != 0) return false;
  return true;
}

// True when `cols` are exactly the primary-key columns of `ts` (then the module seeks).
bool is_primary_key(const TableSchema& ts, const std::vector<int>& cols) {
  if (cols.size() != ts.primary_key.size()) return false;
  for (const KeyColumn& k : ts.primary_key)
    if (std::find(cols.begin(), cols.end(), k.column) == cols.end()) return false;
  return true;
}

// A non-partial secondary index of `table` whose leading columns are `cols` (in any
// order) under `colls`; -1 when none. order[i]: the member index column i holds.
int usable_index(const TableEntry& table, const std::vector<int>& cols, const std::vector<const Collation*>& colls,
                 std::vector<size_t>& order) {
  const auto& ixs = table.schema.indexes;
  if (table.index_tables.size() != ixs.size()) return -1;
  for (size_t x = 0; x < ixs.size(); ++x) {
    const IndexSchema& ix = ixs[x];
    if (ix.where || ix.columns.size() < cols.size()) continue;
    order.assign(cols.size(), 0);
    bool ok = true;
    for (size_t i = 0; i < cols.size() && ok; ++i) {
      const IndexColumn& ic = ix.columns[i];
      auto it = std::find(cols.begin(), cols.end(), ic.column);
      if (it == cols.end()) {
        ok = false;
        break;
      }
      order[i] = static_cast<size_t>(it - cols.begin());
      ok = ic.collation && ic.collation->name() == colls[order[i]]->name();
    }
    if (ok) return static_cast<int>(x);
  }
  return -1;
}

// Reads the rows of `table` whose `cols` equal `probes` under `colls`: through a secondary
// index when one leads with the members, otherwise handing the seekable equalities to the
// module's access plan (a point lookup when they are the primary key).
std::vector<Row> lookup(TableEntry& table, const std::vector<int>& cols, const Row& probes,
                        const std::vector<const Collation*>& colls, const std::vector<bool>& seekable,
                        std::optional<PlanResult>& cached_plan, FkLink::IndexProbe& index_probe, size_t limit) {
  std::vector<size_t> order;
  int x = is_primary_key(table.schema, cols) ? -1 : usable_index(table, cols, colls, order);
  if (x >= 0) {
    TableEntry& companion = *table.index_tables[x];
    if (index_probe.companion != &companion) {
      index_probe.companion = &companion;
      index_probe.plan.reset();
    }
    Row key;
    std::vector<int> key_cols;
    for (size_t i = 0; i < order.size(); ++i) {
      key.push_back(probes[order[i]]);
      key_cols.push_back(static_cast<int>(i));
    }
    const size_t width = table.schema.indexes[x].columns.size();
    std::vector<Row> out;
    for (const Row& entry : probe_rows(companion, key_cols, key, index_probe.plan)) {
      std::optional<Row> row = fetch_by_key(table, Row(entry.begin() + static_cast<std::ptrdiff_t>(width), entry.end()));
      if (!row || !matches(*row, cols, probes, colls)) continue;
      out.push_back(std::move(*row));
      if (limit && out.size() >= limit) break;
    }
    return out;
  }
  ScanArgs args;
  PlanRequest req;
  for (size_t i = 0; i < cols.size(); ++i) {
    if (!seekable[i]) continue;
    FilterSpec s;
    s.column = cols[i];
    s.op = QRS_OP_EQ;
    req.filters.push_back(s);
    s.has_value = true;
    s.value = probes[i];
    args.filters.push_back(std::move(s));
  }
  if (!cached_plan) {
    cached_plan = table.table->best_access_plan(req);
    cached_plan->handled.resize(req.filters.size(), false);
  }
  args.plan_id = cached_plan->plan_id;
  args.handled = cached_plan->handled;
  args.provides_ordering = cached_plan->provides_ordering;
  auto cursor = table.table->open_cursor(args);
  std::vector<Row> batch, out;
  while (size_t n = cursor->next_batch(batch)) {
    for (size_t r = 0; r < n; ++r) {
      const Row& row = batch[r];
      if (!matches(row, cols, probes, colls)) continue;
      out.push_back(row);
      if (limit && out.size() >= limit) return out;
    }
  }
  return out;
}

}  // namespace

std::string FkLink::parent_name() const { return fk.referenced_schema + "." + fk.referenced_table; }

void validate_fk_collations(const TableSchema& child, const ForeignKeySchema& fk, const TableSchema& parent) {
  std::vector<int> cols;
  try {
    cols = referenced_columns(child, fk, parent);
  } catch (const Error&) {
    return;  // an arity or name problem is reported where the key is enforced
  }
  for (size_t i = 0; i < cols.size(); ++i) {
    const ColumnSchema& c = child.columns[fk.columns[i]];
    const ColumnSchema& p = parent.columns[cols[i]];
    CollationBid a = column_bid(c), b = column_bid(p);
    if (a.collation && b.collation && a.source == b.source && a.source != CollationSource::kDefault &&
        a.collation->name() != b.collation->name())
      throw Error(StatusCode::kError, "FOREIGN KEY '" + fk.name + "' on table '" + child.name +
                                          "': conflicting collations " + a.collation->name() + " (column '" + c.name +
                                          "') vs " + b.collation->name() + " (parent column '" + parent.name + "." +
                                          p.name + "')");
  }
}

FkLink resolve_fk(Catalog& catalog, const std::shared_ptr<TableEntry>& child, const ForeignKeySchema& fk) {
  FkLink link;
  link.fk = fk;
  link.child = child;
  link.parent = catalog.find(fk.referenced_schema, fk.referenced_table);
  if (!link.parent) {
    // The referenced table does not exist (yet): the child side can still be read — a
    // deferred check asks whether a row still holds the reference — under the child
    // columns' own collations; any parent lookup fails with CONSTRAINT.
    for (int col : fk.columns) {
      const std::shared_ptr<const Collation>& c = child->schema.columns[col].collation;
      link.collations.push_back(c ? c.get() : &Collation::binary());
      link.child_seekable.push_back(true);
    }
    return link;
  }
  const TableSchema& cs = child->schema;
  const TableSchema& ps = link.parent->schema;
  link.parent_cols = referenced_columns(cs, fk, ps);
  for (size_t i = 0; i < fk.columns.size(); ++i) {
    const ColumnSchema& c = cs.columns[fk.columns[i]];
    const ColumnSchema& p = ps.columns[link.parent_cols[i]];
    // The enforcement comparison `parent.k = child.ref`: a same-rank declared conflict is
    // the "ambiguous collation" error a forward-declared key meets at its first write.
    const Collation* coll = bid_collation(merge_collation_bids(column_bid(c), column_bid(p), SourceSite{}));
    link.collations.push_back(coll);
    link.parent_seekable.push_back(p.collation && p.collation->name() == coll->name());
    link.child_seekable.push_back(c.collation && c.collation->name() == coll->name());
  }
  // The parent lookup is a primary-key point lookup when the members are the key and
  // the module's key order compares each as the key does.
  bool seekable = std::all_of(link.parent_seekable.begin(), link.parent_seekable.end(), [](bool b) { return b; });
  if (seekable && is_primary_key(ps, link.parent_cols))
    for (const KeyColumn& k : ps.primary_key)
      link.pk_order.push_back(
          static_cast<size_t>(std::find(link.parent_cols.begin(), link.parent_cols.end(), k.column) - link.parent_cols.begin()));
  return link;
}

std::vector<std::shared_ptr<FkLink>> inbound_fks(Catalog& catalog, const std::shared_ptr<TableEntry>& parent) {
  std::vector<std::shared_ptr<FkLink>> out;
  for (auto& t : catalog.tables())
    for (const ForeignKeySchema& fk : t->schema.foreign_keys) {
      if (fk.referenced_schema != parent->schema.schema_name || !iequals(fk.referenced_table, parent->schema.name))
        continue;
      out.push_back(std::make_shared<FkLink>(resolve_fk(catalog, t, fk)));
    }
  return out;
}

std::optional<Row> child_values(const FkLink& link, const Row& child_row) {
  Row v;
  v.reserve(link.fk.columns.size());
  for (int c : link.fk.columns) {
    if (child_row[c].is_null()) return std::nullopt;
    v.push_back(child_row[c]);
  }
  return v;
}

std::optional<Row> parent_values(const FkLink& link, const Row& parent_row) {
  Row v;
  v.reserve(link.parent_cols.size());
  for (int c : link.parent_cols) {
    if (parent_row[c].is_null()) return std::nullopt;
    v.push_back(parent_row[c]);
  }
  return v;
}

std::vector<std::shared_ptr<FkLink>> outbound_links(WriteContext& db, const std::shared_ptr<TableEntry>& table) {
  using Links = std::vector<std::shared_ptr<FkLink>>;
  if (!table->fk_links || table->fk_links_version != db.schema_version()) {
    auto links = std::make_shared<Links>();
    for (const ForeignKeySchema& fk : table->schema.foreign_keys)
      links->push_back(std::make_shared<FkLink>(resolve_fk(db.catalog(), table, fk)));
    table->fk_links = links;
    table->fk_links_version = db.schema_version();
  }
  return *static_cast<const Links*>(table->fk_links.get());
}

std::string fk_check_message(const FkLink& link) { return "CHECK constraint failed: " + link.fk.name; }

bool parent_exists(const FkLink& link, const Row& values) {
  if (!link.parent)
    throw Error(StatusCode::kConstraint, fk_check_message(link) + " — referenced table '" + link.parent_name() +
                                             "' does not exist");
  const TableSchema& ps = link.parent->schema;
  Row probes;
  probes.reserve(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    auto p = probe_value(values[i], ps.columns[link.parent_cols[i]], ps);
    if (!p || p->is_null()) return false;
    probes.push_back(std::move(*p));
  }
  // The common key: the parent's primary key, every member compared under the parent
  // column's own collation — a point lookup, no cursor.
  if (link.pk_order.size() == probes.size()) {
    Row& key = link.lookup_key;
    key.resize(probes.size());
    for (size_t m = 0; m < probes.size(); ++m) key[m] = probes[link.pk_order[m]];
    switch (link.parent->table->lookup(key, link.lookup_row)) {
      case LookupStatus::kNotFound: return false;
      case LookupStatus::kFound: return matches(link.lookup_row, link.parent_cols, probes, link.collations);
      case LookupStatus::kUnsupported: break;  // read through a cursor
    }
  }
  return !lookup(*link.parent, link.parent_cols, probes, link.collations, link.parent_seekable, link.parent_plan,
                 link.parent_index, 1)
              .empty();
}

std::vector<Row> referencing_rows(const FkLink& link, const Row& values, size_t limit) {
  const TableSchema& cs = link.child->schema;
  Row probes;
  for (size_t i = 0; i < values.size(); ++i) {
    auto p = probe_value(values[i], cs.columns[link.fk.columns[i]], cs);
    if (!p || p->is_null()) return {};
    probes.push_back(std::move(*p));
  }
  return lookup(*link.child, link.fk.columns, probes, link.collations, link.child_seekable, link.child_plan,
                link.child_index, limit);
}

void guard_parent_drop(WriteContext& db, const std::shared_ptr<TableEntry>& parent) {
  if (!db.foreign_keys_enforced()) return;
  for (const auto& link : inbound_fks(db.catalog(), parent)) {
    if (link->self_referencing()) continue;
    auto cursor = link->child->table->open_cursor([&] {
      ScanArgs args;
      args.plan_id = link->child->table->best_access_plan(PlanRequest{}).plan_id;
      return args;
    }());
    std::vector<Row> batch;
    while (size_t n = cursor->next_batch(batch))
      for (size_t r = 0; r < n; ++r) {
        std::optional<Row> values = child_values(*link, batch[r]);
        if (values && parent_exists(*link, *values))
          throw Error(StatusCode::kConstraint, "cannot drop table '" + parent->qualified_name() +
                                                   "': its rows are still referenced by foreign key '" +
                                                   link->fk.name + "' of table '" + link->child->schema.name + "'");
      }
  }
}

}  // namespace quereus
