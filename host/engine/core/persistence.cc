// Module instances per database and the persistent catalog (docs/persistence.md).
//
// A module with a per-database instance (SDK 1.3 open_database) is opened with the
// database's options for it. A module that keeps a catalog (catalog_put / catalog_list)
// gets one entry per table it stores — the table's whole DDL and its indexes
// (core/schema_ddl) — rewritten after every DDL statement that changes the table; views
// go to the default module's catalog. Database::Open replays the entries: tables connect
// to their existing storage instead of creating it, and indexes are not rebuilt.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "core/database_impl.h"
#include "core/schema_ddl.h"
#include "parser/ast_printer.h"

namespace quereus {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  return s;
}

std::string table_key(const std::string& schema, const std::string& name) { return "table:" + schema + "." + lower(name); }
std::string view_key(const std::string& schema, const std::string& name) { return "view:" + schema + "." + lower(name); }

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
    if (s.base == base) return (modules_[key] = s).instance;
  std::vector<std::pair<std::string, Value>> options;
  for (auto& [m, opts] : db_options_.module_options)
    if (lower(m) == key) options = opts;
  ModuleSlot s;
  s.base = base;
  s.instance = base->open_database(db_options_.name, options);
  s.per_database = s.instance != nullptr;
  if (!s.instance) s.instance = base;
  modules_[key] = s;
  return s.instance;
}

bool DatabaseImpl::module_is_per_database(const std::string& name) const {
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
  std::vector<std::pair<std::string, std::string>> tables, views;
  bool has = module.catalog_list([&](const std::string& key, const std::string& text) {
    if (key.rfind("table:", 0) == 0) tables.emplace_back(key, text);
    else if (key.rfind("view:", 0) == 0) views.emplace_back(key, text);
    else spdlog::warn("module '{}': catalog entry '{}' is of an unknown kind; left as it is", module_name, key);
  });
  if (!has || (tables.empty() && views.empty())) return;
  spdlog::info("database '{}': reopening {} table(s) and {} view(s) from module '{}'", db_options_.name, tables.size(),
               views.size(), module_name);
  replaying_ = true;
  struct Reset {
    bool& flag;
    ~Reset() { flag = false; }
  } reset{replaying_};
  // A table whose DDL reads another (a DEFAULT with a subquery, …) may need that one
  // first: retry the failures while some entry succeeds.
  std::vector<std::pair<std::string, std::string>> pending = tables;
  Status last;
  std::string last_key;
  while (!pending.empty()) {
    std::vector<std::pair<std::string, std::string>> failed;
    for (auto& [key, text] : pending) {
      Status st = exec(text);
      if (!st.ok()) {
        failed.emplace_back(key, text);
        last = st;
        last_key = key;
      }
    }
    if (failed.size() == pending.size())
      throw Error(StatusCode::kCorrupt, "module '" + module_name + "': catalog entry '" + last_key +
                                            "' does not reopen: " + last.to_string() +
                                            ". The stored schema is kept as it is; open the store with a build that "
                                            "reads it, or repair the entry.");
    pending.swap(failed);
  }
  for (auto& [key, text] : views) {
    Status st = exec(text);
    if (!st.ok())
      spdlog::error("module '{}': view entry '{}' does not reopen ({}); the view is unavailable, its entry is kept",
                    module_name, key, st.to_string());
  }
}

void DatabaseImpl::persist_table(const TableEntry& table) {
  if (replaying_ || !persists(table.schema.schema_name) || !table.module) return;
  table.module->catalog_put(table_key(table.schema.schema_name, table.schema.name), table_bundle(table.schema));
}

void DatabaseImpl::unpersist_table(const TableEntry& table, const std::string& old_name) {
  if (replaying_ || !persists(table.schema.schema_name) || !table.module) return;
  table.module->catalog_put(table_key(table.schema.schema_name, old_name.empty() ? table.schema.name : old_name), "");
}

void DatabaseImpl::persist_view(const ViewEntry& view) {
  if (replaying_ || !persists(view.schema_name)) return;
  if (auto m = module(options_.default_vtab_module))
    m->catalog_put(view_key(view.schema_name, view.name), statement_to_string(*view.definition, view.schema_name));
}

void DatabaseImpl::unpersist_view(const std::string& schema, const std::string& name) {
  if (replaying_ || !persists(schema)) return;
  if (auto m = module(options_.default_vtab_module)) m->catalog_put(view_key(schema, name), "");
}

}  // namespace quereus
