// DDL of views (see view_ddl.h).
#include "ddl/view_ddl.h"

#include "catalog/ddl_names.h"

#include "ddl/alter_table.h"
#include "ddl/tags.h"
#include "ddl/ddl_context.h"
#include "transaction/assertions.h"
#include "eval/exec_context.h"
#include "parser/ast_clone.h"
#include "parser/ast_printer.h"
#include "planner/planner.h"

namespace quereus {

void create_view(DdlContext& db, const ast::CreateViewStmt& s, ExecContext&, DdlOrigin origin) {
  std::string schema = ddl_schema(s.view.schema);
  if (!db.catalog().has_schema(schema)) throw Error(StatusCode::kError, "Schema not found: " + schema);
  if (origin != DdlOrigin::kStoredCatalog) db.catalog().check_unreserved("table", schema, s.view.name);
  if (const auto& dml = s.select->dml) {
    const char* verb = dml->kind == ast::StmtKind::kInsert ? "INSERT" : dml->kind == ast::StmtKind::kUpdate ? "UPDATE" : "DELETE";
    throw Error(StatusCode::kError,
                std::string(verb) + " cannot be used as a view body — a view re-evaluates on every reference, which "
                                    "would re-drive the write. Move the mutation into the statement that references the view.",
                dml->site);
  }
  // The body is planned now, so a missing table or column fails the CREATE.
  Planner planner(db);
  QueryPlan body = planner.plan_view_body(*s.select, schema);
  size_t width = body.root->columns.size();
  if (!s.columns.empty() && s.columns.size() != width)
    throw Error(StatusCode::kError, "View '" + s.view.name + "' has " + std::to_string(s.columns.size()) +
                                        " declared columns but body produces " + std::to_string(width));
  if (db.catalog().find_view(schema, s.view.name)) {
    if (s.if_not_exists) return;
    throw Error(StatusCode::kError, "View '" + schema + "." + s.view.name + "' already exists");
  }
  if (db.catalog().find(schema, s.view.name))
    throw Error(StatusCode::kError, "Schema '" + schema + "': Cannot add view '" + s.view.name +
                                        "', a table with the same name already exists.");
  // The catalog owns its own deep copy of the definition. Its text range pointed into
  // the prepared SQL, which the catalog does not keep; `sql` below is its text.
  auto copy = ast::clone(s);
  copy->text_begin = copy->text_end = 0;
  std::shared_ptr<ast::CreateViewStmt> def(static_cast<ast::CreateViewStmt*>(copy.release()));
  def->if_not_exists = false;
  def->view.schema = schema;  // the event's text is schema-qualified, as for tables
  std::string qualified_sql = statement_to_string(*def);
  def->view.schema.clear();
  auto view = std::make_shared<ViewEntry>();
  view->schema_name = schema;
  view->name = s.view.name;
  view->columns = s.columns;
  view->sql = statement_to_string(*def);
  view->tags = tag_set(s.tags);
  view->definition = std::move(def);
  if (origin == DdlOrigin::kStatement) db.persist_view(*view);
  if (db.changes().capturing())
    db.changes().record_schema(
        object_event(SchemaChangeKind::kCreate, SchemaObjectKind::kView, schema, view->name, qualified_sql));
  db.catalog().add_view(std::move(view));
  db.bump_schema_version();
}

void drop_view(DdlContext& db, const ast::DropStmt& s) {
  std::string schema = ddl_schema(s.name.schema);
  std::shared_ptr<const ViewEntry> view;
  for (const std::string& in : ddl_lookup_schemas(s.name.schema))
    if ((view = db.catalog().find_view(in, s.name.name))) break;
  if (!view) {
    for (const std::string& in : ddl_lookup_schemas(s.name.schema))
      if (auto t = db.catalog().find(in, s.name.name); t && t->schema.derivation)
        throw Error(StatusCode::kError,
                    "'" + s.name.name + "' is a materialized view: use DROP MATERIALIZED VIEW", s.site);
    if (s.if_exists) return;
    // A table of that name is the wrong statement, not a missing view (SQLite: "use DROP TABLE
    // to delete table t").
    for (const std::string& in : ddl_lookup_schemas(s.name.schema))
      if (db.catalog().find(in, s.name.name))
        throw Error(StatusCode::kError,
                    "View '" + schema + "." + s.name.name + "' does not exist: '" + s.name.name +
                        "' is a table: use DROP TABLE",
                    s.site);
    throw Error(StatusCode::kError, "View '" + schema + "." + s.name.name + "' does not exist");
  }
  if (view->lens)
    throw Error(StatusCode::kError,
                "'" + view->schema_name + "." + view->name +
                    "' is a logical table: it is deployed by APPLY SCHEMA " + view->schema_name +
                    " (remove it from the logical declaration and apply again)",
                s.site);
  db.assertions().guard_drop("view", view->schema_name, view->name);
  // A CHECK, DEFAULT or generated column reading the view would fail on every write of
  // its table (sql-ddl.md "CHECK Constraints"); a plain view over it is left broken.
  if (std::string why = expression_dependent_via_views(db, true, view->schema_name, view->name, nullptr); !why.empty())
    throw Error(StatusCode::kConstraint, "cannot drop view '" + view->schema_name + "." + view->name + "': " + why +
                                             " — drop or redefine it first",
                s.site);
  db.catalog().remove_view(view->schema_name, view->name);
  db.bump_schema_version();
  db.unpersist_view(view->schema_name, view->name);
  if (db.changes().capturing())
    db.changes().record_schema(object_event(SchemaChangeKind::kDrop, SchemaObjectKind::kView, view->schema_name,
                                            view->name, statement_to_string(s, view->schema_name)));
}

}  // namespace quereus
