// Module instances per database and the persistent catalog (docs/persistence.md).
//
// A module with a per-database instance (SDK 1.3 open_database) is opened with the
// database's options for it. A module that keeps a catalog (catalog_put / catalog_list)
// gets one entry per table it stores — the table's whole DDL and its indexes
// (ddl/schema_ddl) — rewritten after every DDL statement that changes the table; views
// go to the default module's catalog. Database::Open replays the entries: tables connect
// to their existing storage instead of creating it, and indexes are not rebuilt.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "main/database_impl.h"
#include "catalog/derivation.h"
#include "main/lenses.h"
#include "runtime/executable.h"
#include "ddl/declarative/declared_schema.h"
#include "ddl/index_ddl.h"
#include "ddl/schema_ddl.h"
#include "ddl/table_ddl.h"
#include "ddl/tags.h"
#include "ddl/view_ddl.h"
#include "main/materialized_views.h"
#include "parser/ast_printer.h"
#include "parser/parser.h"
#include "write/indexes.h"
#include "common/strings.h"
#include "eval/exec_context.h"

namespace quereus {

namespace {

// Marks the statements run while it lives as reading stored definitions back (the DDL
// context's reading_stored(): bodies judged when declared are not judged again).
class ReadingStored {
 public:
  explicit ReadingStored(int& depth) : depth_(depth) { ++depth_; }
  ~ReadingStored() { --depth_; }
  ReadingStored(const ReadingStored&) = delete;
  ReadingStored& operator=(const ReadingStored&) = delete;

 private:
  int& depth_;
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  return s;
}

std::string table_key(const std::string& schema, const std::string& name) { return "table:" + schema + "." + lower(name); }
std::string view_key(const std::string& schema, const std::string& name) { return "view:" + schema + "." + lower(name); }
std::string assertion_key(const std::string& schema, const std::string& name) {
  return "assertion:" + schema + "." + lower(name);
}
std::string declared_key(const std::string& schema) { return "declared:" + lower(schema); }
std::string hosted_key(const std::string& schema, const std::string& name) { return "hosted:" + schema + "." + lower(name); }
// A unique index whose durable build a transaction's uncommitted writes validated
// (mark_unvalidated_index).
constexpr const char* kUnvalidated = "unvalidated:";

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// The kinds of entry the default module's catalog holds besides tables, in the order
// they are replayed (an assertion may read a view; a declaration reads nothing).
// A logical schema's applied lens ("lensapply:") is rebuilt after every declaration.
// A maintained table hosted by a module that keeps no catalog of its own (memory) is
// stored here as "hosted:", re-created and refilled from its body at reopen.
constexpr const char* kObjectKinds[] = {"view:", "hosted:", "assertion:", "declared:", "lensapply:"};

// Where an entry replays: 0 for a table, then 1, 2, … in kObjectKinds order; past the
// end for a key of no known kind.
int replay_rank(const std::string& key) {
  int i = 1;
  for (const char* kind : kObjectKinds) {
    if (starts_with(key, kind)) return i;
    ++i;
  }
  return starts_with(key, "table:") ? 0 : i;
}

// Objects of the temp schema live as long as the connection: never persisted.
bool persists(const std::string& schema) { return schema != "temp"; }

}  // namespace

std::shared_ptr<VtabModule> DatabaseImpl::module(const std::string& name) {
  std::string key = lower(name);
  if (auto it = modules_.find(key); it != modules_.end()) return it->second.instance;
  auto base = registry_->find_module(name);
  if (!base) return nullptr;
  // An alias of a module already opened shares its instance.
  for (auto& [k, s] : modules_)
    if (s.base == base) {
      std::lock_guard<std::mutex> lock(modules_mu_);
      return (modules_[key] = s).instance;
    }
  std::vector<std::pair<std::string, Value>> options;
  for (auto& [m, opts] : db_options_.module_options)
    if (lower(m) == key) options = opts;
  ModuleSlot s;
  s.base = base;
  s.instance = base->open_database(db_options_.name, options);
  s.per_database = s.instance != nullptr;
  if (!s.instance) s.instance = base;
  {
    std::lock_guard<std::mutex> lock(modules_mu_);
    modules_[key] = s;
  }
  // Opened by a DDL statement (CREATE TABLE … USING it): it joins the statement's scope.
  bool seen = std::find(scoped_modules_.begin(), scoped_modules_.end(), s.instance) != scoped_modules_.end();
  if (schema_scope_depth_ > 0 && !seen && s.instance->schema_begin()) scoped_modules_.push_back(s.instance);
  return s.instance;
}

bool DatabaseImpl::module_is_per_database(const std::string& name) const {
  std::lock_guard<std::mutex> lock(modules_mu_);
  auto it = modules_.find(lower(name));
  return it != modules_.end() && it->second.per_database;
}

void DatabaseImpl::open_modules() {
  std::vector<std::string> names{db_options_.default_module};
  for (auto& [m, opts] : db_options_.module_options) names.push_back(m);
  std::vector<std::pair<std::string, std::shared_ptr<VtabModule>>> opened;
  for (const std::string& n : names) {
    auto m = module(n);  // a module configured but not registered is reported when used
    if (!m) continue;
    bool seen = std::any_of(opened.begin(), opened.end(), [&](auto& o) { return o.second == m; });
    if (!seen) opened.emplace_back(n, m);
  }
  for (auto& [n, m] : opened) replay_catalog(*m, n);
}

void DatabaseImpl::replay_catalog(VtabModule& module, const std::string& module_name) {
  std::vector<std::pair<std::string, std::string>> tables, objects;
  std::vector<std::pair<std::string, std::string>> unvalidated;
  std::shared_ptr<VtabModule> self;
  for (auto& [n, slot] : modules_)
    if (slot.instance.get() == &module) self = slot.instance;
  bool has = module.catalog_list([&](const std::string& key, const std::string& text) {
    // Kept for open-time reconciliation, never replayed (main/reconciliation.cc).
    if (starts_with(key, "dormant:")) {
      dormant_entries_[key] = {text, self};
      const size_t colon = key.find(':'), dot = key.find('.', colon);
      if (dot != std::string::npos) reserve_dormant_names(text, key.substr(colon + 1, dot - colon - 1), true);
      return;
    }
    if (starts_with(key, "structure:")) {
      if (key == "structure:history") history_text_ = text;
      return;
    }
    if (starts_with(key, kUnvalidated)) {
      unvalidated.emplace_back(key, text);
      return;
    }
    if (starts_with(key, "table:")) {
      tables.emplace_back(key, text);
      return;
    }
    for (const char* kind : kObjectKinds)
      if (starts_with(key, kind)) {
        objects.emplace_back(key, text);
        return;
      }
    spdlog::warn("module '{}': catalog entry '{}' is of an unknown kind; left as it is", module_name, key);
  });
  if (!has || (tables.empty() && objects.empty())) return;
  // Every schema an entry lives in exists again before the entries replay: a schema (one
  // APPLY SCHEMA created) is implied by what is stored in it.
  for (auto* list : {&tables, &objects})
    for (auto& [key, text] : *list) {
      size_t colon = key.find(':'), dot = key.find('.', colon);
      if (colon == std::string::npos || dot == std::string::npos) continue;
      std::string schema = key.substr(colon + 1, dot - colon - 1);
      if (!catalog_.has_schema(schema)) catalog_.add_schema(schema);
    }
  // Views, then assertions, then declarations (each kind's entries in key order).
  std::stable_sort(objects.begin(), objects.end(), [](const auto& a, const auto& b) {
    return replay_rank(a.first) < replay_rank(b.first);
  });
  spdlog::info("database '{}': reopening {} table(s) and {} other object(s) from module '{}'", db_options_.name,
               tables.size(), objects.size(), module_name);
  // An entry may need another first (a table whose DEFAULT reads a table, a maintained
  // table whose body reads a view): every pass runs the tables, then the other objects,
  // and the failures are retried while some entry succeeds.
  using Entries = std::vector<std::pair<std::string, std::string>>;
  Entries pending_tables = tables, pending_objects = objects;
  std::vector<Status> table_errors, object_errors;
  // Runs `entries`; returns the failures, their errors in `errors`; `progress` is set
  // when one succeeds.
  auto run_pass = [this](const Entries& entries, std::vector<Status>& errors, bool& progress) {
    Entries failed;
    errors.clear();
    for (const auto& [key, text] : entries) {
      Status st = run_stored(text);
      if (st.ok()) {
        progress = true;
        continue;
      }
      failed.emplace_back(key, text);
      errors.push_back(st);
    }
    return failed;
  };
  for (;;) {
    bool progress = false;
    Entries failed_tables = run_pass(pending_tables, table_errors, progress);
    Entries failed_objects = run_pass(pending_objects, object_errors, progress);
    if (!progress && !failed_tables.empty()) {
      // Nothing else reopens: a maintained table that a source ALTER froze (or broke)
      // before the database closed is adopted as it is, and the others retried.
      std::vector<std::pair<std::string, std::string>> rest;
      for (auto& [key, text] : failed_tables)
        if (!adopt_stored_maintained(text)) rest.emplace_back(key, text);
      progress = rest.size() < failed_tables.size();
      failed_tables.swap(rest);
    }
    if (!progress && !failed_tables.empty()) {
      // Still nothing: a table whose DEFAULT or generated body reads a relation that is
      // gone for good (a temp table, a memory table: neither is stored) attaches with the
      // body unresolved; its rows are all there, and only what needs the body fails.
      reopening_unresolved_ = true;
      Entries rest;
      for (auto& [key, text] : failed_tables)
        if (!run_stored(text).ok()) rest.emplace_back(key, text);
      reopening_unresolved_ = false;
      progress = rest.size() < failed_tables.size();
      failed_tables.swap(rest);
    }
    pending_tables.swap(failed_tables);
    pending_objects.swap(failed_objects);
    if (!progress || (pending_tables.empty() && pending_objects.empty())) break;
  }
  if (!pending_tables.empty())
    throw Error(StatusCode::kCorrupt, "module '" + module_name + "': catalog entry '" + pending_tables.back().first +
                                          "' does not reopen: " + table_errors.back().to_string() +
                                          ". The stored schema is kept as it is; open the store with a build that "
                                          "reads it, or repair the entry.");
  for (size_t i = 0; i < pending_objects.size(); ++i)
    spdlog::error("module '{}': catalog entry '{}' does not reopen ({}); the object is unavailable, its entry is kept",
                  module_name, pending_objects[i].first, object_errors[i].to_string());
  validate_marked_indexes(module, unvalidated);
}

// A unique index built inside a transaction that never finished: the entries are those
// of the committed rows, which only the transaction's lost writes may have made unique.
// Each marked index is reconciled with its table's rows and kept, or dropped with a
// warning when the rows violate it (what a rollback would have done); then the mark goes.
void DatabaseImpl::validate_marked_indexes(VtabModule& module,
                                           const std::vector<std::pair<std::string, std::string>>& marks) {
  for (const auto& [key, text] : marks) {
    const size_t colon = key.find(':'), dot = key.find('.', colon), nl = text.find('\n');
    std::shared_ptr<TableEntry> table;
    if (dot != std::string::npos && nl != std::string::npos)
      table = catalog_.find(key.substr(colon + 1, dot - colon - 1), text.substr(0, nl));
    const std::string name = nl == std::string::npos ? std::string() : text.substr(nl + 1);
    for (size_t i = 0; table && i < table->schema.indexes.size(); ++i) {
      if (!iequals(table->schema.indexes[i].name, name) || !table->schema.indexes[i].unique) continue;
      ExecContext ctx;
      ctx.db = this;
      ctx.generation = next_generation();
      const bool kept = reconcile_or_drop_index(
          *this, *table, i, ctx, "a transaction that never committed had validated it over rows it had deleted");
      spdlog::info("database '{}': index '{}' on {} validated at open{}", db_options_.name, name, table->qualified_name(),
                   kept ? "" : " and dropped");
      break;
    }
    module.catalog_put(key, "");
  }
}

// One entry per index: "unvalidated:<schema>.<table>.<index>" holding the table's and
// the index's names, one per line.
void DatabaseImpl::mark_unvalidated_index(const TableEntry& table, const std::string& index, bool on) {
  if (!table.module || hosted_here(table) || !persists(table.schema.schema_name)) return;
  table.module->catalog_put(
      kUnvalidated + table.schema.schema_name + "." + lower(table.schema.name) + "." + lower(index),
      on ? table.schema.name + "\n" + index : std::string());
}

// Adopts a stored maintained table that does not reopen maintained (adopt_maintained_table);
// false when `text` is not one or its table cannot be created either.
bool DatabaseImpl::adopt_stored_maintained(const std::string& text) {
  ReadingStored reading{reading_stored_};
  try {
    auto stmts = Parser::parse(text);
    if (stmts.empty() || stmts[0]->kind != ast::StmtKind::kCreateTable) return false;
    auto& s = static_cast<const ast::CreateTableStmt&>(*stmts[0]);
    if (!s.maintained) return false;
    // The rest of the entry is the table's own (its indexes and their tags): replayed on the
    // adopted table as on any other (found by the store-mode grammar fuzzer: a maintained
    // table over a temp table, with an index, made the whole open fail).
    for (size_t i = 1; i < stmts.size(); ++i)
      if (stmts[i]->kind != ast::StmtKind::kCreateIndex && stmts[i]->kind != ast::StmtKind::kAlterTags) return false;
    ExecContext ctx;
    ctx.db = this;
    ctx.generation = next_generation();
    adopt_maintained_table(*this, s, ctx);
    if (stmts.size() > 1) {
      Status rest = run_stored(text.substr(stmts[1]->text_begin));
      if (!rest.ok()) throw Error(rest.code(), rest.message());
    }
    return true;
  } catch (const std::exception& e) {
    spdlog::error("database '{}': a maintained table could not be adopted either: {}", db_options_.name, e.what());
    return false;
  }
}

// Runs one stored catalog entry's statements as DdlOrigin::kStoredCatalog, straight on
// their executors: no statement bracket, no schema-change scope (the entry is what the
// module holds), nothing recorded. An entry holds only what the catalog writes: CREATE
// TABLE / INDEX, ALTER INDEX … SET TAGS, CREATE VIEW / ASSERTION, DECLARE SCHEMA.
Status DatabaseImpl::run_stored(const std::string& text) {
  ReadingStored reading{reading_stored_};
  try {
    auto statements = Parser::parse(text);
    // A logical schema's applied lens: its declarations as applied, then the apply.
    if (!statements.empty() && statements.back()->kind == ast::StmtKind::kApplySchema) {
      replay_logical_apply(*this, statements);
      return Status::Ok();
    }
    for (auto& stmt : statements) {
      ExecContext ctx;
      ctx.db = this;
      ctx.generation = next_generation();
      using K = ast::StmtKind;
      constexpr DdlOrigin kStored = DdlOrigin::kStoredCatalog;
      switch (stmt->kind) {
        case K::kCreateTable: {
          auto& s = static_cast<const ast::CreateTableStmt&>(*stmt);
          // A maintained table reconnects its storage and refills it from its body.
          if (s.maintained) create_maintained_table(*this, s, ctx, kStored); else create_table(*this, s, ctx, kStored);
          break;
        }
        case K::kCreateIndex: {
          auto& s = static_cast<const ast::CreateIndexStmt&>(*stmt);
          create_index(*this, s, tag_set(s.tags), ctx, kStored);
          break;
        }
        case K::kAlterTags:
          alter_object_tags(*this, static_cast<const ast::AlterTagsStmt&>(*stmt), kStored);
          break;
        case K::kCreateView: create_view(*this, static_cast<const ast::CreateViewStmt&>(*stmt), ctx, kStored); break;
        case K::kCreateAssertion:
          assertions_.create(*this, static_cast<const ast::CreateAssertionStmt&>(*stmt), kStored);
          break;
        case K::kDeclareSchema:
          declare_schema(*this, static_cast<const ast::DeclareSchemaStmt&>(*stmt), kStored);
          break;
        case K::kDeclareLens: declare_lens(*this, static_cast<const ast::DeclareLensStmt&>(*stmt), kStored); break;
        default:
          throw Error(StatusCode::kCorrupt, "a catalog entry holds a statement the catalog never writes", stmt->site);
      }
    }
  } catch (const std::exception& e) {
    return status_of(e);
  }
  return Status::Ok();
}

// ---- the schema-change scope

void DatabaseImpl::run_schema_change(const std::function<void()>& ddl) {
  if (schema_scope_depth_ > 0) {
    ddl();  // inside another statement's scope: the outer one decides
    return;
  }
  scoped_modules_.clear();
  temp_staged_.clear();
  column_renames_.clear();
  try {
    for (auto& [name, slot] : modules_) {
      bool seen = std::any_of(scoped_modules_.begin(), scoped_modules_.end(), [&](auto& m) { return m == slot.instance; });
      if (!seen && slot.instance->schema_begin()) scoped_modules_.push_back(slot.instance);
    }
  } catch (...) {  // a module refused its scope: close the ones already open
    for (auto& m : scoped_modules_) m->schema_rollback();
    scoped_modules_.clear();
    throw;
  }
  ++schema_scope_depth_;
  // Batches committed inside the scope are told to listeners once it has landed.
  txn_.hold_publication();
  struct Publication {
    TransactionCoordinator& txn;
    bool landed = false;
    ~Publication() { txn.release_publication(landed); }
  } publication{txn_};
  auto names_of = [this](const std::shared_ptr<VtabModule>& m) {
    for (auto& [name, slot] : modules_)
      if (slot.instance == m) return name;
    return std::string("?");
  };
  // Rolls back the scopes from `from` on and brings the catalog back to what is stored.
  auto recover = [&](size_t from) {
    temp_staged_.clear();
    // The failed statement announces nothing (also when a reload below rolls the
    // transaction back and publishes).
    txn_.retract_statement_changes();
    std::vector<std::shared_ptr<VtabModule>> scoped;
    scoped.swap(scoped_modules_);
    for (size_t i = from; i < scoped.size(); ++i) scoped[i]->schema_rollback();
    std::string note;
    for (auto& m : scoped) {
      try {
        note += reconcile_with_catalog(*m, names_of(m));
      } catch (const std::exception& e) {
        note += " Reloading the schema of module '" + names_of(m) + "' failed too (" + e.what() +
                "); reopen the database.";
      }
    }
    return note;
  };
  try {
    ddl();
  } catch (const Error& e) {
    --schema_scope_depth_;
    std::string note = recover(0);
    if (note.empty()) throw;
    throw Error(e.code(), e.raw_message() + note, e.site());
  } catch (...) {
    --schema_scope_depth_;
    recover(0);
    throw;
  }
  --schema_scope_depth_;
  for (size_t i = 0; i < scoped_modules_.size(); ++i) {
    try {
      scoped_modules_[i]->schema_commit();
    } catch (const Error& e) {
      // Scopes before i landed (one atomic step per module); this one and the rest did not.
      std::string note = recover(i);
      throw Error(e.code(), e.raw_message() + " (the schema change did not land" + (i > 0 ? " in every module" : "") +
                                ")" + note);
    } catch (...) {
      recover(i);
      throw;
    }
  }
  scoped_modules_.clear();
  // What this statement did to temp tables of these modules is now what they hold.
  for (auto& [key, text] : temp_staged_) {
    if (text.empty()) temp_catalog_.erase(key); else temp_catalog_[key] = text;
  }
  temp_staged_.clear();
  publication.landed = true;
}

void DatabaseImpl::unload_table(TableEntry& table) {
  for (auto& c : table.index_tables) {
    forget(*c);
    c->connection.reset();
    c->table.reset();
  }
  table.index_tables.clear();
  table.index_runtime.reset();
  table.fk_links.reset();
  forget(table);
  table.connection.reset();
  table.table.reset();
  catalog_.remove(table.schema.schema_name, table.schema.name);
}

std::string DatabaseImpl::reconcile_with_catalog(VtabModule& module, const std::string& module_name) {
  std::map<std::string, std::string> stored;
  if (!module.catalog_list([&](const std::string& key, const std::string& text) { stored[key] = text; })) return {};
  // What this database holds in memory for the module, rendered as its catalog would be.
  std::map<std::string, std::string> live;
  std::map<std::string, std::shared_ptr<TableEntry>> live_tables;
  // Temp tables are not in the module's catalog: the engine keeps their last committed
  // definitions itself (temp_catalog_), and they are compared against those.
  for (auto& [key, text] : temp_catalog_)
    if (temp_module_[key] == &module) stored[key] = text;
  for (auto& t : catalog_.tables()) {
    if (t->module.get() != &module) continue;
    std::string key = table_key(t->schema.schema_name, t->schema.name);
    live[key] = table_bundle(t->schema);
    live_tables[key] = t;
  }
  auto default_module = modules_.find(lower(options_.default_vtab_module));
  bool holds_views = default_module != modules_.end() && default_module->second.instance.get() == &module;
  if (holds_views) {
    for (auto& v : catalog_.views())
      if (persists(v->schema_name) && !v->lens)  // a logical table is rebuilt by its apply
        live[view_key(v->schema_name, v->name)] = statement_to_string(*v->definition, v->schema_name);
    for (auto& a : assertions_.list())
      if (persists(a->schema_name)) live[assertion_key(a->schema_name, a->name)] = assertion_ddl(*a);
    for (auto& [name, decl] : declared_schemas_.declared) live[declared_key(name)] = statement_to_string(*decl);
    for (auto& [name, lens] : declared_schemas_.lenses) live[declared_key(name + "#lens")] = statement_to_string(*lens);
    for (auto& [name, dep] : declared_schemas_.deployments) live["lensapply:" + name] = dep->applied_text;
    for (auto& t : catalog_.tables())
      if (hosted_here(*t) && t->schema.derivation && hosted_sources_durable(*t)) {
        std::string key = hosted_key(t->schema.schema_name, t->schema.name);
        live[key] = table_bundle(t->schema);
        live_tables[key] = t;
      }
  }
  std::vector<std::string> differ;
  for (auto& [key, text] : live)
    if (auto it = stored.find(key); it == stored.end() || it->second != text) differ.push_back(key);
  auto held_here = [&](const std::string& key) {
    if (starts_with(key, "table:")) return true;
    if (!holds_views) return false;
    for (const char* kind : kObjectKinds)
      if (starts_with(key, kind)) return true;
    return false;
  };
  for (auto& [key, text] : stored)
    if (!live.count(key) && held_here(key)) differ.push_back(key);
  if (differ.empty()) return {};
  std::sort(differ.begin(), differ.end());
  differ.erase(std::unique(differ.begin(), differ.end()), differ.end());
  spdlog::warn("database '{}': a failed schema change left {} object(s) of module '{}' out of step with its stored "
               "catalog; reloading them from it",
               db_options_.name, differ.size(), module_name);
  std::string note;
  // A table to reload that joined the open transaction takes the transaction with it.
  bool joined = false;
  for (const std::string& key : differ)
    if (auto it = live_tables.find(key); it != live_tables.end()) {
      joined = joined || it->second->joined;
      for (auto& c : it->second->index_tables) joined = joined || c->joined;
    }
  if (joined && txn_.active()) {
    try {
      txn_.abort();
    } catch (const std::exception& e) {
      note += std::string(" (rolling the open transaction back failed too: ") + e.what() + ")";
    }
    note += " The open transaction was rolled back: it had written to a table the failed statement changed.";
  }
  for (const std::string& key : differ) {
    if (auto it = live_tables.find(key); it != live_tables.end()) unload_table(*it->second);
    auto split = [&](size_t prefix, auto&& remove) {
      std::string rest = key.substr(prefix);
      size_t dot = rest.find('.');
      if (dot != std::string::npos) remove(rest.substr(0, dot), rest.substr(dot + 1));
    };
    if (starts_with(key, "view:"))
      split(5, [&](const std::string& s, const std::string& n) { catalog_.remove_view(s, n); });
    else if (starts_with(key, "assertion:"))
      split(10, [&](const std::string& s, const std::string& n) { assertions_.forget(s, n); });
    else if (starts_with(key, "declared:") && key.size() > 14 && key.compare(key.size() - 5, 5, "#lens") == 0)
      declared_schemas_.lenses.erase(key.substr(9, key.size() - 14));
    else if (starts_with(key, "declared:"))
      declared_schemas_.declared.erase(key.substr(9));
    else if (starts_with(key, "lensapply:")) {
      std::string x = key.substr(10);
      declared_schemas_.deployments.erase(x);
      for (const auto& v : catalog_.views())
        if (v->schema_name == x && v->lens) catalog_.remove_view(x, v->name);
    }
  }
  // Whatever happens below, entries were replaced: prepared statements must re-plan
  // (their plans hold the old entries).
  struct BumpOnExit {
    DatabaseImpl& db;
    ~BumpOnExit() { db.bump_schema_version(); }
  } bump{*this};
  // Tables, then views over them, then assertions, then declarations.
  for (int pass = 0; pass <= static_cast<int>(std::size(kObjectKinds)); ++pass)
    for (const std::string& key : differ) {
      if (replay_rank(key) != pass) continue;
      auto it = stored.find(key);
      if (it == stored.end()) continue;
      // Run in place (not through exec(): this is inside the failed statement's bracket).
      Status st = run_stored(it->second);
      if (!st.ok() && starts_with(key, "hosted:")) {  // derived rows: refilled when it loads again
        spdlog::warn("module '{}': catalog entry '{}' does not reload ({}); the view is unavailable", module_name, key,
                     st.to_string());
        continue;
      }
      if (!st.ok())
        throw Error(StatusCode::kCorrupt, "module '" + module_name + "': catalog entry '" + key +
                                              "' does not reload: " + st.to_string());
    }
  return note;
}

bool DatabaseImpl::hosted_sources_durable(const TableEntry& table) {
  if (!table.schema.derivation) return false;
  for (const auto& [schema, name] : table.schema.derivation->sources) {
    auto src = catalog_.find(schema, name);
    if (!src || !src->module) return false;
    if (src->module->capabilities().persistent) continue;
    if (!hosted_here(*src) || !src->schema.derivation || src.get() == &table || !hosted_sources_durable(*src))
      return false;
  }
  return true;
}

bool DatabaseImpl::hosted_here(const TableEntry& table) {
  if (!table.module || table.module->capabilities().persistent || !persists(table.schema.schema_name)) return false;
  auto m = module(options_.default_vtab_module);
  return m && m.get() != table.module.get() && m->capabilities().persistent;
}

void DatabaseImpl::persist_table(const TableEntry& table) {
  if (!table.module) return;
  // A memory-hosted materialized view: its definition lives in the default module's
  // catalog (a detached one, no longer maintained, is removed from it: memory tables
  // are not kept).
  if (hosted_here(table)) {
    // Kept only when its sources come back too (a view over a plain memory table could
    // not be refilled at reopen: it goes with its source).
    const bool keep = table.schema.derivation && hosted_sources_durable(table);
    module(options_.default_vtab_module)
        ->catalog_put(hosted_key(table.schema.schema_name, table.schema.name),
                      keep ? table_bundle(table.schema) : std::string());
    return;
  }
  if (!persists(table.schema.schema_name)) {
    if (schema_scope_depth_ > 0) {
      std::string key = table_key(table.schema.schema_name, table.schema.name);
      temp_staged_[key] = table_bundle(table.schema);
      temp_module_[key] = table.module.get();
    }
    return;
  }
  std::string text = table_bundle(table.schema);
  // Only what a module keeps is read back at an open (a memory table's text is never).
  if (table.module->capabilities().persistent) {
    verify_reads_back(table.schema, text);
    // An open connects each index's structure by the name the catalog derives for it: one
    // kept under another name (an index or constraint renamed in the catalog alone) would
    // make the next open fail, so the statement fails instead.
    if (table.index_tables.size() == table.schema.indexes.size())
      for (size_t i = 0; i < table.index_tables.size(); ++i) {
        const std::string want = companion_name(table.schema, table.schema.indexes[i]);
        if (table.index_tables[i] && table.index_tables[i]->schema.name != want)
          throw Error(StatusCode::kInternal, "the structure of index " + table.schema.schema_name + "." +
                                                 table.schema.indexes[i].name + " is kept as '" +
                                                 table.index_tables[i]->schema.name + "', but an open would look for '" +
                                                 want + "'");
      }
  }
  table.module->catalog_put(table_key(table.schema.schema_name, table.schema.name), text);
  capture_schema(table);
}

// A stored definition that does not read back as the live table would make the next open
// fail (or key the table differently): the statement that would store it fails instead,
// leaving the catalog as it was (its schema-change scope rolls back). Columns, their
// generated / DEFAULT attributes and the primary key are compared.
void DatabaseImpl::verify_reads_back(const TableSchema& live, const std::string& text) {
  auto broken = [&](const std::string& why) {
    throw Error(StatusCode::kInternal, "the stored definition of table " + live.schema_name + "." + live.name +
                                           " would not read back (" + why + "): " + text.substr(0, text.find(";\n")));
  };
  TableSchema back;
  ReadingStored reading{reading_stored_};
  try {
    auto stmts = Parser::parse(text.substr(0, text.find(";\n")));
    if (stmts.size() != 1 || stmts[0]->kind != ast::StmtKind::kCreateTable) broken("not one CREATE TABLE");
    back = build_table_schema(*this, static_cast<const ast::CreateTableStmt&>(*stmts[0]), live.schema_name);
  } catch (const Error& e) {
    if (e.code() == StatusCode::kInternal) throw;
    broken(e.raw_message());
  }
  if (back.columns.size() != live.columns.size()) broken("its column count");
  for (size_t i = 0; i < live.columns.size(); ++i) {
    const ColumnSchema &a = live.columns[i], &b = back.columns[i];
    if (!iequals(a.name, b.name) || a.generated() != b.generated() || !a.default_expr != !b.default_expr)
      broken("column '" + a.name + "'");
  }
  // UNIQUE constraints' structures are named by the text (a constraint name, or minted from
  // the columns): the reopen must name each as the live table does.
  for (const IndexSchema& ix : live.indexes) {
    if (!ix.constraint) continue;
    bool found = false;
    for (const IndexSchema& b : back.indexes) found = found || (b.constraint && iequals(b.name, ix.name));
    if (!found) broken("its UNIQUE constraint '" + ix.name + "'");
  }
  bool same_key = back.primary_key.size() == live.primary_key.size();
  for (size_t i = 0; same_key && i < live.primary_key.size(); ++i)
    same_key = back.primary_key[i].column == live.primary_key[i].column && back.primary_key[i].desc == live.primary_key[i].desc;
  if (!same_key) broken("its primary key");
}

void DatabaseImpl::unpersist_table(const TableEntry& table, const std::string& old_name) {
  if (!table.module) return;
  if (hosted_here(table)) {
    module(options_.default_vtab_module)
        ->catalog_put(hosted_key(table.schema.schema_name, old_name.empty() ? table.schema.name : old_name), "");
    return;
  }
  if (!persists(table.schema.schema_name)) {
    if (schema_scope_depth_ > 0)
      temp_staged_[table_key(table.schema.schema_name, old_name.empty() ? table.schema.name : old_name)] = "";
    return;
  }
  table.module->catalog_put(table_key(table.schema.schema_name, old_name.empty() ? table.schema.name : old_name), "");
}

void DatabaseImpl::persist_view(const ViewEntry& view) {
  if (!persists(view.schema_name)) return;
  if (auto m = module(options_.default_vtab_module))
    m->catalog_put(view_key(view.schema_name, view.name), statement_to_string(*view.definition, view.schema_name));
}

void DatabaseImpl::unpersist_view(const std::string& schema, const std::string& name) {
  if (!persists(schema)) return;
  if (auto m = module(options_.default_vtab_module)) m->catalog_put(view_key(schema, name), "");
}

void DatabaseImpl::persist_assertion(const AssertionEntry& a) {
  if (!persists(a.schema_name)) return;
  if (auto m = module(options_.default_vtab_module)) m->catalog_put(assertion_key(a.schema_name, a.name), assertion_ddl(a));
}

void DatabaseImpl::unpersist_assertion(const std::string& schema, const std::string& name) {
  if (!persists(schema)) return;
  if (auto m = module(options_.default_vtab_module)) m->catalog_put(assertion_key(schema, name), "");
}

void DatabaseImpl::persist_declaration(const std::string& schema, const std::string& text) {
  if (auto m = module(options_.default_vtab_module)) m->catalog_put(declared_key(schema), text);
}

}  // namespace quereus
