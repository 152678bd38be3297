// modules/store/store_module.cc — the module objects and option parsing (the plugin entry
// is store_plugin.cc; sync-store builds on the same objects).
#include <mutex>
#include <string>
#include <utility>

#include "store_table.h"

namespace quereus::store {
namespace {

[[noreturn]] void needs_database() {
  throw sdk::Error::misuse(
      "the store module keeps tables on disk and needs a data directory: configure the database's module "
      "options for 'store' with a `path` (e.g. databases.main.module_options.store.path in the YAML config)");
}

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }
std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = lower(c);
  return out;
}

}  // namespace

std::string option_error_prefix(std::string_view module, std::string_view db) {
  return std::string(module) + " (database " + std::string(db) + "): option ";
}

bool option_bool(std::string_view module, std::string_view db, const sdk::Option& o) {
  const sdk::Value& v = o.value;
  switch (v.type()) {
    case sdk::ValueType::kBoolean: return v.as_boolean();
    case sdk::ValueType::kInteger:
      if (v.as_integer() == 0 || v.as_integer() == 1) return v.as_integer() == 1;
      break;
    case sdk::ValueType::kText: {
      std::string t = lower(v.as_text());
      if (t == "true" || t == "yes" || t == "on" || t == "1") return true;
      if (t == "false" || t == "no" || t == "off" || t == "0") return false;
      break;
    }
    default: break;
  }
  throw sdk::Error::misuse(option_error_prefix(module, db) + "'" + o.key + "' must be true or false, got " +
                           v.debug_string());
}

int64_t option_size(std::string_view module, std::string_view db, const sdk::Option& o) {
  const sdk::Value& v = o.value;
  if (v.type() == sdk::ValueType::kInteger && v.as_integer() >= 0) return v.as_integer();
  if (v.type() == sdk::ValueType::kText) {
    std::string t(v.as_text());
    size_t used = 0;
    try {
      long long n = std::stoll(t, &used);
      if (used == t.size() && n >= 0) return n;
    } catch (const std::exception&) {
    }
  }
  throw sdk::Error::misuse(option_error_prefix(module, db) + "'" + o.key +
                           "' must be a byte count (a non-negative integer), got " + v.debug_string());
}

StoreOptions parse_options(std::string_view db, const std::vector<sdk::Option>& options, std::string_view module,
                           const std::function<bool(const sdk::Option&)>& extra, std::string_view extra_names) {
  StoreOptions out;
  bool has_path = false;
  for (const sdk::Option& o : options) {
    std::string key = lower(o.key);
    if (key == "path") {
      if (o.value.type() != sdk::ValueType::kText || o.value.as_text().empty())
        throw sdk::Error::misuse(option_error_prefix(module, db) + "'path' must be a non-empty directory path, got " +
                                 o.value.debug_string());
      out.kv.path = std::string(o.value.as_text());
      has_path = true;
    } else if (key == "sync") {
      out.sync = option_bool(module, db, o);
    } else if (key == "cache_size") {
      out.kv.cache_size = option_size(module, db, o);
    } else if (key == "paranoid_checks") {
      out.kv.paranoid_checks = option_bool(module, db, o);
    } else if (key == "verify_checksums") {
      out.kv.verify_checksums = option_bool(module, db, o);
    } else if (key == "create_if_missing") {
      out.kv.create_if_missing = option_bool(module, db, o);
    } else if (!extra || !extra(o)) {
      throw sdk::Error::misuse(option_error_prefix(module, db) + "'" + o.key + "' is unknown (" + std::string(module) +
                               " takes path, sync, cache_size, paranoid_checks, verify_checksums, create_if_missing" +
                               std::string(extra_names) + ")");
    }
  }
  if (!has_path)
    throw sdk::Error::misuse(std::string(module) + " (database " + std::string(db) +
                             "): the option 'path' is required: name the data directory of the database "
                             "(module_options." + std::string(module) + ".path)");
  return out;
}

// ---- the shared instance ----

std::unique_ptr<sdk::Table> StoreModule::create(const sdk::TableSchema&) { needs_database(); }
std::unique_ptr<sdk::Table> StoreModule::connect(const sdk::TableSchema&) { needs_database(); }
void StoreModule::destroy(std::string_view, std::string_view) { needs_database(); }

sdk::Capabilities StoreModule::capabilities() const {
  sdk::Capabilities c;
  c.persistent = true;
  c.committed_reads = true;
  c.backing_host = true;  // SDK 1.5: apply_maintenance / replace_contents
  return c;
}

std::shared_ptr<sdk::Module> StoreModule::open_database(std::string_view database_name,
                                                        const std::vector<sdk::Option>& options) {
  StoreOptions o = parse_options(database_name, options);
  return std::make_shared<StoreDbModule>(std::make_shared<StoreDb>(o));
}

// ---- one opened database ----

std::unique_ptr<sdk::Table> StoreDbModule::create(const sdk::TableSchema& schema) {
  std::lock_guard lock(db_->mu());
  return std::make_unique<StoreTable>(db_, db_->open_table(schema, true));
}

std::unique_ptr<sdk::Table> StoreDbModule::connect(const sdk::TableSchema& schema) {
  std::lock_guard lock(db_->mu());
  return std::make_unique<StoreTable>(db_, db_->open_table(schema, false));
}

void StoreDbModule::backup(std::string_view dest_dir, const BackupProgress& progress) {
  db_->backup(std::string(dest_dir), progress);
}

uint32_t StoreDbModule::notify_lens_deployment(const sdk::LensDeploymentSnapshot& snapshot) {
  std::lock_guard lock(db_->mu());
  uint32_t backed = 0;
  for (const sdk::LensTableSnapshot& t : snapshot.tables)
    for (const sdk::LensRelationBacking& r : t.relations)
      if (db_->has_table(r.schema_name, r.table_name)) ++backed;
  return backed;
}

void StoreDbModule::destroy(std::string_view schema_name, std::string_view table_name) {
  std::lock_guard lock(db_->mu());
  db_->destroy_table(schema_name, table_name);
}

sdk::Capabilities StoreDbModule::capabilities() const {
  sdk::Capabilities c;
  c.persistent = true;
  c.committed_reads = true;
  c.backing_host = true;  // SDK 1.5: apply_maintenance / replace_contents
  return c;
}

void StoreDbModule::catalog_put(std::string_view key, std::string_view text) {
  std::lock_guard lock(db_->mu());
  db_->catalog_put(key, text);
}

void StoreDbModule::catalog_list(const std::function<void(std::string_view, std::string_view)>& emit) {
  db_->catalog_list(emit);  // emit may call back into the module: no lock held
}

void StoreDbModule::schema_begin() {
  std::lock_guard lock(db_->mu());
  db_->schema_begin();
}

void StoreDbModule::schema_commit() {
  std::lock_guard lock(db_->mu());
  db_->schema_commit();
}

void StoreDbModule::schema_rollback() {
  std::lock_guard lock(db_->mu());
  db_->schema_rollback();
}

}  // namespace quereus::store
