// Open-time structural reconciliation, carried out (docs/reconciliation.md): a database
// whose options name schema files opens into the declared shape, or the open fails with
// nothing changed. The policy (what needs intent, what is automatic, what is contradictory)
// is ddl/declarative/reconciliation.cc; this file gathers its inputs from the stored
// catalog and the schema files, and runs the plan inside ONE schema-change scope per
// module, the structural history written last — so a failure or a crash at any point
// leaves the store as it was.
#include <spdlog/spdlog.h>

#include "main/database_impl.h"
#include "catalog/derivation.h"
#include "common/strings.h"
#include "ddl/declarative/reconciliation.h"
#include "ddl/schema_ddl.h"
#include "parser/ast_printer.h"
#include "parser/parser.h"

namespace quereus {

namespace {

constexpr const char* kHistoryKey = "structure:history";

std::string dormant_key(const std::string& schema, const std::string& name) {
  return "dormant:" + schema + "." + to_lower(name);
}

std::string table_key(const std::string& schema, const std::string& name) {
  return "table:" + schema + "." + to_lower(name);
}

// The quereus.id of a tag list as written ("" when absent or not a literal).
std::string declared_id(const ast::TagList& tags) {
  for (const ast::NamedExpr& tag : tags)
    if (iequals(tag.name, "quereus.id") && tag.value && tag.value->kind == ast::ExprKind::kLiteral)
      return static_cast<const ast::Literal&>(*tag.value).text;
  return {};
}

std::string stored_id(const TagSet& tags) {
  const TagValue* v = tags.find("quereus.id");
  return v ? tag_text(*v) : std::string();
}

// A SQL string literal.
std::string literal(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

void check(const Status& st) {
  if (!st.ok()) throw Error(st.code(), st.raw_message(), st.site());
}

// A schema file's error, placed: "<file>:<line>:<col>: <message> (schema file named at <yaml>)".
[[noreturn]] void file_error(const DeclaredSchemaFile& f, StatusCode code, const std::string& message,
                             const std::optional<SourceSite>& site) {
  std::string at = f.path;
  if (site && site->line > 0) at += ":" + std::to_string(site->line) + ":" + std::to_string(site->column);
  throw Error(code, at + ": " + message + (f.origin.empty() ? "" : " (schema file named at " + f.origin + ")"));
}

}  // namespace

void DatabaseImpl::reconcile_structure() {
  const auto& files = db_options_.schema_files;
  const StructuralIntent& intent = db_options_.migrate;
  if (files.empty()) {
    if (!intent.empty())
      throw Error(StatusCode::kConfig, (intent.where.empty() ? "" : intent.where + ": ") + "databases." +
                                           db_options_.name +
                                           ".migrate: migration intents need schema files to reconcile against "
                                           "(databases." + db_options_.name + ".schema)");
    return;
  }

  // The declaration: every file parses, and holds only declarations.
  ReconcileInputs in;
  in.database = db_options_.name;
  in.intent = &intent;
  std::vector<std::string> physical_schemas, all_schemas;
  std::map<std::string, std::string> spelled;          // qualified lower-case → the declared name
  std::map<std::string, std::string> referenced_by;    // a table declared FKs reference → one referencing table
  std::map<std::string, const DeclaredSchemaFile*> declared_in;  // schema (lower-case) → the file declaring it
  for (const DeclaredSchemaFile& f : files) {
    std::vector<ast::StatementPtr> stmts;
    try {
      stmts = Parser::parse(f.text);
    } catch (const Error& e) {
      file_error(f, e.code(), e.raw_message(), e.site());
    }
    for (const auto& stmt : stmts) {
      if (stmt->kind == ast::StmtKind::kDeclareLens) continue;
      if (stmt->kind != ast::StmtKind::kDeclareSchema)
        file_error(f, StatusCode::kConfig, "a schema file holds DECLARE SCHEMA and DECLARE LENS statements only", stmt->site);
      const auto& decl = static_cast<const ast::DeclareSchemaStmt&>(*stmt);
      const std::string schema = to_lower(decl.name);
      if (schema == "temp") file_error(f, StatusCode::kConfig, "the temp schema is not declared at open", stmt->site);
      all_schemas.push_back(decl.name);
      declared_in[schema] = &f;
      if (decl.logical) continue;
      physical_schemas.push_back(decl.name);
      in.declared_schemas.insert(schema);
      for (const auto& item : decl.items) {
        if (item->kind != ast::StmtKind::kCreateTable) continue;
        const auto& t = static_cast<const ast::CreateTableStmt&>(*item);
        if (t.maintained) continue;  // derived rows: reconciled without intent
        in.declared.push_back({schema, to_lower(t.table.name), declared_id(t.tags)});
        spelled[schema + "." + to_lower(t.table.name)] = t.table.name;
        auto references = [&](const ast::QualifiedName& parent) {
          const std::string ps = parent.schema.empty() ? schema : to_lower(parent.schema);
          referenced_by.emplace(ps + "." + to_lower(parent.name), schema + "." + t.table.name);
        };
        for (const auto& col : t.columns)
          for (const auto& c : col.constraints)
            if (c.kind == ast::ColumnConstraint::Kind::kForeignKey) references(c.fk_table);
        for (const auto& c : t.constraints)
          if (c.kind == ast::TableConstraint::Kind::kForeignKey) references(c.fk_table);
      }
    }
  }

  // What the store holds: its recorded history, its dormant tables, its plain stored
  // tables in every schema the declaration or the history covers.
  std::optional<StructuralHistory> history;
  auto home = module(options_.default_vtab_module);
  if (!history_text_.empty()) history = StructuralHistory::decode(history_text_);
  std::set<std::string> covered = in.declared_schemas;
  if (history) covered.insert(history->schemas.begin(), history->schemas.end());
  for (const auto& t : catalog_.tables()) {
    if (!covered.count(t->schema.schema_name) || t->schema.derivation || !t->module) continue;
    if (!t->module->capabilities().persistent) continue;
    in.live.push_back({t->schema.schema_name, to_lower(t->schema.name), stored_id(t->schema.tags)});
  }
  std::map<std::string, TableIdentity> dormant_by_key;
  for (const auto& [key, d] : dormant_entries_) {
    auto stmts = Parser::parse(d.text);
    if (stmts.empty() || stmts[0]->kind != ast::StmtKind::kCreateTable)
      throw Error(StatusCode::kCorrupt, "catalog entry '" + key + "' is not a stored table");
    const auto& t = static_cast<const ast::CreateTableStmt&>(*stmts[0]);
    const size_t colon = key.find(':'), dot = key.find('.', colon);
    TableIdentity id{key.substr(colon + 1, dot - colon - 1), to_lower(t.table.name), declared_id(t.tags)};
    in.dormant.push_back(id);
    dormant_by_key[key] = id;
  }
  if (history) in.history = &*history;

  const ReconcilePlan plan = plan_reconciliation(in);
  // A preserved table must not be one a declared foreign key still references: every
  // write to the referencing table would fail.
  for (const TableIdentity& t : plan.preserves)
    if (auto it = referenced_by.find(t.qualified()); it != referenced_by.end())
      throw Error(StatusCode::kSchema, "Table '" + t.qualified() + "' cannot be preserved: declared table '" +
                                           it->second + "' references it with a FOREIGN KEY (declare it, or drop "
                                           "the reference first)");

  // Carried out in one schema-change scope: all of it lands, or none of it.
  auto sql = [this](const std::string& text) { check(exec(text)); };
  // APPLY SCHEMA of a declared schema: its error names the schema file (and the line of
  // the declared item it is about, when it has one) and the YAML entry naming the file.
  auto apply = [&](const std::string& schema) {
    Status st = exec("apply schema " + quote_identifier(schema));
    if (st.ok()) return;
    auto f = declared_in.find(to_lower(schema));
    if (f == declared_in.end()) check(st);
    std::optional<SourceSite> site = st.site();
    if (site && site->line <= 1 && site->column <= 1) site.reset();  // the synthesized APPLY itself
    file_error(*f->second, st.code(), "applying schema '" + schema + "': " + st.raw_message(), site);
  };
  auto quoted = [](const TableIdentity& t) { return quote_identifier(t.schema) + "." + quote_identifier(t.name); };
  size_t tables_before = catalog_.tables().size();
  run_schema_change([&] {
    for (const TableIdentity& t : plan.reactivations) {
      const std::string key = dormant_key(t.schema, t.name);
      const DormantEntry& d = dormant_entries_.at(key);
      if (!catalog_.has_schema(t.schema)) catalog_.add_schema(t.schema);  // its schema may have gone meanwhile
      reserve_dormant_names(d.text, t.schema, /*reserve=*/false);
      check(run_stored(d.text));
      d.module->catalog_put(table_key(t.schema, t.name), d.text);
      d.module->catalog_put(key, "");
      spdlog::info("database '{}': preserved table {} reactivated", db_options_.name, t.qualified());
    }
    for (const auto& r : plan.renames) {
      auto it = spelled.find(r.from.schema + "." + r.to);
      sql("alter table " + quoted(r.from) + " rename to " + quote_identifier(it != spelled.end() ? it->second : r.to));
      spdlog::info("database '{}': table {} renamed to {} (migrate.rename)", db_options_.name, r.from.qualified(), r.to);
    }
    for (const TableIdentity& t : plan.preserves) {
      auto entry = catalog_.find(t.schema, t.name);
      if (!entry) continue;
      const std::string text = table_bundle(entry->schema);
      entry->module->catalog_put(dormant_key(t.schema, t.name), text);
      unpersist_table(*entry);
      unload_table(*entry);
      reserve_dormant_names(text, t.schema, /*reserve=*/true);
      bump_schema_version();
      spdlog::info("database '{}': table {} preserved (dormant)", db_options_.name, t.qualified());
    }
    for (const auto& r : plan.retags) {
      sql("alter table " + quoted(r.table) +
          (r.id.empty() ? std::string(" drop tags (\"quereus.id\")") : " add tags (\"quereus.id\" = " + literal(r.id) + ")"));
    }
    for (const DeclaredSchemaFile& f : files) {
      Status st = exec(f.text);
      if (!st.ok()) file_error(f, st.code(), st.raw_message(), st.site());
    }
    // Tables first (created, renamed columns migrated), then the repairs, then the rest.
    if (!plan.prepare.empty()) {
      declared_schemas_.structure_phase_only = true;
      try {
        for (const std::string& s : physical_schemas) apply(s);
      } catch (...) {
        declared_schemas_.structure_phase_only = false;
        throw;
      }
      declared_schemas_.structure_phase_only = false;
      for (const StructuralIntent::Prepare* p : plan.prepare) {
        Status st = exec(p->sql);
        if (!st.ok())
          throw Error(st.code(), (p->origin.where.empty() ? "" : p->origin.where + ": ") + p->origin.key +
                                     ": prepare_constraints step '" + p->name + "' failed: " + st.raw_message());
        spdlog::info("database '{}': prepare_constraints step '{}' ran", db_options_.name, p->name);
      }
    }
    for (const std::string& s : all_schemas) apply(s);
    // Drops last: the apply has removed what referenced them (a declared table's FOREIGN
    // KEY); in a declared schema the apply has dropped them already.
    for (const TableIdentity& t : plan.drops) {
      sql("drop table if exists " + quoted(t));
      spdlog::info("database '{}': table {} dropped (migrate.drop)", db_options_.name, t.qualified());
    }

    // The history, last.
    StructuralHistory next = history ? *history : StructuralHistory{};
    next.schemas = in.declared_schemas;
    next.active.clear();
    for (const auto& t : catalog_.tables())
      if (in.declared_schemas.count(t->schema.schema_name) && !t->schema.derivation && t->module &&
          t->module->capabilities().persistent)
        next.active.push_back({t->schema.schema_name, to_lower(t->schema.name), stored_id(t->schema.tags)});
    for (const TableIdentity& t : plan.reactivations)
      std::erase_if(next.dormant, [&](const TableIdentity& d) { return d.qualified() == t.qualified(); });
    for (const TableIdentity& t : plan.preserves) next.dormant.push_back(t);
    for (const TableIdentity& t : plan.drops)
      std::erase_if(next.dormant, [&](const TableIdentity& d) { return d.qualified() == t.qualified(); });
    for (const StructuralIntent::Prepare* p : plan.prepare) next.prepared.insert(p->name);
    for (const std::string& a : plan.applied)
      if (std::find(next.applied.begin(), next.applied.end(), a) == next.applied.end()) next.applied.push_back(a);
    // Written only when it changed: an open that reconciles nothing writes no history.
    if (const std::string text = next.encode(); home && text != history_text_) home->catalog_put(kHistoryKey, text);
  });
  // The dormant entries this open moved are no longer what the store holds.
  for (const TableIdentity& t : plan.reactivations) dormant_entries_.erase(dormant_key(t.schema, t.name));
  if (!plan.empty() || catalog_.tables().size() != tables_before)
    spdlog::info("database '{}': reconciled with its declaration ({} rename(s), {} drop(s), {} preserved, {} "
                 "reactivated, {} prepare step(s))",
                 db_options_.name, plan.renames.size(), plan.drops.size(), plan.preserves.size(),
                 plan.reactivations.size(), plan.prepare.size());
}

void DatabaseImpl::reserve_dormant_names(const std::string& text, const std::string& schema, bool reserve) {
  std::vector<ast::StatementPtr> stmts;
  try {
    stmts = Parser::parse(text);
  } catch (const Error& e) {
    spdlog::error("database '{}': a preserved table's stored text does not parse ({})", db_options_.name, e.what());
    return;
  }
  if (stmts.empty() || stmts[0]->kind != ast::StmtKind::kCreateTable) return;
  const std::string owner = schema + "." + static_cast<const ast::CreateTableStmt&>(*stmts[0]).table.name;
  for (const auto& stmt : stmts) {
    const bool table = stmt->kind == ast::StmtKind::kCreateTable;
    if (!table && stmt->kind != ast::StmtKind::kCreateIndex) continue;
    const std::string& name = table ? static_cast<const ast::CreateTableStmt&>(*stmt).table.name
                                    : static_cast<const ast::CreateIndexStmt&>(*stmt).index.name;
    if (reserve) catalog_.reserve(table ? "table" : "index", schema, name, owner);
    else catalog_.release(table ? "table" : "index", schema, name);
  }
}

}  // namespace quereus
