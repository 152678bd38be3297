// DDL of secondary indexes and UNIQUE constraints (see index_ddl.h).
#include "ddl/index_ddl.h"

#include "catalog/ddl_names.h"

#include <spdlog/spdlog.h>

#include <set>

#include "catalog/registry.h"
#include "ddl/ddl_common.h"
#include "ddl/schema_expressions.h"
#include "parser/ast_printer.h"
#include "parser/ast_walk.h"
#include "planner/planner.h"
#include "eval/exec_context.h"
#include "write/indexes.h"

namespace quereus {

namespace {

IndexColumn index_column(DdlContext& db, const TableSchema& ts, const ast::IndexedColumn& ic,
                         const std::string& what) {
  int idx = ts.find_column(ic.name);
  if (idx < 0) throw Error(StatusCode::kError, "Column '" + ic.name + "' not found in table '" + ts.name + "' (" + what + ")");
  IndexColumn c;
  c.column = idx;
  c.desc = ic.desc;
  c.collation = ts.columns[idx].collation;
  if (!ic.collation.empty()) {
    c.collation = db.registry().find_collation(ic.collation);
    if (!c.collation) throw Error(StatusCode::kError, "Unknown collation: " + ic.collation);
  }
  return c;
}

bool has_index_named(const TableSchema& ts, const std::string& name) {
  for (const IndexSchema& ix : ts.indexes)
    if (iequals(ix.name, name)) return true;
  return false;
}

}  // namespace

void check_constraint_names(const TableSchema& ts) {
  std::set<std::string> seen;
  auto claim = [&](const std::string& name) {
    if (!name.empty() && !seen.insert(to_lower(name)).second)
      throw Error(StatusCode::kConstraint, "duplicate constraint name '" + name + "' on table '" + ts.name + "'");
  };
  for (const CheckSchema& ck : ts.checks) claim(ck.name);
  for (const IndexSchema& ix : ts.indexes)
    if (ix.constraint) claim(ix.name);
  for (const ForeignKeySchema& fk : ts.foreign_keys) claim(fk.name);
}

void add_unique_constraints(DdlContext& db, const ast::CreateTableStmt& s, TableSchema& ts) {
  auto add = [&](const std::string& name, std::vector<IndexColumn> cols, ast::ConflictClause on_conflict) {
    std::set<int> colset;
    for (const IndexColumn& c : cols) colset.insert(c.column);
    for (const IndexSchema& other : ts.indexes) {
      std::set<int> o;
      for (const IndexColumn& c : other.columns) o.insert(c.column);
      // Only two unnamed ones are the same rule; a named UNIQUE is its own identity.
      if (name.empty() && other.constraint && !other.constraint_named && o == colset) {
        std::string list;
        for (const IndexColumn& c : cols) list += (list.empty() ? "" : ", ") + ts.columns[c.column].name;
        throw Error(StatusCode::kConstraint, "an equivalent UNIQUE constraint on (" + list + ") already exists");
      }
    }
    // Two constraints deriving one structure name would share one structure.
    std::string derived = name;
    if (derived.empty()) {
      derived = "_uc";
      for (const IndexColumn& c : cols) derived += "_" + ts.columns[c.column].name;
    }
    IndexSchema probe;
    probe.constraint_named = !name.empty();
    probe.name = name;
    probe.columns = cols;
    for (const IndexSchema& other : ts.indexes)
      if (derives_same_structure(other, name, derived))
        throw Error(StatusCode::kError, "Cannot create table '" + ts.name + "': " + describe_unique(ts, other) + " and " +
                                            describe_unique(ts, probe) + " both derive backing structure name '" +
                                            derived + "'. Rename one of them.");
    IndexSchema ix;
    ix.unique = true;
    ix.constraint = true;
    ix.constraint_named = !name.empty();
    if (on_conflict != ast::ConflictClause::kNone) ix.on_conflict = declared_conflict(on_conflict);
    if (name.empty()) {
      std::string minted = "_uc";
      for (const IndexColumn& c : cols) minted += "_" + ts.columns[c.column].name;
      ix.name = minted;
      for (int n = 2; has_index_named(ts, ix.name); ++n) ix.name = minted + "_" + std::to_string(n);
    } else {
      if (has_index_named(ts, name))
        throw Error(StatusCode::kError, "Constraint '" + name + "' already exists on table '" + ts.name + "'");
      ix.name = name;
    }
    ix.columns = std::move(cols);
    ts.indexes.push_back(std::move(ix));
  };
  for (const ast::ColumnDef& cd : s.columns)
    for (const ast::ColumnConstraint& c : cd.constraints) {
      if (c.kind != ast::ColumnConstraint::Kind::kUnique) continue;
      ast::IndexedColumn ic;
      ic.name = cd.name;
      add(c.name, {index_column(db, ts, ic, "UNIQUE")}, c.on_conflict);
    }
  for (const ast::TableConstraint& tc : s.constraints) {
    if (tc.kind != ast::TableConstraint::Kind::kUnique) continue;
    std::vector<IndexColumn> cols;
    for (const ast::IndexedColumn& ic : tc.columns) cols.push_back(index_column(db, ts, ic, "UNIQUE"));
    add(tc.name, std::move(cols), tc.on_conflict);
  }
}

void create_index_storage(DdlContext& db, TableEntry& table, ExecContext&, DdlOrigin origin) {
  // The table is new and empty: the companions start empty too (or, reopening a
  // persistent database, hold what they held).
  table.index_tables.clear();
  table.index_runtime.reset();
  for (const IndexSchema& ix : table.schema.indexes) {
    auto comp = std::make_shared<TableEntry>();
    comp->schema = companion_schema(table.schema, ix);
    comp->module = table.module;
    comp->table = origin == DdlOrigin::kStoredCatalog ? table.module->connect(comp->schema)
                                                      : table.module->create(comp->schema);
    table.index_tables.push_back(std::move(comp));
  }
}

std::shared_ptr<TableEntry> find_index(DdlContext& db, const std::string& schema, const std::string& name,
                                       size_t* ordinal, bool user_only) {
  for (auto& t : db.catalog().tables()) {
    if (!iequals(t->schema.schema_name, schema)) continue;
    for (size_t i = 0; i < t->schema.indexes.size(); ++i)
      if (iequals(t->schema.indexes[i].name, name) && !(user_only && t->schema.indexes[i].constraint)) {
        if (ordinal) *ordinal = i;
        return t;
      }
  }
  return nullptr;
}

void create_index(DdlContext& db, const ast::CreateIndexStmt& s, const TagSet& tags, ExecContext& ctx,
                  DdlOrigin origin) {
  std::string schema_given = !s.index.schema.empty() ? s.index.schema : s.table.schema;
  ResolvedRelation rel = db.find_relation(schema_given, s.table.name);
  if (!rel.table && !rel.view)
    throw Error(StatusCode::kNotFound,  // errors.md: RelationNotFoundError
                "no such table: " + s.table.name + " (" + db.relation_not_found(schema_given, s.table.name) + ")", s.site);
  if (rel.view)
    throw Error(StatusCode::kError, "Cannot create index on view '" + rel.view->qualified_name() + "'", s.site);
  TableEntry& table = *rel.table;
  const std::string& schema = table.schema.schema_name;
  // Index names are unique per schema, except that another table's UNIQUE-constraint
  // structure is not a user object in that name space.
  for (const IndexSchema& ix : table.schema.indexes)
    if (iequals(ix.name, s.index.name)) {
      if (s.if_not_exists) return;
      throw Error(StatusCode::kError, "Index " + s.index.name + " already exists on table " + table.schema.name, s.site);
    }
  if (origin != DdlOrigin::kStoredCatalog) db.catalog().check_unreserved("index", schema, s.index.name);
  if (auto owner = find_index(db, schema, s.index.name, nullptr, /*user_only=*/true))
    throw Error(StatusCode::kError, "Index '" + s.index.name + "' already exists in schema '" + schema + "' on table '" +
                                        owner->schema.name + "'",
                s.site);
  IndexSchema ix;
  ix.name = s.index.name;
  ix.unique = s.unique;
  ix.tags = tags;
  for (const ast::IndexedColumn& ic : s.columns) ix.columns.push_back(index_column(db, table.schema, ic, "CREATE INDEX"));
  if (ix.columns.empty()) throw Error(StatusCode::kError, "CREATE INDEX needs at least one column", s.site);
  if (s.where) {
    // Membership must depend on the row alone: a subquery would make it change with other
    // rows (which index maintenance never revisits), and its plan, cached on the table,
    // would hold the table alive (a reference cycle).
    if (origin != DdlOrigin::kStoredCatalog && ast::contains_subquery(*s.where))
      throw Error(StatusCode::kError, "subqueries prohibited in partial index WHERE clauses", s.where->site);
    // A parameter has no value once the statement is gone (SQLite's words).
    if (origin != DdlOrigin::kStoredCatalog &&
        ast::contains_parameter(*s.where))
      throw Error(StatusCode::kError, "parameters prohibited in partial index WHERE clauses", s.where->site);
    // and so must a function's result: random() or 'now' would leave rows in the index
    // that its predicate no longer selects (SQLite refuses them too). No pragma opens it.
    if (origin != DdlOrigin::kStoredCatalog)
      require_deterministic(db.registry(), *s.where, "WHERE", "of partial index '" + s.index.name + "'", true, true,
                            BodySite::kHere, &table.schema,
                            "a partial index's membership must depend on the row alone", &db.catalog());
    ix.where = own_expr(*s.where);
    // Bind it now so an unknown column or function fails the CREATE.
    Planner planner(db);
    (void)planner.bind_expr(*ix.where, planner.table_scope(table, ""));
  }
  table.schema.indexes.push_back(std::move(ix));
  try {
    if (origin == DdlOrigin::kStoredCatalog) connect_index(table, table.schema.indexes.size() - 1);
    else {
      build_index(db, table, table.schema.indexes.size() - 1, ctx);
      repair_indexes_after_rollback(db, table, table.schema.indexes.size() - 1);
    }
  } catch (...) {
    table.schema.indexes.pop_back();
    table.index_runtime.reset();
    throw;
  }
  db.bump_schema_version();
  if (origin == DdlOrigin::kStatement) db.persist_table(table);
  if (db.changes().capturing())
    db.changes().record_schema(schema_event(SchemaChangeKind::kCreate, SchemaObjectKind::kIndex, table.schema,
                                            statement_to_string(s, schema), s.index.name));
}

bool reconcile_or_drop_index(DdlContext& db, TableEntry& table, size_t i, ExecContext& ctx, const std::string& why) {
  try {
    reconcile_index(db, table, i, ctx);
    return true;
  } catch (const Error& e) {
    if (e.code() != StatusCode::kConstraint) throw;
    std::string name = table.schema.indexes[i].name;
    db.run_schema_change([&] {
      drop_index_storage(db, table, i);
      db.bump_schema_version();
      db.persist_table(table);
    });
    spdlog::warn("index '{}' on {} dropped: {} ({})", name, table.qualified_name(), why, e.raw_message());
    return false;
  }
}

namespace {

// Where companion `comp` sits now (a rename or another DROP may have moved it): its
// table and ordinal, or null.
std::pair<std::shared_ptr<TableEntry>, size_t> find_companion(DdlContext& db, const std::shared_ptr<TableEntry>& comp) {
  for (const auto& t : db.catalog().tables())
    for (size_t k = 0; k < t->index_tables.size(); ++k)
      if (t->index_tables[k] == comp) return {t, k};
  return {nullptr, 0};
}

}  // namespace

void repair_indexes_after_rollback(DdlContext& db, TableEntry& table, size_t first) {
  if (!db.in_transaction()) return;
  for (size_t i = first; i < table.index_tables.size(); ++i) {
    std::weak_ptr<TableEntry> weak = table.index_tables[i];
    db.deferred().after_rollback([&db, weak](ExecContext& ctx) {
      std::shared_ptr<TableEntry> comp = weak.lock();
      if (!comp) return;  // dropped since
      if (auto [t, k] = find_companion(db, comp); t)
        reconcile_or_drop_index(db, *t, k, ctx, "the rollback restored rows it does not allow");
    });
    if (!table.schema.indexes[i].unique) continue;
    // The durable entries cover the committed rows, which the transaction's own writes
    // (a deleted duplicate) may be what made valid: marked in the same schema change as
    // the build, cleared when the transaction has ended either way.
    const std::string name = table.schema.indexes[i].name;
    db.mark_unvalidated_index(table, name, true);
    db.deferred().at_end([&db, weak, name, schema = table.schema.schema_name, tname = table.schema.name](ExecContext&) {
      std::shared_ptr<TableEntry> t;
      if (std::shared_ptr<TableEntry> comp = weak.lock()) t = find_companion(db, comp).first;
      if (!t) t = db.catalog().find(schema, tname);
      if (t) db.mark_unvalidated_index(*t, name, false);
    });
  }
}

void drop_index(DdlContext& db, const ast::DropStmt& s) {
  std::string schema = ddl_schema(s.name.schema);
  size_t ordinal = 0;
  // A UNIQUE constraint's index belongs to the constraint: it is not droppable by name.
  std::shared_ptr<TableEntry> table;
  for (const std::string& in : ddl_lookup_schemas(s.name.schema))
    if ((table = find_index(db, in, s.name.name, &ordinal, true))) break;
  if (!table) {
    if (s.if_exists) return;
    throw Error(StatusCode::kError, "no such index: " + s.name.name, s.site);
  }
  // The strict-DDL gate fires only for an index that exists: a name held only by a
  // constraint's structure is `no such index` whatever the policy.
  db.check_ddl_allowed("DROP INDEX");
  std::string index_name = table->schema.indexes[ordinal].name;
  drop_index_storage(db, *table, ordinal);
  db.bump_schema_version();
  db.persist_table(*table);
  if (db.changes().capturing())
    db.changes().record_schema(schema_event(SchemaChangeKind::kDrop, SchemaObjectKind::kIndex, table->schema,
                                            statement_to_string(s, table->schema.schema_name), index_name));
}

void drop_table_indexes(DdlContext& db, TableEntry& table) {
  while (!table.index_tables.empty()) drop_index_storage(db, table, table.index_tables.size() - 1);
}

}  // namespace quereus
