#include "ddl/declarative/declared_schema.h"
#include "catalog/derivation.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <set>

#include <openssl/evp.h>

#include "common/status.h"
#include "ddl/ddl_context.h"
#include "transaction/assertions.h"
#include "ddl/alter_table.h"
#include "ddl/index_ddl.h"
#include "ddl/declarative/schema_differ.h"
#include "ddl/tags.h"
#include "parser/ast.h"
#include "parser/ast_clone.h"
#include "parser/ast_printer.h"

namespace quereus {
namespace {

// Runs a function at start and yields no rows.
class SchemaActionExec : public Executable {
 public:
  explicit SchemaActionExec(std::function<void(ExecContext&)> fn) : fn_(std::move(fn)) {}
  void start(ExecContext& ctx) override { fn_(ctx); }
  bool next(Row&) override { return false; }

 private:
  std::function<void(ExecContext&)> fn_;
};

// A statement the catalog owns: a deep copy, so it outlives the prepared statement it
// was written in (and may be adjusted, e.g. qualified). Its text range pointed into that
// statement's SQL, which is not kept.
ast::StatementPtr own_statement(const ast::Statement& s) {
  ast::StatementPtr copy = ast::clone(s);
  copy->text_begin = copy->text_end = 0;
  return copy;
}

// Runs one statement of an apply. An error that places itself nowhere (a constraint the
// existing rows break) is placed at the declared item the statement came from.
void run(DdlContext& db, const ast::Statement& stmt, ExecContext& ctx) {
  try {
    auto exec = db.plan(stmt);
    exec->start(ctx);
    Row r;
    while (exec->next(r)) {
    }
  } catch (const Error& e) {
    if (e.site() || stmt.site.line <= 0) throw;
    throw Error(e.code(), e.raw_message(), stmt.site);
  }
}

std::string qualified(const std::string& schema, const std::string& name) {
  return quote_identifier(schema) + "." + quote_identifier(name);
}

// The declared name of an item that occupies a namespace, and that namespace.
struct ItemName {
  const char* kind = nullptr;  // "Table", "View", "Index", "Materialized view", "Assertion"
  ast::QualifiedName* name = nullptr;
  bool relation = false;  // tables, views and materialized views share one namespace
};

ItemName item_name(ast::Statement& s) {
  using K = ast::StmtKind;
  switch (s.kind) {
    case K::kCreateTable: return {"Table", &static_cast<ast::CreateTableStmt&>(s).table, true};
    case K::kCreateView: return {"View", &static_cast<ast::CreateViewStmt&>(s).view, true};
    case K::kCreateIndex: return {"Index", &static_cast<ast::CreateIndexStmt&>(s).index, false};
    case K::kCreateMaterializedView:
      return {"Materialized view", &static_cast<ast::CreateMaterializedViewStmt&>(s).view, true};
    case K::kCreateAssertion: return {"Assertion", &static_cast<ast::CreateAssertionStmt&>(s).name, false};
    default: return {};
  }
}


// DIFF / APPLY SCHEMA validate every declared object's reserved tags up front (views at
// the view-ddl site too, unlike a direct CREATE VIEW), before the duplicate-name check,
// so a typo fails the whole migration before anything changes.
void validate_declared_tags(const ast::Statement& stmt) {
  switch (stmt.kind) {
    case ast::StmtKind::kCreateTable: validate_create_table_tags(static_cast<const ast::CreateTableStmt&>(stmt)); break;
    case ast::StmtKind::kCreateIndex:
      validate_reserved_tags(static_cast<const ast::CreateIndexStmt&>(stmt).tags, TagSite::kPhysicalIndex);
      break;
    case ast::StmtKind::kCreateView:
      validate_reserved_tags(static_cast<const ast::CreateViewStmt&>(stmt).tags, TagSite::kViewDdl);
      break;
    case ast::StmtKind::kCreateMaterializedView:
      validate_reserved_tags(static_cast<const ast::CreateMaterializedViewStmt&>(stmt).tags, TagSite::kViewDdl);
      break;
    default: break;
  }
}

struct Planned {
  ast::StatementPtr stmt;
  std::string key;   // "schema.name" for applied-record bookkeeping ("" when none)
  std::string text;  // canonical declaration text
  bool create = true;
  bool replace = false;  // an existing view whose body changed: dropped, then created
  bool early = false;    // a view created before the ALTERs (its body names renamed columns by their old names)
};

// What applying a declaration does: the objects of the schema it no longer names
// (dropped), and its items in creation order (tables, indexes, views, the rest), each
// either to create or already matching. Refusals (a duplicate name, an object that
// differs from its declaration) are thrown here, before anything changes.
// A statement the differ adds to migrate tag drift (run with the "others"): the whole
// declared tag set on one site.
Planned drift_statement(ast::StatementPtr stmt) {
  Planned p;
  p.text = statement_to_string(*stmt);
  p.stmt = std::move(stmt);
  return p;
}

// ALTER VIEW | INDEX schema.name SET TAGS (…).
Planned object_tags_statement(ast::ObjectKind kind, const std::string& schema, const std::string& name,
                              const ast::TagList& tags) {
  auto a = std::make_unique<ast::AlterTagsStmt>();
  a->object = kind;
  a->name = {schema, name, {}};
  a->verb = ast::TagVerb::kSet;
  a->tags = ast::clone(tags);
  return drift_statement(std::move(a));
}

// ALTER TABLE schema.table [ALTER COLUMN c | ALTER CONSTRAINT k] SET TAGS (…).
Planned table_tags_statement(const std::string& schema, const std::string& table,
                             ast::AlterTableStmt::TagTarget target, const std::string& name,
                             const ast::TagList& tags) {
  auto a = std::make_unique<ast::AlterTableStmt>();
  a->action = ast::AlterTableStmt::Action::kTags;
  a->table = {schema, table, {}};
  a->tag_target = target;
  a->name = name;
  a->tag_verb = ast::TagVerb::kSet;
  a->tags = ast::clone(tags);
  return drift_statement(std::move(a));
}

// Tag drift on a table that otherwise matches its declaration: a whole-set SET TAGS per
// drifted site (the table, each column, each named table-level constraint).
void table_tag_drift(const std::string& schema, const TableSchema& live, const ast::CreateTableStmt& decl,
                     const std::set<std::string>& readded, std::vector<Planned>& out) {
  using T = ast::AlterTableStmt::TagTarget;
  if (tags_drift(live.tags, decl.tags)) out.push_back(table_tags_statement(schema, live.name, T::kTable, "", decl.tags));
  for (const ast::ColumnDef& cd : decl.columns) {
    int idx = live.find_column(cd.name);
    if (idx >= 0 && tags_drift(live.columns[idx].tags, cd.tags))
      out.push_back(table_tags_statement(schema, live.name, T::kColumn, live.columns[idx].name, cd.tags));
  }
  for (const ast::TableConstraint& tc : decl.constraints) {
    if (tc.name.empty() || readded.count(to_lower(tc.name))) continue;  // re-added with its tags
    const TagSet* current = nullptr;
    for (const CheckSchema& ck : live.checks)
      if (ck.named && iequals(ck.name, tc.name)) current = &ck.tags;
    for (const IndexSchema& ix : live.indexes)
      if (ix.constraint && iequals(ix.name, tc.name)) current = &ix.tags;
    for (const ForeignKeySchema& fk : live.foreign_keys)
      if (iequals(fk.name, tc.name)) current = &fk.tags;
    if (current && tags_drift(*current, tc.tags))
      out.push_back(table_tags_statement(schema, live.name, T::kConstraint, tc.name, tc.tags));
  }
}

struct SchemaPlan {
  std::string schema;
  std::shared_ptr<const ast::DeclareSchemaStmt> decl;
  RenamePolicy policy = RenamePolicy::kAllow;
  std::set<std::string> renamed_from;  // lower-case live names a declared table renames
  std::vector<std::pair<ast::ObjectKind, std::string>> drops;
  std::vector<Planned> tables, indexes, views, others;
  // The ALTER TABLE statements migrating existing tables (the differ), in run order:
  // the statement apply runs and the text diff shows (unqualified in main).
  struct Alter {
    std::unique_ptr<ast::AlterTableStmt> stmt;
    std::string shown;
  };
  std::vector<Alter> alters;
};

// The names a declaration's items claim, per namespace, and the tables it declares.
struct DeclaredNames {
  std::map<std::string, const char*> relations, indexes, assertions;
  std::set<std::string> tables;
};

// The declaration of schema `name` (lowercased: `schema`), refused when none is stored or
// it is at another version than `to_version` (when given).
std::shared_ptr<const ast::DeclareSchemaStmt> find_declaration(DdlContext& db, const std::string& schema,
                                                              const std::string& name,
                                                              const std::string& to_version,
                                                              const SourceSite& site) {
  auto& store = db.declared_schemas();
  auto it = store.declared.find(schema);
  if (it == store.declared.end())
    throw Error(StatusCode::kError, "No declared schema found for '" + name + "'", site);
  const ast::DeclareSchemaStmt& decl = *it->second;
  if (!to_version.empty() && to_version != decl.version)
    throw Error(StatusCode::kError, "Schema '" + name + "' is declared at version '" + decl.version +
                                        "', not '" + to_version + "'",
                site);
  return it->second;
}

// The declaration's `default_vtab_module` option, unquoted ("" when none).
std::string default_module(const ast::DeclareSchemaStmt& decl) {
  std::string module;
  for (const auto& opt : decl.options)
    if (iequals(opt.key, "default_vtab_module") && opt.value) {
      module = expr_to_string(*opt.value);
      if (module.size() >= 2 && module.front() == '\'') module = module.substr(1, module.size() - 2);
    }
  return module;
}

// Claims an item's name in its namespace; refuses a name declared twice.
void claim_name(DeclaredNames& names, const ItemName& n, ast::StmtKind kind, const std::string& schema_name,
                const SourceSite& site) {
  const std::string lname = to_lower(n.name->name);
  auto& claimed = n.relation ? names.relations : kind == ast::StmtKind::kCreateAssertion ? names.assertions : names.indexes;
  if (auto prev = claimed.find(lname); prev != claimed.end()) {
    if (std::string(prev->second) == n.kind)
      throw Error(StatusCode::kError, std::string(n.kind) + " '" + n.name->name +
                                          "' is declared more than once in schema '" + schema_name + "'",
                  site);
    throw Error(StatusCode::kError, "'" + n.name->name + "' is declared as both a " + to_lower(prev->second) +
                                        " and a " + to_lower(n.kind) + " in schema '" + schema_name + "'",
                site);
  }
  claimed[lname] = n.kind;
}

// The live table a declared table renames (sql-ddl.md "Rename detection"): the one
// carrying the same "quereus.id", else the first live name of its "quereus.previous_name"
// list; null when none (or when the id names the declared table itself). Both a live
// table of the declared name and a hinted other one is a conflict.
std::shared_ptr<TableEntry> hinted_table(Catalog& cat, const std::string& schema, const ast::CreateTableStmt& table,
                                         const SourceSite& site) {
  const std::string& name = table.table.name;
  std::shared_ptr<TableEntry> hinted;
  bool id_decides = false;
  if (std::optional<std::string> id = rename_hint_id(table.tags)) {
    for (const auto& t : cat.tables()) {
      if (t->schema.schema_name != schema) continue;
      const TagValue* v = t->schema.tags.find("quereus.id");
      if (!v || !std::holds_alternative<std::string>(*v) || std::get<std::string>(*v) != *id) continue;
      id_decides = true;
      if (!iequals(t->schema.name, name)) hinted = t;
      break;
    }
  }
  if (!id_decides)
    for (const std::string& old : rename_hint_names(table.tags))
      if (!iequals(old, name))
        if (auto t = cat.find(schema, old)) {
          hinted = t;
          break;
        }
  if (hinted && cat.find(schema, name))
    throw Error(StatusCode::kError,
                "Rename conflict for table '" + name + "': both '" + schema + "." + name + "' and its rename hint's '" +
                    schema + "." + hinted->schema.name + "' exist",
                site);
  return hinted;
}

// Whether live table `t` is maintained by exactly `body` with rename list `columns`
// (compared as canonical text, so a re-apply of the same declaration changes nothing).
bool same_derivation(const TableSchema& t, const ast::Select& body, const std::vector<std::string>& columns) {
  if (!t.derivation || !t.derivation->body) return false;
  if (t.derivation->columns.size() != columns.size()) return false;
  for (size_t i = 0; i < columns.size(); ++i)
    if (!iequals(t.derivation->columns[i], columns[i])) return false;
  return select_to_string(*t.derivation->body) == select_to_string(body);
}

// ALTER TABLE schema.table SET MAINTAINED [(cols)] AS body / DROP MAINTAINED: the
// lifecycle verbs the differ migrates a derivation with (materialized-views.md,
// "Declarative-schema integration") — never a drop and re-create, which would mint a new
// table incarnation.
MigrationStep derivation_step(const std::string& schema, const std::string& table, const ast::Select* body,
                              const std::vector<std::string>& columns, const SourceSite& site) {
  auto a = std::make_unique<ast::AlterTableStmt>();
  a->action = body ? ast::AlterTableStmt::Action::kSetMaintained : ast::AlterTableStmt::Action::kDropMaintained;
  a->table = {schema, table, site};
  a->site = site;
  if (body) {
    a->maintained = ast::clone(*body);
    a->maintained_columns = columns;
  }
  // Shown as the reference prints the lifecycle verbs (lower-case, as the statement
  // reads back; corpus 50-declarative-schema), unqualified in main.
  std::string shown =
      "alter table " + (schema == "main" ? quote_identifier(table) : qualified(schema, table)) + " ";
  if (!body) return {std::move(a), shown + "drop maintained"};
  shown += "set maintained ";
  if (!columns.empty()) {
    shown += "(";
    for (size_t i = 0; i < columns.size(); ++i) shown += (i ? ", " : "") + quote_identifier(columns[i]);
    shown += ") ";
  }
  return {std::move(a), shown + "as " + select_to_string(*body)};
}

// A declared materialized view over a live table of its name: an unchanged derivation
// is left alone; a changed body (or a plain table) is re-attached by SET MAINTAINED, its
// rows reconciled by keyed diff.
void plan_declared_materialized_view(DdlContext& db, SchemaPlan& plan, Planned p, const std::string& name,
                                     const SourceSite& site) {
  const std::string& schema = plan.schema;
  auto& mv = static_cast<ast::CreateMaterializedViewStmt&>(*p.stmt);
  if (auto live = db.catalog().find(schema, name)) {
    p.create = false;
    if (!same_derivation(live->schema, *mv.select, mv.columns)) {
      MigrationStep step = derivation_step(schema, live->schema.name, mv.select.get(), mv.columns, site);
      plan.alters.push_back({std::move(step.stmt), std::move(step.text)});
    }
  } else if (db.catalog().find_view(schema, name)) {
    throw Error(StatusCode::kUnsupported,
                "'" + schema + "." + name + "' is a view but is declared as a materialized view; replacing it is not "
                "supported yet",
                site);
  }
  plan.others.push_back(std::move(p));
}

// A declared table: an existing one is migrated in place by the differ's ALTERs (and its
// tag drift); a new one is created.
void plan_declared_table(DdlContext& db, SchemaPlan& plan, Planned p, const std::string& name,
                         const SourceSite& site) {
  const std::string& schema = plan.schema;
  Catalog& cat = db.catalog();
  std::shared_ptr<TableEntry> live = cat.find(schema, name);
  const auto& declared_stmt = static_cast<const ast::CreateTableStmt&>(*p.stmt);
  std::shared_ptr<TableEntry> renamed;
  if (plan.policy != RenamePolicy::kDeny) renamed = hinted_table(cat, schema, declared_stmt, site);
  if (renamed) {
    // ALTER TABLE <old> RENAME TO <declared>, then the migration of the renamed table.
    auto a = std::make_unique<ast::AlterTableStmt>();
    a->action = ast::AlterTableStmt::Action::kRenameTable;
    a->table = {schema, renamed->schema.name, declared_stmt.site};
    a->new_name = name;
    a->site = declared_stmt.site;
    std::string shown = "ALTER TABLE " +
                        (schema == "main" ? quote_identifier(renamed->schema.name) : qualified(schema, renamed->schema.name)) +
                        " RENAME TO " + quote_identifier(name);
    plan.alters.push_back({std::move(a), std::move(shown)});
    plan.renamed_from.insert(to_lower(renamed->schema.name));
    live = renamed;
  }
  if (live) {
    // An existing table is migrated in place by the ALTERs the differ generates.
    const auto& declared = declared_stmt;
    TableSchema live_schema = live->schema;
    live_schema.name = name;  // a renamed table is migrated under its new name
    TableMigration m = diff_table(db, live_schema, declared, plan.policy);
    const std::string shown_target =
        "ALTER TABLE " + (schema == "main" ? quote_identifier(name) : qualified(schema, name)) + " ";
    // The derivation: a maintained table whose columns move is detached first (its shape
    // is its body's), migrated, and re-attached; a changed body alone is re-attached; a
    // table declared plain is detached.
    const bool live_maintained = live->schema.derivation != nullptr;
    const bool declared_maintained = declared.maintained != nullptr;
    const bool body_moves =
        declared_maintained && !same_derivation(live->schema, *declared.maintained, declared.maintained_columns);
    const bool detach = live_maintained && (!declared_maintained || !m.actions.empty());
    if (detach) {
      MigrationStep step = derivation_step(schema, name, nullptr, {}, declared.site);
      plan.alters.push_back({std::move(step.stmt), std::move(step.text)});
    }
    for (MigrationStep& step : m.actions) {
      step.stmt->table = {schema, name, declared.site};
      step.stmt->site = declared.site;
      plan.alters.push_back({std::move(step.stmt), shown_target + step.text});
    }
    if (declared_maintained && (body_moves || detach)) {
      MigrationStep step = derivation_step(schema, name, declared.maintained.get(),
                                           declared.maintained_columns, declared.site);
      plan.alters.push_back({std::move(step.stmt), std::move(step.text)});
    }
    p.create = false;
    table_tag_drift(schema, live_schema, declared, m.readded, plan.others);
  } else if (cat.find_view(schema, name)) {
    throw Error(StatusCode::kUnsupported,
                "'" + schema + "." + name + "' is a view but is declared as a table; replacing it is not supported yet",
                site);
  }
  plan.tables.push_back(std::move(p));
}

// Whether a declared view and (a copy of) a live one have the same definition, tags
// aside (tag drift is migrated in place). `live` is adjusted: its tags and schema dropped.
bool same_view_body(ast::CreateViewStmt& declared, ast::CreateViewStmt& live) {
  live.tags.clear();
  live.view.schema = declared.view.schema;
  ast::TagList declared_tags = std::move(declared.tags);
  declared.tags.clear();
  const bool same = statement_to_string(declared) == statement_to_string(live);
  declared.tags = std::move(declared_tags);
  return same;
}

// A declared view: an existing one must match its declaration (tags may drift and are
// migrated); a new one is created.
void plan_declared_view(DdlContext& db, SchemaPlan& plan, Planned p, const std::string& name,
                        const SourceSite& site) {
  const std::string& schema = plan.schema;
  Catalog& cat = db.catalog();
  auto& store = db.declared_schemas();
  if (auto live = cat.find_view(schema, name)) {
    auto rec = store.applied.find(p.key);
    // A tag-only difference is migrated in place (SET TAGS), never by re-creating.
    auto& declared = static_cast<ast::CreateViewStmt&>(*p.stmt);
    auto live_def = own_statement(*live->definition);
    const bool body_same = same_view_body(declared, static_cast<ast::CreateViewStmt&>(*live_def));
    if (body_same && tags_drift(live->tags, declared.tags))
      plan.others.push_back(object_tags_statement(ast::ObjectKind::kView, schema, live->name, declared.tags));
    // A changed body is migrated by drop + create (sql-ddl.md "Rename detection": views
    // have no in-place primitive).
    p.create = !body_same && (rec == store.applied.end() || rec->second != p.text) && live->sql != p.text;
    p.replace = p.create;
  } else if (cat.find(schema, name)) {
    throw Error(StatusCode::kUnsupported,
                "'" + schema + "." + name + "' is a table but is declared as a view; replacing it is not supported yet",
                site);
  }
  plan.views.push_back(std::move(p));
}

// A live view that reads a table or column this diff renames: its body is compared as the
// renames will leave it (the rename propagation rewrites it), so an unchanged-in-spirit
// view is neither dropped nor re-created (sql-ddl.md "Rename detection"). The comparison
// of plan_declared_view saw the body before the renames; views it marked for re-creation
// are looked at again once every table is planned.
void reconcile_renamed_views(DdlContext& db, SchemaPlan& plan) {
  using A = ast::AlterTableStmt::Action;
  std::vector<const ast::AlterTableStmt*> renames;
  for (const auto& a : plan.alters)
    if (a.stmt->action == A::kRenameTable || a.stmt->action == A::kRenameColumn) renames.push_back(a.stmt.get());
  if (renames.empty()) return;
  const std::string& schema = plan.schema;
  auto renamed = [&](ast::Select& body) {
    for (const ast::AlterTableStmt* r : renames) {
      const std::string& in = r->table.schema.empty() ? schema : r->table.schema;
      if (r->action == A::kRenameTable) rename_in_view_body(db, schema, body, in, r->table.name, "", r->new_name);
      else rename_in_view_body(db, schema, body, in, r->table.name, r->name, r->new_name);
    }
  };
  // A maintained table's re-attach (SET MAINTAINED, not after its detach) whose body only
  // differs by the renames: the propagation rewrites the live body, nothing to re-attach.
  for (auto it = plan.alters.begin(); it != plan.alters.end();) {
    const ast::AlterTableStmt& a = *it->stmt;
    auto live = a.action == A::kSetMaintained ? db.catalog().find(schema, a.table.name) : nullptr;
    const bool detached = std::any_of(plan.alters.begin(), it, [&](const SchemaPlan::Alter& b) {
      return b.stmt->action == A::kDropMaintained && iequals(b.stmt->table.name, a.table.name);
    });
    if (live && live->schema.derivation && live->schema.derivation->body && a.maintained && !detached) {
      auto body = ast::clone(*live->schema.derivation->body);
      renamed(*body);
      TableSchema probe = live->schema;
      auto d = std::make_shared<Derivation>(*probe.derivation);
      d->body = std::shared_ptr<const ast::Select>(std::move(body));
      probe.derivation = std::move(d);
      if (same_derivation(probe, *a.maintained, a.maintained_columns)) {
        it = plan.alters.erase(it);
        continue;
      }
    }
    ++it;
  }
  for (Planned& p : plan.views) {
    if (!p.replace) continue;
    auto& declared = static_cast<ast::CreateViewStmt&>(*p.stmt);
    auto live = db.catalog().find_view(schema, declared.view.name);
    if (!live || !live->definition) continue;
    auto copy = own_statement(*live->definition);
    auto& live_def = static_cast<ast::CreateViewStmt&>(*copy);
    if (!live_def.select) continue;
    renamed(*live_def.select);
    if (!same_view_body(declared, live_def)) continue;
    p.create = p.replace = false;
    if (tags_drift(live->tags, declared.tags))
      plan.others.push_back(object_tags_statement(ast::ObjectKind::kView, schema, live->name, declared.tags));
  }
  // A view this apply creates whose body reads a column the diff renames is created
  // before the ALTERs, its body naming the old column; the RENAME COLUMN's propagation
  // then rewrites it (the reference's migration order: view creates precede the table
  // alters, and CREATE VIEW resolves its body when it runs).
  for (Planned& p : plan.views) {
    if (!p.create) continue;
    ast::StatementPtr copy = ast::clone(*p.stmt);
    auto& v = static_cast<ast::CreateViewStmt&>(*copy);
    if (!v.select) continue;
    bool changed = false;
    for (auto r = renames.rbegin(); r != renames.rend(); ++r) {
      if ((*r)->action != A::kRenameColumn) continue;
      const std::string& in = (*r)->table.schema.empty() ? schema : (*r)->table.schema;
      changed = rename_in_view_body(db, schema, *v.select, in, (*r)->table.name, (*r)->new_name, (*r)->name) || changed;
    }
    if (!changed) continue;
    p.stmt = std::move(copy);
    p.early = true;
  }
}

// Whether live index `ix` of `table` is the one `ci` declares: its table, columns, their
// order, direction and collation (a column's own when the declaration names none),
// uniqueness and partial predicate. Tags are compared apart (they migrate in place).
bool index_matches(const TableSchema& table, const IndexSchema& ix, const ast::CreateIndexStmt& ci) {
  if (!iequals(table.name, ci.table.name) || ix.unique != ci.unique || ix.columns.size() != ci.columns.size())
    return false;
  for (size_t i = 0; i < ix.columns.size(); ++i) {
    const IndexColumn& live = ix.columns[i];
    const ast::IndexedColumn& decl = ci.columns[i];
    const ColumnSchema& col = table.columns[static_cast<size_t>(live.column)];
    if (live.desc != decl.desc || !iequals(col.name, decl.name)) return false;
    const std::string declared_collation = decl.collation.empty() ? col.collation->name() : decl.collation;
    const std::string live_collation = live.collation ? live.collation->name() : col.collation->name();
    if (!iequals(declared_collation, live_collation)) return false;
  }
  if (!ix.where != !ci.where) return false;
  return !ix.where || expr_to_sql(*ix.where) == expr_to_sql(*ci.where);
}

// One declared item (not a seed): qualified into the schema, its name claimed, then
// planned by kind.
void plan_declared_item(DdlContext& db, SchemaPlan& plan, const ast::Statement& item, const std::string& module,
                        const std::string& schema_name, DeclaredNames& names) {
  const std::string& schema = plan.schema;
  Planned p;
  p.stmt = own_statement(item);
  validate_declared_tags(*p.stmt);
  ItemName n = item_name(*p.stmt);
  if (!n.kind) {
    plan.others.push_back(std::move(p));
    return;
  }
  if (!n.name->schema.empty() && !iequals(n.name->schema, schema))
    throw Error(StatusCode::kError, std::string(n.kind) + " '" + n.name->schema + "." + n.name->name +
                                        "' names another schema inside the declaration of schema '" + schema_name + "'",
                item.site);
  n.name->schema = schema;
  if (p.stmt->kind == ast::StmtKind::kCreateIndex) {
    auto& ix = static_cast<ast::CreateIndexStmt&>(*p.stmt);
    if (ix.table.schema.empty()) ix.table.schema = schema;
  }
  if (p.stmt->kind == ast::StmtKind::kCreateTable) {
    auto& ct = static_cast<ast::CreateTableStmt&>(*p.stmt);
    if (ct.module_name.empty() && !module.empty()) ct.module_name = module;
  }
  claim_name(names, n, p.stmt->kind, schema_name, item.site);
  const std::string lname = to_lower(n.name->name);
  p.key = schema + "." + lname;
  p.text = statement_to_string(*p.stmt);
  const std::string object_name = n.name->name;
  if (p.stmt->kind == ast::StmtKind::kCreateTable) {
    names.tables.insert(lname);
    plan_declared_table(db, plan, std::move(p), object_name, item.site);
  } else if (p.stmt->kind == ast::StmtKind::kCreateView) {
    plan_declared_view(db, plan, std::move(p), object_name, item.site);
  } else if (p.stmt->kind == ast::StmtKind::kCreateMaterializedView) {
    plan_declared_materialized_view(db, plan, std::move(p), object_name, item.site);
  } else if (p.stmt->kind == ast::StmtKind::kCreateIndex) {
    const auto& ci = static_cast<const ast::CreateIndexStmt&>(*p.stmt);
    size_t ordinal = 0;
    if (auto owner = find_index(db, schema, ci.index.name, &ordinal, /*user_only=*/true)) {
      if (!index_matches(owner->schema, owner->schema.indexes[ordinal], ci)) {
        // A changed body (table, columns, order, collations, uniqueness, predicate): there
        // is no in-place redefinition, so it is dropped (before the ALTERs) and built again.
        plan.drops.emplace_back(ast::ObjectKind::kIndex, owner->schema.indexes[ordinal].name);
        plan.indexes.push_back(std::move(p));
        return;
      }
      p.create = false;  // an existing index is left alone (IF NOT EXISTS), its tags migrated
      if (tags_drift(owner->schema.indexes[ordinal].tags, ci.tags))
        plan.others.push_back(object_tags_statement(ast::ObjectKind::kIndex, schema,
                                                    owner->schema.indexes[ordinal].name, ci.tags));
    }
    plan.indexes.push_back(std::move(p));
  } else {
    // Materialized views, assertions: their own CREATE (refused while unsupported). An
    // existing assertion with the declared CHECK is kept; a changed one is dropped and
    // created again.
    if (p.stmt->kind == ast::StmtKind::kCreateAssertion) {
      const auto& ca = static_cast<const ast::CreateAssertionStmt&>(*p.stmt);
      for (const auto& a : db.assertions().list())
        if (a->schema_name == schema && iequals(a->name, ca.name.name)) {
          if (expr_to_sql(*a->check) == expr_to_sql(*ca.check)) p.create = false;
          else plan.drops.emplace_back(ast::ObjectKind::kAssertion, a->name);
        }
    }
    plan.others.push_back(std::move(p));
  }
}

// Refuses seed data for a table the declaration does not declare (the first such seed).
void check_seed_tables(const ast::DeclareSchemaStmt& decl, const std::set<std::string>& declared_tables,
                       const std::string& schema_name) {
  const ast::SeedStmt* seeds_for_unknown = nullptr;
  for (const auto& item : decl.items) {
    if (item->kind != ast::StmtKind::kSeed) continue;
    const auto& seed = static_cast<const ast::SeedStmt&>(*item);
    if (!declared_tables.count(to_lower(seed.table)) && !seeds_for_unknown) seeds_for_unknown = &seed;
  }
  if (seeds_for_unknown)
    throw Error(StatusCode::kError, "Seed data for table '" + seeds_for_unknown->table +
                                        "' names no table declared in schema '" + schema_name + "'",
                seeds_for_unknown->site);
}

// The schema's objects the declaration no longer names, added to plan.drops.
void plan_drops(DdlContext& db, SchemaPlan& plan, const DeclaredNames& names) {
  const std::string& schema = plan.schema;
  Catalog& cat = db.catalog();
  // The schema's tables and views the declaration no longer names are dropped: a table
  // after the dropped tables whose FOREIGN KEYs reference it (children first).
  std::vector<const TableSchema*> doomed;
  for (const auto& t : cat.tables())
    if (t->schema.schema_name == schema && !names.relations.count(to_lower(t->schema.name)) &&
        !plan.renamed_from.count(to_lower(t->schema.name)))
      doomed.push_back(&t->schema);
  while (!doomed.empty()) {
    auto referenced = [&](const TableSchema* parent) {
      for (const TableSchema* child : doomed)
        if (child != parent)
          for (const ForeignKeySchema& fk : child->foreign_keys)
            if (fk.referenced_schema == schema && iequals(fk.referenced_table, parent->name)) return true;
      return false;
    };
    auto next = std::find_if(doomed.begin(), doomed.end(), [&](const TableSchema* t) { return !referenced(t); });
    if (next == doomed.end()) next = doomed.begin();  // a reference cycle: catalog order
    plan.drops.emplace_back(ast::ObjectKind::kTable, (*next)->name);
    doomed.erase(next);
  }
  for (const auto& v : cat.views())
    if (v->schema_name == schema && !names.relations.count(to_lower(v->name)))
      plan.drops.emplace_back(ast::ObjectKind::kView, v->name);
  for (const auto& a : db.assertions().list())
    if (a->schema_name == schema && !names.assertions.count(to_lower(a->name)))
      plan.drops.emplace_back(ast::ObjectKind::kAssertion, a->name);
  // User indexes (not a UNIQUE constraint's structure) the declaration no longer names.
  for (const auto& t : cat.tables())
    if (t->schema.schema_name == schema)
      for (const IndexSchema& ix : t->schema.indexes)
        if (!ix.constraint && !names.indexes.count(to_lower(ix.name)))
          plan.drops.emplace_back(ast::ObjectKind::kIndex, ix.name);
}

SchemaPlan plan_schema(DdlContext& db, const std::string& name, const std::string& to_version,
                       const SourceSite& site, RenamePolicy policy = RenamePolicy::kAllow) {
  SchemaPlan plan;
  plan.policy = policy;
  plan.schema = to_lower(name);
  plan.decl = find_declaration(db, plan.schema, name, to_version, site);
  const ast::DeclareSchemaStmt& decl = *plan.decl;
  const std::string module = default_module(decl);
  DeclaredNames names;
  for (const auto& item : decl.items)
    if (item->kind != ast::StmtKind::kSeed) plan_declared_item(db, plan, *item, module, name, names);
  check_seed_tables(decl, names.tables, name);
  reconcile_renamed_views(db, plan);
  plan_drops(db, plan, names);
  // require-hint: a dropped and a created object of one kind is a name change without a
  // hint (a view re-created for its new body is not, nor a create whose
  // "quereus.previous_name" names the drop: a hinted rename carried out as drop + create).
  if (policy == RenamePolicy::kRequireHint)
    for (auto [kind, created] : {std::pair{ast::ObjectKind::kTable, &plan.tables}, std::pair{ast::ObjectKind::kView, &plan.views},
                                 std::pair{ast::ObjectKind::kIndex, &plan.indexes}}) {
      auto hints = [](const Planned& p) {
        const ast::TagList& tags = p.stmt->kind == ast::StmtKind::kCreateView
                                       ? static_cast<const ast::CreateViewStmt&>(*p.stmt).tags
                                   : p.stmt->kind == ast::StmtKind::kCreateIndex
                                       ? static_cast<const ast::CreateIndexStmt&>(*p.stmt).tags
                                       : static_cast<const ast::CreateTableStmt&>(*p.stmt).tags;
        std::set<std::string> out;
        for (const std::string& n : rename_hint_names(tags)) out.insert(to_lower(n));
        return out;
      };
      std::set<std::string> hinted;  // lower-case names the creates' hints claim
      for (const Planned& p : *created)
        if (p.create && !p.replace) hinted.merge(hints(p));
      std::set<std::string> dropped_names;
      for (const auto& d : plan.drops)
        if (d.first == kind) dropped_names.insert(to_lower(d.second));
      auto dropped = std::find_if(plan.drops.begin(), plan.drops.end(), [&, kind = kind](const auto& d) {
        return d.first == kind && !hinted.count(to_lower(d.second));
      });
      auto added = std::find_if(created->begin(), created->end(), [&](const Planned& p) {
        if (!p.create || p.replace) return false;
        for (const std::string& n : hints(p))
          if (dropped_names.count(n)) return false;
        return true;
      });
      if (dropped == plan.drops.end() || added == created->end()) continue;
      throw Error(StatusCode::kError,
                  "rename_policy = 'require-hint': applying schema '" + name + "' would drop '" + dropped->second +
                      "' and create '" + item_name(*added->stmt).name->name +
                      "'; mark a rename with a \"quereus.previous_name\" or \"quereus.id\" tag",
                  site);
    }
  return plan;
}

// The DDL text of a planned item or drop, as DIFF SCHEMA shows it: unqualified in main.
std::string ddl_text(const SchemaPlan& plan, ast::Statement& stmt) {
  ItemName n = item_name(stmt);
  auto* ix = stmt.kind == ast::StmtKind::kCreateIndex ? &static_cast<ast::CreateIndexStmt&>(stmt) : nullptr;
  // IF NOT EXISTS is not part of the shown DDL.
  const bool saved_ine = ix && std::exchange(ix->if_not_exists, false);
  const bool unqualify = n.kind && plan.schema == "main";
  std::string saved, saved_table;
  if (unqualify) saved = std::exchange(n.name->schema, "");
  if (unqualify && ix) saved_table = std::exchange(ix->table.schema, "");
  std::string text = statement_to_string(stmt);
  if (unqualify) n.name->schema = saved;
  if (unqualify && ix) ix->table.schema = saved_table;
  if (ix) ix->if_not_exists = saved_ine;
  return text;
}

// DROP <kind> IF EXISTS schema.name, as APPLY runs it.
ast::DropStmt drop_statement(const std::string& schema, ast::ObjectKind kind, const std::string& name,
                             bool if_exists = true) {
  ast::DropStmt d;
  d.object = kind;
  d.if_exists = if_exists;
  d.name = {schema, name, {}};
  return d;
}

std::string drop_text(const SchemaPlan& plan, ast::ObjectKind kind, const std::string& name) {
  std::string target = plan.schema == "main" ? quote_identifier(name) : qualified(plan.schema, name);
  const char* verb = kind == ast::ObjectKind::kView        ? "DROP VIEW IF EXISTS "
                     : kind == ast::ObjectKind::kIndex     ? "DROP INDEX IF EXISTS "
                     : kind == ast::ObjectKind::kAssertion ? "DROP ASSERTION IF EXISTS "
                                                           : "DROP TABLE IF EXISTS ";
  return verb + target;
}

// A table RENAME TO step: the apply runs these before anything else (the drops of
// assertions and indexes included), so what reads the table follows it first.
bool is_table_rename(const SchemaPlan::Alter& a) { return a.stmt->action == ast::AlterTableStmt::Action::kRenameTable; }

// DIFF SCHEMA: the DDL applying the declaration would run, one statement per row.
class DiffSchemaExec : public Executable {
 public:
  DiffSchemaExec(DdlContext& db, const ast::DiffSchemaStmt& s) : db_(db), stmt_(s) { names_ = {"ddl"}; }
  void start(ExecContext&) override {
    rows_.clear();
    i_ = 0;
    SchemaPlan plan = plan_schema(db_, stmt_.name, "", stmt_.site);
    // Table renames first, as APPLY runs them.
    for (const auto& a : plan.alters)
      if (is_table_rename(a)) rows_.push_back(a.shown);
    for (const auto& [kind, name] : plan.drops) rows_.push_back(drop_text(plan, kind, name));
    for (auto& p : plan.views)
      if (p.replace) rows_.push_back(drop_text(plan, ast::ObjectKind::kView, item_name(*p.stmt).name->name));
    for (auto& p : plan.tables)
      if (p.create) rows_.push_back(ddl_text(plan, *p.stmt));
    for (auto& p : plan.views)
      if (p.create && p.early) rows_.push_back(ddl_text(plan, *p.stmt));
    for (const auto& a : plan.alters)
      if (!is_table_rename(a)) rows_.push_back(a.shown);
    for (auto* list : {&plan.indexes, &plan.views, &plan.others})
      for (auto& p : *list)
        if (p.create && !p.early) rows_.push_back(ddl_text(plan, *p.stmt));
  }
  bool next(Row& out) override {
    if (i_ >= rows_.size()) return false;
    out = {Value::Text(rows_[i_++])};
    return true;
  }

 private:
  DdlContext& db_;
  const ast::DiffSchemaStmt& stmt_;
  std::vector<std::string> rows_;
  size_t i_ = 0;
};

// Whether a differ step materializes a constraint over existing rows (held back from the
// structure phase of an open-time reconciliation, until its prepare_constraints repairs ran).
bool materializes_constraint(const ast::AlterTableStmt& a) {
  using A = ast::AlterTableStmt::Action;
  return a.action == A::kAddConstraint || a.action == A::kAlterPrimaryKey ||
         (a.action == A::kAlterColumn && a.column_action == ast::AlterTableStmt::ColumnAction::kSetNotNull);
}

// The apply: plan (refusals change nothing); then create in dependency order (tables,
// indexes, views, the rest), drop what the declaration no longer names, and seed. A
// failure while creating drops what this apply created.
// OPTIONS (rename_policy = 'allow' | 'require-hint' | 'deny'); the parser has refused
// any other key.
RenamePolicy rename_policy(const ast::ApplySchemaStmt& s) {
  for (const ast::NamedExpr& o : s.options) {
    if (!iequals(o.name, "rename_policy") || !o.value || o.value->kind != ast::ExprKind::kLiteral) continue;
    const std::string& v = static_cast<const ast::Literal&>(*o.value).text;
    if (iequals(v, "require-hint")) return RenamePolicy::kRequireHint;
    if (iequals(v, "deny")) return RenamePolicy::kDeny;
    if (!iequals(v, "allow"))
      throw Error(StatusCode::kError, "rename_policy must be 'allow', 'require-hint' or 'deny', not '" + v + "'",
                  s.site);
  }
  return RenamePolicy::kAllow;
}

void apply_schema(DdlContext& db, const ast::ApplySchemaStmt& s, ExecContext& ctx) {
  SchemaPlan plan = plan_schema(db, s.name, s.to_version, s.site, rename_policy(s));
  const std::string& schema = plan.schema;
  const ast::DeclareSchemaStmt& decl = *plan.decl;
  auto& store = db.declared_schemas();
  Catalog& cat = db.catalog();
  auto& tables = plan.tables;
  auto& indexes = plan.indexes;
  auto& views = plan.views;
  auto& others = plan.others;

  // Plan the creates whose planning does not depend on earlier creates (an index or other
  // item refused as unsupported fails here, before anything changed). When existing
  // tables are migrated they are planned after the ALTERs instead (an index may cover a
  // column the migration adds).
  std::vector<std::unique_ptr<Executable>> other_execs, index_execs;
  auto plan_rest = [&] {
    other_execs.clear();
    index_execs.clear();
    for (auto& p : others)
      if (p.create) other_execs.push_back(db.plan(*p.stmt));
    for (auto& p : indexes)
      if (p.create) index_execs.push_back(db.plan(*p.stmt));
  };
  // Assertions and indexes the declaration drops (or re-creates) go first, before the
  // ALTERs; the rest is planned after them.
  bool early_drops = false;
  for (const auto& d : plan.drops)
    if (d.first == ast::ObjectKind::kIndex || d.first == ast::ObjectKind::kAssertion) early_drops = true;
  const bool plan_late = !plan.alters.empty() || early_drops;
  if (!plan_late) plan_rest();

  std::vector<std::pair<ast::ObjectKind, std::string>> created;  // for the undo
  const bool new_schema = !cat.has_schema(schema);
  bool migrated = false;
  // The declared views of one phase (`early`: before the ALTERs): a view whose body changed
  // is dropped first (a migration step: once it ran, a later failure keeps it); views may
  // read each other in any declared order, so creates retry until no progress.
  auto create_views = [&](bool early) {
    for (auto& p : views)
      if (p.replace && p.early == early) {
        migrated = true;
        run(db, drop_statement(schema, ast::ObjectKind::kView, item_name(*p.stmt).name->name), ctx);
      }
    std::vector<Planned*> pending;
    for (auto& p : views)
      if (p.create && p.early == early) pending.push_back(&p);
    while (!pending.empty()) {
      std::vector<Planned*> failed;
      std::exception_ptr last;
      for (Planned* p : pending) {
        try {
          run(db, *p->stmt, ctx);
          created.emplace_back(ast::ObjectKind::kView, item_name(*p->stmt).name->name);
        } catch (const Error&) {
          failed.push_back(p);
          last = std::current_exception();
        }
      }
      if (failed.size() == pending.size()) std::rethrow_exception(last);
      pending = std::move(failed);
    }
  };
  try {
    cat.add_schema(schema);
    for (auto& p : tables) {
      if (!p.create) continue;
      run(db, *p.stmt, ctx);
      created.emplace_back(ast::ObjectKind::kTable, item_name(*p.stmt).name->name);
    }
    // Each generated ALTER is one ordinary statement: once one has run, a later failure
    // keeps everything that landed (the reference's partially-applied migration).
    // Table renames, then undeclared indexes and assertions, before the other ALTERs (a
    // dropped column may be an index's key or read by an assertion).
    for (const auto& a : plan.alters)
      if (is_table_rename(a)) {
        migrated = true;
        run(db, *a.stmt, ctx);
      }
    for (const auto& [kind, name] : plan.drops)
      if (kind == ast::ObjectKind::kIndex || kind == ast::ObjectKind::kAssertion) {
        migrated = true;
        run(db, drop_statement(schema, kind, name), ctx);
      }
    if (!store.structure_phase_only) create_views(true);
    for (const auto& a : plan.alters) {
      if (is_table_rename(a) || (store.structure_phase_only && materializes_constraint(*a.stmt))) continue;
      migrated = true;
      run(db, *a.stmt, ctx);
    }
    if (store.structure_phase_only) {
      db.bump_schema_version();
      return;
    }
    if (plan_late) plan_rest();
    for (auto& e : index_execs) {
      e->start(ctx);
      Row r;
      while (e->next(r)) {
      }
    }
    create_views(false);
    for (auto& e : other_execs) {
      e->start(ctx);
      Row r;
      while (e->next(r)) {
      }
    }
    for (const auto& [kind, name] : plan.drops) {
      if (kind == ast::ObjectKind::kIndex || kind == ast::ObjectKind::kAssertion) continue;  // dropped earlier
      run(db, drop_statement(schema, kind, name), ctx);
      store.applied.erase(schema + "." + to_lower(name));
    }
    if (s.with_seed) {
      // Seeding is idempotent (corpus 50-declarative-schema, which sql-ddl.md's "Safety"
      // note predates): the declared rows are inserted ON CONFLICT DO NOTHING, so rows the
      // table already holds at a seeded key (user edits included) and rows the seed does
      // not name are left alone.
      for (const auto& item : decl.items) {
        if (item->kind != ast::StmtKind::kSeed) continue;
        const auto& seed = static_cast<const ast::SeedStmt&>(*item);
        if (seed.rows.empty()) continue;
        // insert into <schema>.<table> [(cols)] values <rows> on conflict do nothing
        ast::InsertStmt insert;
        insert.site = seed.site;
        insert.table.schema = schema;
        insert.table.name = seed.table;
        insert.columns = seed.columns;
        insert.source = std::make_unique<ast::Select>();
        insert.source->site = seed.site;
        for (const auto& row : seed.rows) insert.source->core.values.push_back(ast::clone(row));
        // ON CONFLICT (<primary key>) DO NOTHING: a row at a seeded key is kept; a seed row
        // that breaks another UNIQUE constraint fails the apply (a typo in the seed must
        // not vanish).
        ast::UpsertClause& upsert = insert.upserts.emplace_back();
        if (auto t = cat.find(schema, seed.table))
          for (const KeyColumn& k : t->schema.primary_key) upsert.target.push_back({t->schema.columns[k.column].name, "", false});
        run(db, insert, ctx);
      }
    }
  } catch (...) {
    if (migrated) {
      db.bump_schema_version();
      throw;
    }
    for (auto c = created.rbegin(); c != created.rend(); ++c) {
      try {
        run(db, drop_statement(schema, c->first, c->second, false), ctx);
      } catch (const std::exception&) {
        // best effort: the original error is the one reported
      }
    }
    if (new_schema) cat.remove_schema(schema);
    throw;
  }
  for (auto& list : {&tables, &views, &indexes})
    for (auto& p : *list) store.applied[p.key] = p.text;
  db.bump_schema_version();
}

}  // namespace

void declare_schema(DdlContext& db, const ast::DeclareSchemaStmt& s, DdlOrigin origin) {
  for (const auto& opt : s.options) {
    if (iequals(opt.key, "default_vtab_module")) continue;
    // default_vtab_args (sql-ddl.md "Declaration Syntax"): an empty argument object is
    // what every table gets anyway; arguments themselves are not carried yet.
    if (iequals(opt.key, "default_vtab_args") && opt.value) {
      std::string args = expr_to_string(*opt.value);
      if (args.size() >= 2 && args.front() == '\'') args = args.substr(1, args.size() - 2);
      args.erase(std::remove_if(args.begin(), args.end(), [](unsigned char c) { return std::isspace(c); }),
                 args.end());
      if (args == "{}") continue;
    }
    throw Error(StatusCode::kUnsupported,
                "DECLARE SCHEMA option '" + opt.key +
                    "' is not supported yet (supported: default_vtab_module, an empty default_vtab_args)",
                s.site);
  }
  std::set<std::string> seeded;
  for (const auto& item : s.items) {
    if (item->kind != ast::StmtKind::kSeed) continue;
    const auto& seed = static_cast<const ast::SeedStmt&>(*item);
    if (!seeded.insert(to_lower(seed.table)).second)
      throw Error(StatusCode::kError,
                  "Seed data for table '" + seed.table + "' is declared more than once in schema '" + s.name + "'",
                  item->site);
  }
  auto owned = own_statement(s);
  std::shared_ptr<const ast::DeclareSchemaStmt> decl(static_cast<ast::DeclareSchemaStmt*>(owned.release()));
  if (origin == DdlOrigin::kStatement) db.persist_declaration(to_lower(s.name), statement_to_string(*decl));
  db.declared_schemas().declared[to_lower(s.name)] = std::move(decl);
}

std::unique_ptr<Executable> plan_declare_schema(DdlContext& db, const ast::DeclareSchemaStmt& stmt) {
  return std::make_unique<SchemaActionExec>([&db, &stmt](ExecContext&) { declare_schema(db, stmt); });
}

std::unique_ptr<Executable> plan_diff_schema(DdlContext& db, const ast::DiffSchemaStmt& stmt) {
  return std::make_unique<DiffSchemaExec>(db, stmt);
}

namespace {

// The declaration's items (seeds included) in a canonical form: each printed without its
// tags (informational, never hashed: sql-ddl.md "2.6.3 Metadata Tags"), sorted, so the
// declared order does not matter.
std::string canonical_schema_text(const ast::DeclareSchemaStmt& decl) {
  std::vector<std::string> items;
  for (const auto& item : decl.items) {
    ast::StatementPtr copy = own_statement(*item);
    switch (copy->kind) {
      case ast::StmtKind::kCreateTable: {
        auto& t = static_cast<ast::CreateTableStmt&>(*copy);
        t.tags.clear();
        for (auto& c : t.columns) {
          c.tags.clear();
          for (auto& cc : c.constraints) cc.tags.clear();
        }
        for (auto& tc : t.constraints) tc.tags.clear();
        break;
      }
      case ast::StmtKind::kCreateView: static_cast<ast::CreateViewStmt&>(*copy).tags.clear(); break;
      case ast::StmtKind::kCreateMaterializedView:
        static_cast<ast::CreateMaterializedViewStmt&>(*copy).tags.clear();
        break;
      case ast::StmtKind::kCreateIndex: static_cast<ast::CreateIndexStmt&>(*copy).tags.clear(); break;
      default: break;
    }
    items.push_back(statement_to_string(*copy));
  }
  std::sort(items.begin(), items.end());
  std::string out = "version " + decl.version + "\n";
  for (const std::string& i : items) out += i + "\n";
  return out;
}

// EXPLAIN SCHEMA: one row, {"info": "hash:<first 12 hex digits of the SHA-256>"}, or with
// VERSION 'v' {"info": "version:v,hash:…"} (schema.md, "Schema Hashing").
class ExplainSchemaExec : public Executable {
 public:
  ExplainSchemaExec(DdlContext& db, const ast::ExplainSchemaStmt& s) : db_(db), stmt_(s) { names_ = {"info"}; }
  void start(ExecContext&) override {
    done_ = false;
    auto decl = find_declaration(db_, to_lower(stmt_.name), stmt_.name, "", stmt_.site);
    const std::string text = canonical_schema_text(*decl);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (EVP_Digest(text.data(), text.size(), md, &len, EVP_sha256(), nullptr) != 1)
      throw Error(StatusCode::kInternal, "SHA-256 digest failed");
    static const char kHex[] = "0123456789abcdef";
    info_ = stmt_.version ? "version:" + *stmt_.version + ",hash:" : "hash:";
    for (unsigned int i = 0; i < 6 && i < len; ++i) {
      info_ += kHex[md[i] >> 4];
      info_ += kHex[md[i] & 15];
    }
  }
  bool next(Row& out) override {
    if (done_) return false;
    done_ = true;
    out = {Value::Text(info_)};
    return true;
  }

 private:
  DdlContext& db_;
  const ast::ExplainSchemaStmt& stmt_;
  std::string info_;
  bool done_ = false;
};

}  // namespace

std::unique_ptr<Executable> plan_explain_schema(DdlContext& db, const ast::ExplainSchemaStmt& stmt) {
  return std::make_unique<ExplainSchemaExec>(db, stmt);
}

std::unique_ptr<Executable> plan_apply_schema(DdlContext& db, const ast::ApplySchemaStmt& stmt) {
  // Not one schema-change scope: an apply is a sequence of statements (a failure keeps
  // those that ran, docs/schemas.md), each of them crash-atomic on its own.
  return std::make_unique<SchemaActionExec>([&db, &stmt](ExecContext& ctx) { apply_schema(db, stmt, ctx); });
}

}  // namespace quereus
