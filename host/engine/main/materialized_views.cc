// Materialized views and maintained tables: their statements (see materialized_views.h,
// docs/design-materialized-views.md).
#include "main/materialized_views.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <functional>

#include "catalog/ddl_names.h"
#include "catalog/derivation.h"
#include "common/status.h"
#include "common/strings.h"
#include "ddl/alter_table.h"
#include "ddl/schema_expressions.h"
#include "ddl/table_ddl.h"
#include "eval/exec_context.h"
#include "main/database_impl.h"
#include "maintained/maintenance.h"
#include "parser/ast_clone.h"
#include "parser/ast_walk.h"
#include "planner/planner.h"
#include "planner/scalar_expr.h"
#include "transaction/assertion_explain.h"
#include "catalog/function.h"
#include "types/logical_type.h"
#include "write/dml_writer.h"
#include "runtime/table_reads.h"
#include "write/indexes.h"

namespace quereus {

namespace {

// The table a maintained body derives: its columns and its primary key.
struct DerivedShape {
  std::vector<std::string> names;
  std::vector<Attribute> attrs;
  std::vector<KeyColumn> key;
};

[[noreturn]] void cannot_materialize(const std::string& name, const std::string& why, const SourceSite& site) {
  throw Error(StatusCode::kError,
              "materialized view '" + name + "' cannot be materialized: " + why +
                  ". A materialized view needs a key for its rows: project the source's primary key, or use a "
                  "plain view or CREATE TABLE … AS",
              site);
}

bool calls_nondeterministic(const ScalarExpr& e) {
  if (e.kind == ScalarKind::kFunction && !(static_cast<const FunctionScalar&>(e).fn->flags & kDeterministic))
    return true;
  for (const ScalarPtr* o : e.operands())
    if (calls_nondeterministic(**o)) return true;
  return false;
}

// A table function that is not deterministic (execution_trace(), schema(), …) read
// anywhere in a body, the subqueries of its expressions included; null when none is.
const TableFunction* nondeterministic_table_function(const RelNode& n);
const TableFunction* nondeterministic_table_function(const ScalarExpr& e) {
  if (e.kind == ScalarKind::kSubquery || e.kind == ScalarKind::kExists || e.kind == ScalarKind::kInSubquery) {
    const auto& sq = static_cast<const SubqueryScalar&>(e);
    if (sq.plan)
      if (const TableFunction* f = nondeterministic_table_function(*sq.plan)) return f;
  }
  for (const ScalarPtr* o : e.operands())
    if (*o)
      if (const TableFunction* f = nondeterministic_table_function(**o)) return f;
  return nullptr;
}
const TableFunction* nondeterministic_table_function(const RelNode& n) {
  if (n.kind == RelKind::kTableFunction) {
    const TableFunction* fn = static_cast<const TableFunctionNode&>(n).fn;
    if (fn && !(fn->flags & kDeterministic)) return fn;
  }
  for (const ScalarExpr* e : node_expressions(n))
    if (const TableFunction* f = nondeterministic_table_function(*e)) return f;
  for (const RelNode* c : n.children())
    if (const TableFunction* f = nondeterministic_table_function(*c)) return f;
  return nullptr;
}

// No maintenance keeps a non-deterministic body equal to itself: a projected column or
// a filter calling random(), now() or a volatile function refuses the create, and so does
// a body reading a table function that is not deterministic (its rows change with no
// write to a source).
void check_deterministic(const RelNode& root, const std::vector<std::string>& names, const std::string& view,
                         const SourceSite& site) {
  if (const TableFunction* f = nondeterministic_table_function(root))
    throw Error(StatusCode::kError,
                "materialized view '" + view + "' cannot be materialized: it reads table function '" + f->name +
                    "', which is not deterministic",
                site);
  for (const RelNode* n = &root; n;) {
    if (n->kind == RelKind::kProject) {
      const auto& p = static_cast<const ProjectNode&>(*n);
      for (size_t i = 0; i < p.exprs.size(); ++i)
        if (calls_nondeterministic(*p.exprs[i]))
          throw Error(StatusCode::kError,
                      "materialized view '" + view + "' cannot be materialized: non-deterministic expression column '" +
                          (p.exprs.size() == names.size() ? names[i] : p.columns[i].name) +
                          "'",
                      site);
    } else if (n->kind == RelKind::kFilter &&
               calls_nondeterministic(*static_cast<const FilterNode&>(*n).predicate)) {
      throw Error(StatusCode::kError,
                  "materialized view '" + view + "' cannot be materialized: its filter is non-deterministic", site);
    }
    auto children = n->children();
    n = children.size() == 1 ? children[0] : nullptr;
  }
}

// Plans `body` as the view will see it and derives the table it fills: the output names
// (renamed by `renames` when given), their types, and the primary key — the body's ORDER
// BY columns first (a scan of the table then follows the body's order), then a unique key
// of the body (materialized-views.md, "Primary key inference").
// Why a body's shape is derived. kAuthor: a statement authors the body, so a
// non-deterministic one is refused unless pragma nondeterministic_schema is on
// (determinism.md "Validation Timing"; mv-maintenance.md "Maintenance strategy").
// kReopen: the catalog's body, judged when it was authored. kRefresh: the view exists
// (REFRESH): the errors say what became of its body.
enum class ShapeFor { kAuthor, kReopen, kRefresh };

DerivedShape derive_shape(DatabaseImpl& db, const ast::Select& body, const std::string& schema, const std::string& name,
                          const std::vector<std::string>& renames, const SourceSite& site,
                          ShapeFor why = ShapeFor::kAuthor) {
  const bool refreshing = why == ShapeFor::kRefresh;
  Planner planner(db);
  QueryPlan qp;
  try {
    qp = planner.plan_view_body(body, schema);
  } catch (const Error& e) {
    // Not created yet, the view's own name finds nothing: say why it may not be there.
    if (!refreshing && e.code() == StatusCode::kNotFound) {
      std::vector<const ast::QualifiedName*> named;
      ast::named_sources(body, named);
      for (const ast::QualifiedName* n : named)
        if (iequals(n->name, name) && (n->schema.empty() || iequals(n->schema, schema)))
          throw Error(StatusCode::kError,
                      "materialized view '" + name + "': its body may not reference the view itself", site);
    }
    if (!refreshing) throw;
    throw Error(e.code(), "materialized view '" + name + "' no longer plans: " + e.raw_message(), site);
  }
  DerivedShape out;
  out.names = qp.names;
  out.attrs = qp.root->columns;
  if (!renames.empty()) {
    // The view's own column list is a declared interface: a body whose output count
    // moved under it is not widened or narrowed silently.
    if (renames.size() != out.names.size())
      throw Error(StatusCode::kError,
                  "materialized view '" + name + "' names " + std::to_string(renames.size()) +
                      " column(s) but its body produces " + std::to_string(out.names.size()) +
                      (refreshing ? " (drop and recreate it)" : ""),
                  site);
    out.names = renames;
  }
  for (size_t i = 0; i < out.names.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (iequals(out.names[i], out.names[j]))
        throw Error(StatusCode::kError,
                    "materialized view '" + name + "' has two columns named '" + out.names[i] + "'", site);
  if (why == ShapeFor::kAuthor && !db.options().nondeterministic_schema)
    check_deterministic(*qp.root, out.names, name, site);
  // The body's keys: those its plan carries, and those its functional dependencies prove
  // (a join that meets at most one row of the other side keeps its side's key).
  std::vector<std::vector<int>> keys = body_keys(*qp.root);
  bool coarsens = false;
  std::vector<int> key;
  if (keys.empty()) {
    // No key of the body: the source key through passthrough lineage, perhaps under a
    // coarser collation (the collation-weakening migration shape).
    key = coarsened_key(*qp.root, &coarsens);
    if (key.empty() && refreshing)
      throw Error(StatusCode::kError,
                  "materialized view '" + name +
                      "': its body's output shape changed incompatibly (it no longer proves a key for its rows); "
                      "drop and recreate it",
                  site);
    if (key.empty()) cannot_materialize(name, "its body has no provable unique key (its rows are a bag)", site);
    if (coarsens) {
      std::string cols;
      for (int c : key) cols += (cols.empty() ? "" : ", ") + out.names[c];
      spdlog::warn("materialized view '{}': backing key ({}) is coarser than the source primary key; colliding "
                   "source rows will last-write-win until they are merged",
                   name, cols);
    }
  } else {
    key = keys.front();
    for (const auto& k : keys)
      if (!k.empty() && (key.empty() || k.size() < key.size())) key = k;
  }
  if (key.empty())  // at most one row: the whole row is its key
    for (size_t i = 0; i < out.names.size(); ++i) key.push_back(static_cast<int>(i));
  auto add = [&](int column, bool desc) {
    for (const KeyColumn& k : out.key)
      if (k.column == column) return;
    out.key.push_back({column, desc});
  };
  // A coarsening key is the physical key exactly: leading it with the ORDER BY columns
  // would let colliding rows coexist.
  if (!coarsens) {
    for (const ast::OrderingTerm& term : body.order_by) {
      if (!term.expr || term.expr->kind != ast::ExprKind::kColumn) continue;
      const auto& ref = static_cast<const ast::ColumnRef&>(*term.expr);
      for (size_t i = 0; i < qp.names.size(); ++i)
        if (iequals(qp.names[i], ref.column)) {
          add(static_cast<int>(i), term.desc);
          break;
        }
    }
  }
  for (int c : key) add(c, false);
  return out;
}

// The column definitions of a derived shape, as CREATE TABLE would declare them.
void declare_shape(const DerivedShape& shape, ast::CreateTableStmt& out) {
  for (size_t i = 0; i < shape.names.size(); ++i) {
    ast::ColumnDef cd;
    cd.name = shape.names[i];
    const Attribute& a = shape.attrs[i];
    if (a.type != QRS_LT_ANY) cd.type_name = logical_type_name(a.type);
    ast::ColumnConstraint nn;
    nn.kind = a.nullable ? ast::ColumnConstraint::Kind::kNull : ast::ColumnConstraint::Kind::kNotNull;
    cd.constraints.push_back(std::move(nn));
    if (a.collation && a.collation != &Collation::binary()) {
      ast::ColumnConstraint coll;
      coll.kind = ast::ColumnConstraint::Kind::kCollate;
      coll.collation = a.collation->name();
      cd.constraints.push_back(std::move(coll));
    }
    out.columns.push_back(std::move(cd));
  }
  ast::TableConstraint pk;
  pk.kind = ast::TableConstraint::Kind::kPrimaryKey;
  for (const KeyColumn& k : shape.key) {
    ast::IndexedColumn ic;
    ic.name = shape.names[k.column];
    ic.desc = k.desc;
    pk.columns.push_back(std::move(ic));
  }
  out.constraints.push_back(std::move(pk));
}

// A declared maintained table must have exactly the shape its body derives.
void verify_declared(const TableSchema& declared, const DerivedShape& shape, const SourceSite& site) {
  auto fail = [&](const std::string& what) {
    throw Error(StatusCode::kError, "maintained table '" + declared.name + "': " + what, site);
  };
  if (declared.columns.size() != shape.names.size())
    fail("it declares " + std::to_string(declared.columns.size()) + " column(s) but its body produces " +
         std::to_string(shape.names.size()));
  for (size_t i = 0; i < shape.names.size(); ++i) {
    const ColumnSchema& c = declared.columns[i];
    const Attribute& a = shape.attrs[i];
    if (!iequals(c.name, shape.names[i]))
      fail("column " + std::to_string(i + 1) + " is declared '" + c.name + "' but the body names it '" +
           shape.names[i] + "'");
    if (a.type != QRS_LT_ANY && c.logical_type != a.type)
      fail("column '" + c.name + "' is declared " + logical_type_name(c.logical_type) + " but its body derives type " +
           logical_type_name(a.type));
    if (c.not_null == a.nullable)
      fail("column '" + c.name + "' is declared " + (c.not_null ? "NOT NULL" : "nullable") + " but the body derives " +
           (a.nullable ? "a nullable" : "a NOT NULL") + " column");
  }
  bool same = declared.primary_key.size() == shape.key.size();
  for (size_t i = 0; same && i < shape.key.size(); ++i)
    same = declared.primary_key[i].column == shape.key[i].column && declared.primary_key[i].desc == shape.key[i].desc;
  if (!same) {
    std::string derived;
    for (const KeyColumn& k : shape.key) derived += (derived.empty() ? "" : ", ") + shape.names[k.column];
    fail("its primary key is not the one its body derives (" + derived + ")");
  }
}

std::shared_ptr<TableEntry> find_table(DatabaseImpl& db, const ast::QualifiedName& name) {
  for (const std::string& in : ddl_lookup_schemas(name.schema))
    if (auto t = db.catalog().find(in, name.name)) return t;
  return nullptr;
}

// Undoes a maintained table whose fill failed: a new one is dropped whole; one reopened
// from the stored catalog lets go of its storage but keeps it (the entry is retried).
void discard(DatabaseImpl& db, const std::shared_ptr<TableEntry>& entry, DdlOrigin origin) {
  if (origin == DdlOrigin::kStatement) {
    ast::DropStmt drop;
    drop.name = {entry->schema.schema_name, entry->schema.name, {}};
    drop_table(db, drop);
    return;
  }
  db.forget(*entry);
  entry->connection.reset();
  entry->table.reset();
  db.catalog().remove(entry->schema.schema_name, entry->schema.name);
}

// The first fill: straight into the committed rows when no transaction is open (one
// atomic replacement, inside the statement's schema-change scope), otherwise through the
// transaction like any maintenance write. Either way the table's declared constraints
// and indexes see every row (docs/design-materialized-views.md, "Constraints").
void fill(DatabaseImpl& db, const std::shared_ptr<TableEntry>& entry, std::vector<Row> rows) {
  if (db.in_transaction()) {
    db.maintenance().replace_by_diff(*entry, std::move(rows));
    return;
  }
  check_set(entry->schema, rows);
  if (auto wp = bind_maintained_writes(db, entry)) {
    ExecContext ctx;
    db.open_execution(ctx);
    for (const Row& r : rows) DmlWriter::check_derived_row(db, *wp, r, ctx);
  }
  size_t next = 0;
  bool hosted = entry->table->replace_contents([&](Row& out) {
    if (next == rows.size()) return false;
    out = std::move(rows[next++]);
    return true;
  });
  if (!hosted)
    throw Error(StatusCode::kUnsupported, "module '" + entry->schema.module_name + "' cannot host maintained table '" +
                                              entry->qualified_name() + "'");
  if (entry->schema.indexes.empty()) return;
  ExecContext ctx;
  db.open_execution(ctx);
  try {
    rebuild_indexes(db, *entry, ctx);
  } catch (const Error& e) {
    if (e.code() != StatusCode::kConstraint) throw;
    throw Error(StatusCode::kConstraint, e.raw_message() + " — row derived into maintained table '" +
                                             entry->qualified_name() + "' collides on its declared UNIQUE constraint");
  }
}

// A CHECK that applies to derived rows may not name the OLD / NEW images: a derived row
// has no OLD image (a transition CHECK would be vacuous) and NEW is the row itself.
void refuse_image_checks(const TableSchema& ts, const SourceSite& site) {
  for (const CheckSchema& ck : ts.checks) {
    if (!ck.on_insert && !ck.on_update) continue;
    bool images = false;
    walk_expr(*ck.expr, [&](const ast::Expr& e, bool) {
      if (e.kind != ast::ExprKind::kColumn) return;
      const auto& ref = static_cast<const ast::ColumnRef&>(e);
      images |= ref.schema.empty() && (iequals(ref.table, "new") || iequals(ref.table, "old"));
    });
    if (images)
      throw Error(StatusCode::kError,
                  "maintained table '" + ts.name + "': CHECK constraint '" + ck.name +
                      "' references OLD/NEW row images; a derived row has no OLD image and NEW is the row itself "
                      "(name its columns unqualified)",
                  site);
  }
}

// A body only the full rebuild keeps current re-runs whole at every writing statement:
// over a large source that is pathological, so it is refused and steered to a plain
// view (mv-maintenance.md, "Maintenance strategy"). The largest source decides.
void refuse_large_rebuild(DatabaseImpl& db, const MaintenancePlan& plan, const std::string& name,
                          const SourceSite& site) {
  const int64_t limit = db.options().materialized_view_rebuild_row_threshold;
  if (plan.strategy != MaintenanceStrategy::kFullRebuild || limit <= 0) return;
  for (TableEntry* src : plan.sources) {
    if (!src->table || count_rows(*src, limit) <= limit) continue;
    throw Error(StatusCode::kError,
                "materialized view '" + name + "' cannot be materialized: only a full rebuild can maintain its body, "
                    "and its source '" + src->qualified_name() + "' holds more than " + std::to_string(limit) +
                    " rows, which every write would re-read; use a plain view, or raise the limit with pragma "
                    "materialized_view_rebuild_row_threshold (0 turns the check off)",
                site);
  }
}

// Stamps `entry` with the derivation of `body` and compiles its maintenance: refuses a
// body that reads the table itself, directly or through the maintained tables it reads
// (a derivation cycle, named by its path), and one that reads no table; with `size_gate`,
// one only the full rebuild keeps current over a source past the rebuild row threshold.
// `check_attributes` false: the table is about to be reshaped to the body (attach), so its
// columns' attributes are not yet the body's.
std::shared_ptr<MaintenancePlan> attach_derivation(DatabaseImpl& db, const std::shared_ptr<TableEntry>& entry,
                                                   const ast::Select& body, const std::vector<std::string>& columns,
                                                   bool sugar, const SourceSite& site, bool size_gate,
                                                   bool check_attributes = true) {
  auto d = std::make_shared<Derivation>();
  d->body = std::shared_ptr<const ast::Select>(clone(body));
  d->columns = columns;
  d->sugar = sugar;
  entry->schema.derivation = d;
  auto plan = compile_maintenance(db, entry, check_attributes);
  d->strategy = plan->strategy;
  const std::string& name = entry->schema.name;
  // Depth-first through the sources' derivations: a path back to `entry` is a cycle.
  std::vector<std::string> path{entry->qualified_name()};
  std::function<void(const TableEntry&)> visit = [&](const TableEntry& t) {
    if (!t.schema.derivation) return;
    for (const auto& [schema, source] : t.schema.derivation->sources) {
      auto next = db.catalog().find(schema, source);
      if (!next) continue;
      path.push_back(next->qualified_name());
      if (next == entry) {
        std::string chain;
        for (const std::string& p : path) chain += (chain.empty() ? "" : " -> ") + p;
        throw Error(StatusCode::kError, "materialized view '" + name + "': its body would close a derivation cycle (" +
                                            chain + ")", site);
      }
      if (path.size() < 64) visit(*next);
      path.pop_back();
    }
  };
  for (TableEntry* src : plan->sources) {
    if (src == entry.get())
      throw Error(StatusCode::kError, "materialized view '" + name + "': its body may not reference the view itself", site);
    d->sources.emplace_back(src->schema.schema_name, to_lower(src->schema.name));
    path.push_back(src->qualified_name());
    visit(*src);
    path.pop_back();
  }
  if (d->sources.empty()) cannot_materialize(name, "its body reads no source table, so no write could ever change it", site);
  if (size_gate) refuse_large_rebuild(db, *plan, name, site);
  return plan;
}

}  // namespace

void create_maintained_table(DatabaseImpl& db, const ast::CreateTableStmt& s, ExecContext& ctx, DdlOrigin origin,
                             bool sugar) {
  const std::string schema = ddl_schema(s.table.schema, s.temporary);
  if (db.catalog().find(schema, s.table.name) || db.catalog().find_view(schema, s.table.name)) {
    if (s.if_not_exists) return;
    throw Error(StatusCode::kError, "Table " + schema + "." + s.table.name + " already exists", s.site);
  }
  if (origin != DdlOrigin::kStoredCatalog) db.catalog().check_unreserved("table", schema, s.table.name);
  const std::string module_name = s.module_name.empty() ? db.options().default_vtab_module : s.module_name;
  auto module = db.module(module_name);
  if (!module) throw Error(StatusCode::kError, "No virtual table module named '" + module_name + "'", s.site);
  if (!module->capabilities().backing_host)
    throw Error(StatusCode::kUnsupported,
                "module '" + module_name + "' cannot host a maintained table: it is not a backing host (SDK 1.5)", s.site);
  DerivedShape shape = derive_shape(db, *s.maintained, schema, s.table.name, s.maintained_columns, s.site,
                                    origin == DdlOrigin::kStatement ? ShapeFor::kAuthor : ShapeFor::kReopen);
  create_table(db, s, ctx, origin);
  auto entry = db.catalog().find(schema, s.table.name);
  if (!entry) throw Error(StatusCode::kInternal, "maintained table '" + s.table.name + "' was not created", s.site);
  try {
    if (!sugar) verify_declared(entry->schema, shape, s.site);
    refuse_image_checks(entry->schema, s.site);
    // A reopened view keeps its rows however large its sources grew.
    auto plan = attach_derivation(db, entry, *s.maintained, s.maintained_columns, sugar, s.site,
                                  /*size_gate=*/origin == DdlOrigin::kStatement);
    // Reopened from the catalog of the module that holds its rows and every source's, the
    // table is already equal to its body: each commit wrote the sources and the view in
    // one batch. A view whose sources live elsewhere (a memory table) is refilled.
    bool persisted = origin == DdlOrigin::kStoredCatalog && entry->module->capabilities().persistent &&
                     std::all_of(plan->sources.begin(), plan->sources.end(),
                                 [&](const TableEntry* src) { return src->module == entry->module; });
    if (!persisted) {
      fill(db, entry, db.maintenance().evaluate(*plan));
      db.maintenance().note_fill(*entry);
    }
    if (origin == DdlOrigin::kStatement) db.persist_table(*entry);
  } catch (...) {
    discard(db, entry, origin);
    throw;
  }
  db.bump_schema_version();
}

void adopt_maintained_table(DatabaseImpl& db, const ast::CreateTableStmt& s, ExecContext& ctx) {
  create_table(db, s, ctx, DdlOrigin::kStoredCatalog);
  auto entry = db.catalog().find(ddl_schema(s.table.schema, s.temporary), s.table.name);
  if (!entry) throw Error(StatusCode::kInternal, "maintained table '" + s.table.name + "' was not created", s.site);
  auto d = std::make_shared<Derivation>();
  d->body = std::shared_ptr<const ast::Select>(clone(*s.maintained));
  d->columns = s.maintained_columns;
  d->sugar = false;
  entry->schema.derivation = d;
  db.bump_schema_version();
  spdlog::warn("maintained table '{}' reopened with rows its body no longer derives as they are; it serves them "
               "unmaintained until REFRESH MATERIALIZED VIEW (or a drop and recreate) — see "
               "materialized_view_info()",
               entry->qualified_name());
}

void create_materialized_view(DatabaseImpl& db, const ast::CreateMaterializedViewStmt& s, ExecContext& ctx) {
  const std::string schema = ddl_schema(s.view.schema);
  if (db.catalog().find(schema, s.view.name) || db.catalog().find_view(schema, s.view.name)) {
    if (s.if_not_exists) return;
    throw Error(StatusCode::kError, "Table " + schema + "." + s.view.name + " already exists", s.site);
  }
  DerivedShape shape = derive_shape(db, *s.select, schema, s.view.name, s.columns, s.site);
  ast::CreateTableStmt t;
  t.site = s.site;
  t.text_begin = s.text_begin;
  t.text_end = s.text_end;
  t.table = s.view;
  t.module_name = s.module_name;
  for (const ast::ModuleArg& a : s.module_args) t.module_args.push_back(clone(a));
  declare_shape(shape, t);
  t.maintained = clone(*s.select);
  t.maintained_columns = s.columns;
  t.tags = clone(s.tags);
  create_maintained_table(db, t, ctx, DdlOrigin::kStatement, /*sugar=*/true);
}

namespace {

// Runs one ALTER TABLE arm on maintained table `entry` as if it were plain (the reshape of
// a refresh: the arms' module hooks, validations and catalog swap, without the guard that
// keeps users from reshaping a maintained table).
void alter_backing(DatabaseImpl& db, const std::shared_ptr<TableEntry>& entry, ast::AlterTableStmt& stmt,
                   ExecContext& ctx) {
  stmt.table = {entry->schema.schema_name, entry->schema.name, {}};
  alter_table(db, stmt, ctx);
}

std::string collation_name(const Collation* c) { return c ? c->name() : std::string("BINARY"); }

// Brings the columns of `entry` (a maintained table whose body's output moved) to
// `shape` in place — the same table, its rows kept — or refuses before changing anything:
// the primary key must be the same columns in the same order, and the columns both have
// must keep their names and positions (trailing columns may come and go). Columns are
// dropped and added (nullable) before the reconcile; type, collation and NOT NULL are set
// after it, so they judge the body's rows rather than the stale ones (the reference's
// two-phase reshape). `reconcile` brings the rows to the body between the two phases.
// The columns of `ts` an in-place reshape to `shape` renames (by position); throws, with
// nothing changed, when no in-place reshape expresses the change.
std::vector<size_t> reshape_renames(const TableSchema& ts, const DerivedShape& shape, const SourceSite& site,
                                    bool sugar = true) {
  const std::string& name = ts.name;
  auto incompatible = [&](const std::string& why) {
    throw Error(StatusCode::kError,
                std::string(sugar ? "materialized view '" : "maintained table '") + name +
                    "': its body's output shape changed incompatibly (" + why +
                    "); the table is unchanged: alter the table to the new shape and re-attach, or drop and recreate "
                    "(detach with ALTER TABLE … DROP MAINTAINED, alter it, attach again with SET MAINTAINED AS)",
                site);
  };
  // Columns correspond by position: the kept ones may be renamed in place (a positional
  // rename relabels the rows), trailing ones come and go. A name that moved to another
  // position is an interleaving reorder, which no in-place reshape expresses.
  const size_t kept = std::min(ts.columns.size(), shape.names.size());
  auto shape_has = [&](const std::string& n) {
    return std::any_of(shape.names.begin(), shape.names.end(), [&](const std::string& x) { return iequals(x, n); });
  };
  std::vector<size_t> renamed;
  for (size_t i = 0; i < kept; ++i) {
    if (iequals(ts.columns[i].name, shape.names[i])) continue;
    if (ts.find_column(shape.names[i]) >= 0 || shape_has(ts.columns[i].name))
      incompatible("column " + std::to_string(i + 1) + " is now '" + shape.names[i] + "', was '" + ts.columns[i].name +
                   "', and one of the two names sits at another position (a reorder)");
    renamed.push_back(i);
  }
  for (size_t i = kept; i < shape.names.size(); ++i)
    if (ts.find_column(shape.names[i]) >= 0) incompatible("column '" + shape.names[i] + "' moved");
  // The primary key: the same positions, directions and collations (a renamed key
  // column is the same key, relabeled).
  bool same_key = ts.primary_key.size() == shape.key.size();
  for (size_t i = 0; same_key && i < shape.key.size(); ++i) {
    const KeyColumn& k = ts.primary_key[i];
    same_key = k.column == shape.key[i].column && static_cast<size_t>(k.column) < kept && k.desc == shape.key[i].desc &&
               collation_name(ts.columns[k.column].collation.get()) ==
                   collation_name(shape.attrs[shape.key[i].column].collation);
  }
  if (!same_key) incompatible("its primary key moved");
  for (const KeyColumn& k : ts.primary_key) {
    const Attribute& a = shape.attrs[k.column];
    if (a.type != QRS_LT_ANY && a.type != ts.columns[k.column].logical_type)
      incompatible("the type of its primary key column '" + ts.columns[k.column].name + "' moved");
  }
  return renamed;
}

void reshape(DatabaseImpl& db, const std::shared_ptr<TableEntry>& entry, const DerivedShape& shape,
             const SourceSite& site, ExecContext& ctx, const std::function<void()>& reconcile) {
  const TableSchema& ts = entry->schema;
  const std::vector<size_t> renamed = reshape_renames(ts, shape, site, !ts.derivation || ts.derivation->sugar);
  const size_t kept = std::min(ts.columns.size(), shape.names.size());
  using A = ast::AlterTableStmt::Action;
  using C = ast::AlterTableStmt::ColumnAction;
  auto column_step = [](A action, const std::string& name) {
    ast::AlterTableStmt step;
    step.action = action;
    step.name = name;
    return step;
  };
  auto alter_column = [](C what, const std::string& name) {
    ast::AlterTableStmt step;
    step.action = A::kAlterColumn;
    step.column_action = what;
    step.name = name;
    return step;
  };
  std::vector<ast::AlterTableStmt> drops, renames;
  for (size_t i = ts.columns.size(); i-- > kept;) drops.push_back(column_step(A::kDropColumn, ts.columns[i].name));
  for (size_t i : renamed) {
    renames.push_back(column_step(A::kRenameColumn, ts.columns[i].name));
    renames.back().new_name = shape.names[i];
  }
  std::shared_ptr<const Derivation> derivation = entry->schema.derivation;
  entry->schema.derivation.reset();  // the arms refuse a maintained table
  // The steps that land before the reconcile, undone (newest first) when a later one
  // fails on an engine without a schema-change scope (the memory module's catalog):
  // renames back, added columns dropped, loosened columns tightened again. A dropped
  // column cannot come back, so every drop and rename is checked before the first lands
  // — a dependent (an assertion, another table's CHECK, a view) refuses the statement with
  // the table untouched.
  std::vector<ast::AlterTableStmt> undo;
  try {
    for (ast::AlterTableStmt& step : drops) {
      step.table = {entry->schema.schema_name, entry->schema.name, {}};
      check_alter_table(db, step, ctx);
    }
    for (ast::AlterTableStmt& step : renames) {
      step.table = {entry->schema.schema_name, entry->schema.name, {}};
      check_alter_table(db, step, ctx);
    }
    for (ast::AlterTableStmt& step : drops) alter_backing(db, entry, step, ctx);
    for (ast::AlterTableStmt& step : renames) {
      alter_backing(db, entry, step, ctx);
      undo.push_back(column_step(A::kRenameColumn, step.new_name));
      undo.back().new_name = step.name;
    }
    for (size_t i = 0; i < kept; ++i)
      if (entry->schema.columns[i].not_null && shape.attrs[i].nullable) {
        ast::AlterTableStmt loosen = alter_column(C::kDropNotNull, shape.names[i]);
        alter_backing(db, entry, loosen, ctx);
        undo.push_back(alter_column(C::kSetNotNull, shape.names[i]));
      }
    for (size_t i = kept; i < shape.names.size(); ++i) {
      ast::AlterTableStmt add;
      add.action = A::kAddColumn;
      add.column = std::make_unique<ast::ColumnDef>();
      add.column->name = shape.names[i];
      if (shape.attrs[i].type != QRS_LT_ANY) add.column->type_name = logical_type_name(shape.attrs[i].type);
      ast::ColumnConstraint null;
      null.kind = ast::ColumnConstraint::Kind::kNull;
      add.column->constraints.push_back(std::move(null));
      alter_backing(db, entry, add, ctx);
      undo.push_back(column_step(A::kDropColumn, shape.names[i]));
    }
    entry->schema.derivation = derivation;
    db.bump_schema_version();
    reconcile();
    undo.clear();  // the rows are the body's now: the new shape stays
    entry->schema.derivation.reset();
    for (size_t i = 0; i < shape.names.size(); ++i) {
      const ColumnSchema& c = entry->schema.columns[i];
      const Attribute& a = shape.attrs[i];
      if (a.type != QRS_LT_ANY && c.logical_type != a.type) {
        ast::AlterTableStmt retype = alter_column(C::kSetDataType, c.name);
        retype.type_name = logical_type_name(a.type);
        alter_backing(db, entry, retype, ctx);
      }
      if (collation_name(entry->schema.columns[i].collation.get()) != collation_name(a.collation)) {
        ast::AlterTableStmt recollate = alter_column(C::kSetCollate, shape.names[i]);
        recollate.collation = collation_name(a.collation);
        alter_backing(db, entry, recollate, ctx);
      }
      if (!entry->schema.columns[i].not_null && !a.nullable) {
        ast::AlterTableStmt tighten = alter_column(C::kSetNotNull, shape.names[i]);
        alter_backing(db, entry, tighten, ctx);
      }
    }
  } catch (...) {
    entry->schema.derivation.reset();
    for (size_t i = undo.size(); i-- > 0;) {
      try {
        alter_backing(db, entry, undo[i], ctx);
      } catch (const std::exception& e) {
        spdlog::warn("maintained table '{}': undoing a reshape step failed: {}", entry->qualified_name(), e.what());
      }
    }
    entry->schema.derivation = derivation;
    db.bump_schema_version();
    throw;
  }
  entry->schema.derivation = derivation;
  db.bump_schema_version();
}

// Whether `ts` has exactly the columns (names, types, nullability, collations) `shape`
// derives.
bool same_shape(const TableSchema& ts, const DerivedShape& shape) {
  if (ts.columns.size() != shape.names.size()) return false;
  for (size_t i = 0; i < shape.names.size(); ++i) {
    const ColumnSchema& c = ts.columns[i];
    const Attribute& a = shape.attrs[i];
    if (!iequals(c.name, shape.names[i]) || (a.type != QRS_LT_ANY && c.logical_type != a.type) ||
        c.not_null == a.nullable || collation_name(c.collation.get()) != collation_name(a.collation))
      return false;
  }
  if (ts.primary_key.size() != shape.key.size()) return false;
  for (size_t i = 0; i < shape.key.size(); ++i)
    if (ts.primary_key[i].column != shape.key[i].column || ts.primary_key[i].desc != shape.key[i].desc) return false;
  return true;
}

}  // namespace

void refresh_materialized_view(DatabaseImpl& db, const ast::RefreshMaterializedViewStmt& s, ExecContext& ctx) {
  auto entry = find_table(db, s.view);
  if (!entry || !entry->schema.derivation)
    throw Error(StatusCode::kError, "no such materialized view: " + s.view.name, s.site);
  const Derivation& d = *entry->schema.derivation;
  DerivedShape shape =
      derive_shape(db, *d.body, entry->schema.schema_name, entry->schema.name, d.columns, s.site, ShapeFor::kRefresh);
  // A stale view (quereus.mv.stale) is live again once its rows are its body's: the tag
  // goes in the same batch as the rows (restored if the refresh fails).
  const TagSet tags = entry->schema.tags;
  const bool was_stale = entry->schema.tags.erase(kStaleTag);
  if (was_stale) db.bump_schema_version();
  // (Compiled here, not taken from the index: mid-reshape the column attributes lag.)
  auto reconcile = [&] {
    auto plan = compile_maintenance(db, entry, /*check_attributes=*/false);
    db.maintenance().replace_by_diff(*entry, db.maintenance().evaluate(*plan));
  };
  try {
    if (same_shape(entry->schema, shape)) {
      reconcile();
      if (was_stale) {
        db.commit_statement_in_schema_scope();
        db.persist_table(*entry);
      }
      return;
    }
    // The body's output moved (a source ALTER reached it): reshape the table in place, its
    // rows reconciled in the statement (committed inside the schema-change scope, so the
    // store writes the new shape and the rows in one batch).
    reshape(db, entry, shape, s.site, ctx, [&] {
      reconcile();
      db.commit_statement_in_schema_scope();
    });
  } catch (...) {
    if (was_stale) {
      entry->schema.tags = tags;
      db.bump_schema_version();
    }
    throw;
  }
  db.persist_table(*entry);
}

namespace {

std::shared_ptr<TableEntry> require_altered(DatabaseImpl& db, const ast::AlterTableStmt& s) {
  auto entry = find_table(db, s.table);
  if (!entry) throw Error(StatusCode::kNotFound, "no such table: " + s.table.name, s.table.site);
  return entry;
}

}  // namespace

void set_maintained(DatabaseImpl& db, const ast::AlterTableStmt& s, ExecContext& ctx) {
  const std::shared_ptr<TableEntry> entry = require_altered(db, s);
  const std::string& module_name = entry->schema.module_name;
  if (!entry->module || !entry->module->capabilities().backing_host)
    throw Error(StatusCode::kUnsupported,
                "module '" + module_name + "' cannot host a maintained table: it is not a backing host (SDK 1.5)", s.site);
  DerivedShape shape =
      derive_shape(db, *s.maintained, entry->schema.schema_name, entry->schema.name, s.maintained_columns, s.site);
  // Reshape-on-attach: the body owns the shape. A table whose columns differ from the
  // body's is brought to them in place (positional renames — a bare re-attach follows the
  // body's names, a `(cols)` list the authored ones —, trailing columns dropped or added,
  // attributes moved); a moved key or a reorder is refused with the table untouched.
  const bool reshaping = !same_shape(entry->schema, shape);
  if (reshaping) {  // refuses before anything changes
    reshape_renames(entry->schema, shape, s.site, entry->schema.derivation && entry->schema.derivation->sugar);
    // The reshape runs as ALTER steps: a declared constraint or index a step or the
    // reconcile could trip on part-way would leave the table half reshaped.
    const TableSchema& ts = entry->schema;
    if (!ts.checks.empty() || !ts.foreign_keys.empty() || !ts.indexes.empty())
      throw Error(StatusCode::kError,
                  "table '" + ts.name + "' cannot be reshaped to its body's columns while it declares CHECK, FOREIGN "
                  "KEY, UNIQUE constraints or indexes; the table is unchanged: alter it to the body's shape first, "
                  "or drop them",
                  s.site);
  }
  else verify_declared(entry->schema, shape, s.site);
  refuse_image_checks(entry->schema, s.site);
  // A re-attach keeps its authored form (sugar or table form); a plain table takes the
  // table form.
  std::shared_ptr<const Derivation> prior = entry->schema.derivation;
  std::string prior_stale = entry->stale;
  const TagSet prior_tags = entry->schema.tags;
  bool sugar = prior && prior->sugar;
  try {
    auto plan = attach_derivation(db, entry, *s.maintained, s.maintained_columns, sugar, s.site, /*size_gate=*/true,
                                  !reshaping);
    entry->stale.clear();
    entry->schema.tags.erase(kStaleTag);  // an attach recomputes the rows: live again
    db.bump_schema_version();
    // Verify by diff: derived content wins, only genuine row changes are written (and
    // checked against the table's constraints), in the statement's transaction.
    auto reconcile = [&] {
      auto p = reshaping ? compile_maintenance(db, entry, /*check_attributes=*/false) : plan;
      db.maintenance().replace_by_diff(*entry, db.maintenance().evaluate(*p));
    };
    if (reshaping) {
      reshape(db, entry, shape, s.site, ctx, [&] {
        reconcile();
        db.commit_statement_in_schema_scope();
      });
      db.persist_table(*entry);
    } else {
      reconcile();
      db.persist_table(*entry);
      db.commit_statement_in_schema_scope();
    }
  } catch (...) {
    entry->schema.tags = prior_tags;
    entry->schema.derivation = prior;
    entry->stale = prior_stale;
    db.bump_schema_version();
    throw;
  }
}

void drop_maintained(DatabaseImpl& db, const ast::AlterTableStmt& s) {
  const std::shared_ptr<TableEntry> entry = require_altered(db, s);
  if (!entry->schema.derivation)
    throw Error(StatusCode::kError, "table '" + entry->schema.name + "' is not maintained", s.site);
  entry->schema.derivation.reset();
  entry->stale.clear();
  db.bump_schema_version();
  db.persist_table(*entry);
}

void drop_materialized_view(DatabaseImpl& db, const ast::DropStmt& s) {
  auto entry = find_table(db, s.name);
  if (!entry) {
    if (s.if_exists) return;
    if (db.catalog().find_view(ddl_schema(s.name.schema), s.name.name))
      throw Error(StatusCode::kError, "'" + s.name.name + "' is not a materialized view: use DROP VIEW", s.site);
    throw Error(StatusCode::kError, "no such materialized view: " + s.name.name, s.site);
  }
  if (!entry->schema.derivation)
    throw Error(StatusCode::kError, "'" + s.name.name + "' is not a materialized view: use DROP TABLE", s.site);
  // Gated once there is a table to drop (a no-op IF EXISTS resolves no module).
  db.check_ddl_allowed("DROP MATERIALIZED VIEW");
  ast::DropStmt drop;
  drop.site = s.site;
  drop.object = ast::ObjectKind::kMaterializedView;
  drop.name = {entry->schema.schema_name, entry->schema.name, {}};
  drop_table(db, drop);
}

}  // namespace quereus
