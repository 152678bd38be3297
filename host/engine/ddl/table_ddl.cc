// DDL of tables (see table_ddl.h).
#include "ddl/table_ddl.h"

#include <spdlog/spdlog.h>

#include "ddl/alter_table.h"

#include "catalog/ddl_names.h"
#include "catalog/derivation.h"

#include <algorithm>
#include <set>

#include "ddl/ddl_common.h"
#include "ddl/index_ddl.h"
#include "ddl/schema_expressions.h"
#include "ddl/tags.h"
#include "catalog/registry.h"
#include "ddl/ddl_context.h"
#include "transaction/assertions.h"
#include "eval/exec_context.h"
#include "parser/ast_printer.h"
#include "parser/ast_walk.h"
#include "types/conversions.h"
#include "write/foreign_keys.h"

namespace quereus {

namespace {

// Builds the TableSchema of one CREATE TABLE, clause family by clause family.
class TableSchemaBuilder {
 public:
  TableSchemaBuilder(DdlContext& db, const ast::CreateTableStmt& s, const std::string& schema) : db_(db), s_(s) {
    ts_.schema_name = schema;
    ts_.name = s.table.name;
    ts_.module_name = s.module_name.empty() ? db.options().default_vtab_module : s.module_name;
  }

  TableSchema build() {
    reserve_check_names();
    for (const ast::ColumnDef& cd : s_.columns) add_column(cd);
    // Column-level CHECKs once every column is in place: the determinism gate reads the
    // type of any column a body names, a later one included (`a int check (date(b) >
    // '2000-01-01'), b date`).
    for (const auto& [cd, c] : column_checks_) {
      add_check(c->name, "_check_" + cd->name, *c->expr, c->check_on, c->on_conflict);
      ts_.checks.back().named = true;  // a column's minted `_check_<column>` is a real name
    }
    for (const ast::TableConstraint& tc : s_.constraints) add_table_constraint(tc);
    settle_primary_key();
    add_unique_constraints(db_, s_, ts_);
    check_constraint_names(ts_);
    attach_create_table_tags(s_, ts_);
    set_module_options();
    check_foreign_key_collations();
    add_context_variables();
    validate_schema_expressions(db_, ts_);
    return std::move(ts_);
  }

 private:
  // Unnamed CHECKs are minted `_check_<column>` (column-level) or `_check_<index among
  // the table's checks>` (table-level), unnamed FOREIGN KEYs `_fk_<table>_<columns>`;
  // a mint that collides takes a `_<N>` suffix. The names the user wrote (CHECK, UNIQUE
  // and FOREIGN KEY share one case-folded namespace) are taken first, so a mint never
  // lands on one (sql-constraints.md §7).
  void reserve_check_names() {
    auto reserved = [](bool kind, const std::string& name) { return kind && !name.empty(); };
    using CK = ast::ColumnConstraint::Kind;
    using TK = ast::TableConstraint::Kind;
    for (const ast::ColumnDef& cd : s_.columns)
      for (const ast::ColumnConstraint& c : cd.constraints)
        if (reserved(c.kind == CK::kCheck || c.kind == CK::kForeignKey || c.kind == CK::kUnique, c.name))
          check_names_.insert(to_lower(c.name));
    for (const ast::TableConstraint& tc : s_.constraints)
      if (reserved(tc.kind == TK::kCheck || tc.kind == TK::kForeignKey || tc.kind == TK::kUnique, tc.name))
        check_names_.insert(to_lower(tc.name));
  }

  // `minted`, or `minted_<N>` for the first N >= 2 that is free; the name is taken.
  std::string mint(const std::string& minted) {
    std::string name = minted;
    for (int n = 2; check_names_.count(to_lower(name)); ++n) name = minted + "_" + std::to_string(n);
    check_names_.insert(to_lower(name));
    return name;
  }

  // One CHECK constraint, named `name` or minted from `minted`.
  void add_check(const std::string& name, const std::string& minted, const ast::Expr& e,
                 const std::vector<ast::RowOp>& ops, ast::ConflictClause on_conflict) {
    CheckSchema ck;
    ck.name = name;
    ck.named = !name.empty();
    if (on_conflict != ast::ConflictClause::kNone) ck.on_conflict = declared_conflict(on_conflict);
    if (ck.name.empty()) ck.name = mint(minted);
    if (ast::contains_parameter(e))
      throw Error(StatusCode::kError,
                  "CHECK constraint '" + ck.name + "' on table '" + ts_.name + "' may not reference bind parameters.",
                  e.site);
    if (!db_.options().nondeterministic_schema && !db_.reading_stored())
      require_deterministic(db_.registry(), e, "CHECK", "constraint '" + ck.name + "'", true, false, BodySite::kHere,
                            &ts_, nullptr, &db_.catalog());
    ck.expr = own_expr(e);
    set_check_ops(ck, ops);
    ts_.checks.push_back(std::move(ck));
  }

  void declare_primary_key(ast::ConflictClause on_conflict) {
    if (pk_seen_) throw Error(StatusCode::kError, "table \"" + ts_.name + "\" has more than one primary key");
    pk_seen_ = true;
    if (on_conflict != ast::ConflictClause::kNone) ts_.pk_conflict = declared_conflict(on_conflict);
  }

  // A column and its column-level PRIMARY KEY, FOREIGN KEY and CHECK (the column's own
  // clauses are build_column's; UNIQUE comes later, with the table's).
  void add_column(const ast::ColumnDef& cd) {
    if (ts_.find_column(cd.name) >= 0) throw Error(StatusCode::kError, "duplicate column name: " + cd.name);
    const int ordinal = static_cast<int>(ts_.columns.size());
    ts_.columns.push_back(build_column(db_, cd));
    for (const ast::ColumnConstraint& c : cd.constraints) {
      using K = ast::ColumnConstraint::Kind;
      switch (c.kind) {
        case K::kPrimaryKey:
          declare_primary_key(c.on_conflict);
          pk_.push_back({ordinal, c.desc});
          break;
        case K::kForeignKey:
          ts_.foreign_keys.push_back(foreign_key_of(c, {ordinal}, c.name.empty() ? mint("_fk_" + ts_.name + "_" + cd.name) : c.name,
                                                    ts_.schema_name, ts_.name));
          break;
        case K::kCheck:
          column_checks_.emplace_back(&cd, &c);
          break;
        default: break;
      }
    }
  }

  // A table-level CHECK, FOREIGN KEY or PRIMARY KEY (UNIQUE comes later).
  void add_table_constraint(const ast::TableConstraint& tc) {
    using K = ast::TableConstraint::Kind;
    if (tc.kind == K::kCheck) {
      add_check(tc.name, "_check_" + std::to_string(ts_.checks.size()), *tc.expr, tc.check_on, tc.on_conflict);
      return;
    }
    if (tc.kind == K::kForeignKey) {
      std::vector<int> cols;
      std::string minted = "_fk_" + ts_.name;
      for (const ast::IndexedColumn& ic : tc.columns) {
        int idx = ts_.find_column(ic.name);
        if (idx < 0) throw Error(StatusCode::kError, "FK column '" + ic.name + "' not found in table '" + ts_.name + "'");
        cols.push_back(idx);
        minted += "_" + ic.name;
      }
      ts_.foreign_keys.push_back(
          foreign_key_of(tc, std::move(cols), tc.name.empty() ? mint(minted) : tc.name, ts_.schema_name, ts_.name));
      return;
    }
    if (tc.kind != K::kPrimaryKey) return;
    declare_primary_key(tc.on_conflict);
    for (const ast::IndexedColumn& ic : tc.columns) {
      int idx = ts_.find_column(ic.name);
      if (idx < 0) throw Error(StatusCode::kError, "Column not found: " + ic.name + " in PRIMARY KEY of " + ts_.name);
      pk_.push_back({idx, ic.desc});
    }
  }

  // Without a declared PRIMARY KEY the table is keyed on every column.
  void settle_primary_key() {
    if (!pk_seen_)
      for (size_t i = 0; i < ts_.columns.size(); ++i) pk_.push_back({static_cast<int>(i), false});
    for (const KeyColumn& k : pk_) ts_.columns[k.column].primary_key = true;
    ts_.primary_key = pk_;
    ts_.primary_key_declared = pk_seen_;
  }

  // Module options: USING m(k = v) or the configuration's defaults for the module.
  void set_module_options() {
    if (s_.module_args.empty()) {
      if (db_.module_is_per_database(ts_.module_name)) return;
      if (const auto* configured = db_.configured_module_options(ts_.module_name)) ts_.module_options = *configured;
      return;
    }
    for (size_t i = 0; i < s_.module_args.size(); ++i) {
      const auto& a = s_.module_args[i];
      Value v;
      if (a.value && a.value->kind == ast::ExprKind::kLiteral) {
        auto& l = static_cast<const ast::Literal&>(*a.value);
        v = l.literal_kind == ast::LiteralKind::kString ? Value::Text(l.text) : parse_number(l.text, false);
        if (l.literal_kind == ast::LiteralKind::kTrue) v = Value::Boolean(true);
        if (l.literal_kind == ast::LiteralKind::kFalse) v = Value::Boolean(false);
      } else if (a.value) {
        v = Value::Text(expr_to_string(*a.value));
      }
      ts_.module_options.emplace_back(a.key.empty() ? std::to_string(i) : a.key, v);
    }
  }

  // A FOREIGN KEY whose parent is known now (or is this table) must not pair columns
  // declaring different collations; a parent declared later is checked at first use (the
  // corpus's 41.1 §10: its CREATE succeeds, the first write through the key fails). So a
  // stored definition can pair them: on reopen that is a warning, never a refusal — the
  // open meets the two tables in name order, and must not fail on what was accepted.
  void check_foreign_key_collations() {
    for (const ForeignKeySchema& fk : ts_.foreign_keys) {
      bool self = fk.referenced_schema == ts_.schema_name && iequals(fk.referenced_table, ts_.name);
      auto parent = self ? nullptr : db_.catalog().find(fk.referenced_schema, fk.referenced_table);
      if (!self && !parent) continue;
      try {
        validate_fk_collations(ts_, fk, self ? ts_ : parent->schema);
      } catch (const Error& e) {
        if (!db_.reading_stored()) throw;
        spdlog::warn("{} (kept as stored; a write through the key fails until the collations match)", e.what());
      }
    }
  }

  // WITH CONTEXT (name type [NULL | NOT NULL], …)
  void add_context_variables() {
    for (const ast::ColumnDef& var : s_.context) {
      for (const ContextVariable& prev : ts_.context)
        if (iequals(prev.name, var.name))
          throw Error(StatusCode::kError, "duplicate mutation context variable: " + var.name, var.site);
      ContextVariable cv;
      cv.name = var.name;
      cv.type_name = var.type_name;
      cv.logical_type = logical_type_from_name(var.type_name);
      cv.not_null = !db_.options().default_nullable;
      for (const ast::ColumnConstraint& c : var.constraints) {
        if (c.kind == ast::ColumnConstraint::Kind::kNull) cv.not_null = false;
        if (c.kind == ast::ColumnConstraint::Kind::kNotNull) cv.not_null = true;
      }
      ts_.context.push_back(std::move(cv));
    }
  }

  DdlContext& db_;
  const ast::CreateTableStmt& s_;
  TableSchema ts_;
  std::vector<KeyColumn> pk_;
  bool pk_seen_ = false;
  std::set<std::string> check_names_;
  std::vector<std::pair<const ast::ColumnDef*, const ast::ColumnConstraint*>> column_checks_;
};

// Undoes a table whose storage exists: its index companions, its participation in the
// transaction, the module's table, and (`in_catalog`) its catalog entry. A table attached
// from the stored catalog lets go of its handles but keeps its storage: the entry is
// retried (a DEFAULT reading a table that reopens later) or reported, never destroyed.
void discard_new_table(DdlContext& db, TableEntry& entry, bool in_catalog, DdlOrigin origin) {
  std::string sname = entry.schema.schema_name, tname = entry.schema.name;
  if (origin == DdlOrigin::kStatement) {
    drop_table_indexes(db, entry);
  } else {
    for (auto& c : entry.index_tables) {
      c->connection.reset();
      c->table.reset();
    }
    entry.index_tables.clear();
    entry.index_runtime.reset();
  }
  if (in_catalog) db.forget(entry);
  entry.connection.reset();
  entry.table.reset();
  if (origin == DdlOrigin::kStatement) entry.module->destroy(sname, tname);
  if (in_catalog) db.catalog().remove(sname, tname);
}

}  // namespace

TableSchema build_table_schema(DdlContext& db, const ast::CreateTableStmt& s, const std::string& schema) {
  return TableSchemaBuilder(db, s, schema).build();
}

void create_table(DdlContext& db, const ast::CreateTableStmt& s, ExecContext& ctx, DdlOrigin origin) {
  std::string schema = ddl_schema(s.table.schema, s.temporary);
  if (!db.catalog().has_schema(schema)) throw Error(StatusCode::kError, "Schema not found: " + schema);
  if (auto existing = db.catalog().find(schema, s.table.name)) {
    if (s.if_not_exists) return;
    if (existing->schema.derivation)  // a materialized view: materialized-views.md "One namespace"
      throw Error(StatusCode::kError, "Table " + schema + "." + existing->schema.name + " already exists (a materialized view)");
    throw Error(StatusCode::kError, "Table '" + s.table.name + "' already exists in schema '" + schema + "'");
  }
  if (db.catalog().find_view(schema, s.table.name))
    throw Error(StatusCode::kError, "Schema '" + schema + "': Cannot add table '" + s.table.name +
                                        "', a view with the same name already exists.");
  if (origin != DdlOrigin::kStoredCatalog) db.catalog().check_unreserved("table", schema, s.table.name);
  const std::string module_name = s.module_name.empty() ? db.options().default_vtab_module : s.module_name;
  auto module = db.module(module_name);
  if (!module) throw Error(StatusCode::kError, "No virtual table module named '" + module_name + "'");
  TableSchema ts = build_table_schema(db, s, schema);
  auto entry = std::make_shared<TableEntry>();
  entry->table = origin == DdlOrigin::kStoredCatalog ? module->connect(ts) : module->create(ts);
  entry->module = module;
  entry->schema = std::move(ts);
  try {
    create_index_storage(db, *entry, ctx, origin);
  } catch (...) {
    discard_new_table(db, *entry, false, origin);
    throw;
  }
  db.catalog().add(entry);
  // Generated bodies and defaults are resolved with the table in the catalog (a body may
  // read its own table); a declaration they refuse leaves no table behind.
  try {
    try {
      resolve_schema_expressions(db, *entry);
    } catch (const Error& e) {
      if (origin != DdlOrigin::kStoredCatalog || !db.reopening_unresolved() || e.code() != StatusCode::kNotFound)
        throw;
      spdlog::warn("table {}.{} reopens, but a DEFAULT or generated column of it reads what no longer exists ({}): "
                   "a statement that needs that body fails until it exists again",
                   entry->schema.schema_name, entry->schema.name, e.raw_message());
    }
    if (origin == DdlOrigin::kStatement) db.persist_table(*entry);
  } catch (...) {
    discard_new_table(db, *entry, true, origin);
    throw;
  }
  db.bump_schema_version();
  if (db.changes().capturing())
    db.changes().record_schema(schema_event(SchemaChangeKind::kCreate, SchemaObjectKind::kTable, entry->schema,
                                            statement_to_string(s, entry->schema.schema_name)));
}

void drop_table(DdlContext& db, const ast::DropStmt& s) {
  std::string schema = ddl_schema(s.name.schema);
  std::shared_ptr<TableEntry> entry;
  for (const std::string& in : ddl_lookup_schemas(s.name.schema))
    if ((entry = db.catalog().find(in, s.name.name))) break;
  if (!entry) {
    if (s.if_exists) return;
    // A view of that name is the wrong statement, not a missing table: say which one to use,
    // as SQLite does ("use DROP VIEW to delete view v") and as DROP VIEW redirects a
    // materialized view.
    for (const std::string& in : ddl_lookup_schemas(s.name.schema))
      if (db.catalog().find_view(in, s.name.name))
        throw Error(StatusCode::kError,
                    "Table '" + s.name.name + "' not found in schema '" + schema + "': '" + s.name.name +
                        "' is a view: use DROP VIEW",
                    s.site);
    throw Error(StatusCode::kNotFound, "Table '" + s.name.name + "' not found in schema '" + schema + "'");
  }
  db.assertions().guard_drop(s.object == ast::ObjectKind::kMaterializedView ? "materialized view" : "table",
                             entry->schema.schema_name,
                             entry->schema.name);
  guard_parent_drop(db, entry);
  // A stored expression of another table reading this one would fail on every write.
  std::string why = expression_dependent_of(db, *entry);
  if (why.empty())
    why = expression_dependent_via_views(db, false, entry->schema.schema_name, entry->schema.name, entry.get());
  if (!why.empty())
    throw Error(StatusCode::kConstraint,
                std::string("cannot drop ") +
                    (s.object == ast::ObjectKind::kMaterializedView ? "materialized view" : "table") + " '" +
                    entry->schema.schema_name + "." + entry->schema.name + "': " + why + " — drop or redefine it first",
                s.site);
  drop_table_indexes(db, *entry);
  entry->fk_links.reset();  // resolved keys point back at the table
  db.forget(*entry);
  std::string sname = entry->schema.schema_name, tname = entry->schema.name;
  entry->connection.reset();
  entry->table.reset();
  entry->module->destroy(sname, tname);
  db.catalog().remove(sname, tname);
  // A maintained table reading it no longer plans; should a table of that name come back,
  // the stored rows are not its body's over the new one: stale until REFRESH
  // (mv-schema-change.md).
  for (auto& t : db.catalog().tables()) {
    const auto& d = t->schema.derivation;
    if (!d || t->schema.tags.contains(kStaleTag)) continue;
    if (std::none_of(d->sources.begin(), d->sources.end(),
                     [&](const auto& src) { return src.first == sname && iequals(src.second, tname); }))
      continue;
    t->schema.tags.set(std::string(kStaleTag), "its source table '" + sname + "." + tname + "' was dropped");
    db.persist_table(*t);
  }
  db.bump_schema_version();
  db.unpersist_table(*entry);
  if (db.changes().capturing())
    db.changes().record_schema(
        schema_event(SchemaChangeKind::kDrop, SchemaObjectKind::kTable, entry->schema, statement_to_string(s, sname)));
}

}  // namespace quereus
