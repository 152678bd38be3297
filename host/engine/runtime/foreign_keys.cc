// Runtime: FOREIGN KEY resolution and lookups (see foreign_keys.h).
#include "runtime/foreign_keys.h"

#include "core/database_impl.h"
#include "planner/type_coercion.h"
#include "runtime/dml_writer.h"
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

// Reads the rows of `table` whose `cols` equal `probes` under `colls`, handing the
// seekable equalities to the module's access plan.
std::vector<Row> lookup(TableEntry& table, const std::vector<int>& cols, const Row& probes,
                        const std::vector<const Collation*>& colls, const std::vector<bool>& seekable,
                        std::optional<PlanResult>& cached_plan, size_t limit) {
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
      bool match = true;
      for (size_t i = 0; i < cols.size() && match; ++i)
        match = !row[cols[i]].is_null() && compare_values(row[cols[i]], probes[i], colls[i]) == 0;
      if (!match) continue;
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

FkLink resolve_fk(DatabaseImpl& db, const std::shared_ptr<TableEntry>& child, const ForeignKeySchema& fk) {
  FkLink link;
  link.fk = fk;
  link.child = child;
  link.parent = db.catalog().find(fk.referenced_schema, fk.referenced_table);
  if (!link.parent) return link;
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
  return link;
}

std::vector<std::shared_ptr<FkLink>> inbound_fks(DatabaseImpl& db, const std::shared_ptr<TableEntry>& parent) {
  std::vector<std::shared_ptr<FkLink>> out;
  for (auto& t : db.catalog().tables())
    for (const ForeignKeySchema& fk : t->schema.foreign_keys) {
      if (fk.referenced_schema != parent->schema.schema_name || !iequals(fk.referenced_table, parent->schema.name))
        continue;
      out.push_back(std::make_shared<FkLink>(resolve_fk(db, t, fk)));
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

std::string fk_check_message(const FkLink& link) { return "CHECK constraint failed: " + link.fk.name; }

bool parent_exists(const FkLink& link, const Row& values) {
  if (!link.parent)
    throw Error(StatusCode::kConstraint, fk_check_message(link) + " — referenced table '" + link.parent_name() +
                                             "' does not exist");
  const TableSchema& ps = link.parent->schema;
  Row probes;
  for (size_t i = 0; i < values.size(); ++i) {
    auto p = probe_value(values[i], ps.columns[link.parent_cols[i]], ps);
    if (!p || p->is_null()) return false;
    probes.push_back(std::move(*p));
  }
  return !lookup(*link.parent, link.parent_cols, probes, link.collations, link.parent_seekable, link.parent_plan, 1)
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
  return lookup(*link.child, link.fk.columns, probes, link.collations, link.child_seekable, link.child_plan, limit);
}

void guard_parent_drop(DatabaseImpl& db, const std::shared_ptr<TableEntry>& parent) {
  if (!db.options().foreign_keys) return;
  for (const auto& link : inbound_fks(db, parent)) {
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
