// What the crash tests share: opening a database on the store module in a directory, and
// reading a query's rows.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "main/database.h"
#include "plugin/plugin_loader.h"

namespace quereus::crash {

// Opens a database whose default module is `store` (sync on) at `dir`/data, with the
// mem and store plugins of `plugin_dir` loaded into a fresh registry; `adjust` may add to
// the options (schema files, intents).
inline Status open_store_db(const std::string& plugin_dir, const std::string& dir, std::shared_ptr<Registry>* registry,
                            std::unique_ptr<Database>* db,
                            const std::function<void(DatabaseOptions&)>& adjust = {}) {
  *registry = std::make_shared<Registry>();
  PluginLoader loader(*registry, {plugin_dir});
  for (const char* name : {"mem", "store", "sync-store"}) {
    PluginSpec spec;
    spec.path = name;
    if (Status s = loader.load(spec); !s.ok()) return s;
  }
  DatabaseOptions options;
  options.default_module = "store";
  options.module_options["store"] = {{"path", Value::Text(dir + "/data")}, {"sync", Value::Boolean(true)}};
  if (adjust) adjust(options);
  return Database::Open(*registry, options, db);
}

// The rows of the last statement of `sql`; `*st` is the first failure (rows so far).
inline std::vector<Row> query_rows(Database& db, const std::string& sql, Status* st) {
  std::vector<std::unique_ptr<Statement>> stmts;
  std::vector<Row> out;
  *st = db.prepare(sql, &stmts);
  if (!st->ok()) return out;
  for (auto& s : stmts) {
    out.clear();
    bool has = true;
    while ((*st = s->step(&has)).ok() && has) out.push_back(s->row());
    if (!st->ok()) return out;
  }
  return out;
}

}  // namespace quereus::crash
