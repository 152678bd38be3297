// modules/mem/mem_module.cc — the table registry and the plugin entry of mem.so.
#include "mem_module.h"

#include <shared_mutex>
#include <utility>

#include "mem_table.h"

extern const char kMemManifest[];  // mem.plugin.json, embedded by CMake

namespace quereus::mem {
namespace {

std::string registry_key(std::string_view schema, std::string_view table) {
  std::string k;
  k.reserve(schema.size() + table.size() + 1);
  for (char c : schema) k += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  k += '\0';  // separator: identifiers do not contain NUL
  for (char c : table) k += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  return k;
}

void register_mem(sdk::Registrar& registrar) {
  auto module = std::make_shared<MemModule>();
  registrar.add_module("memory", module);
  registrar.add_module("mem", module);
}

}  // namespace

std::unique_ptr<sdk::Table> MemModule::create(const sdk::TableSchema& schema) {
  auto store = std::make_shared<TableStore>(schema);
  std::lock_guard lock(mu_);
  auto [it, inserted] = tables_.emplace(registry_key(schema.schema_name, schema.table_name), store);
  if (!inserted)
    throw sdk::Error::generic("table " + schema.schema_name + "." + schema.table_name + " already exists");
  return std::make_unique<MemTable>(this, std::move(store));
}

std::unique_ptr<sdk::Table> MemModule::connect(const sdk::TableSchema& schema) {
  std::string key = registry_key(schema.schema_name, schema.table_name);
  std::lock_guard lock(mu_);
  auto it = tables_.find(key);
  if (it == tables_.end()) it = tables_.emplace(key, std::make_shared<TableStore>(schema)).first;
  if (it->second->schema().columns.size() != schema.columns.size())
    throw sdk::Error::schema("table " + schema.table_name + " is stored with a different column count");
  return std::make_unique<MemTable>(this, it->second);
}

std::shared_ptr<sdk::Module> MemModule::open_database(std::string_view, const std::vector<sdk::Option>&) {
  return std::make_shared<MemModule>();
}

void MemModule::destroy(std::string_view schema_name, std::string_view table_name) {
  std::lock_guard lock(mu_);
  tables_.erase(registry_key(schema_name, table_name));
}

void MemModule::rename(const std::shared_ptr<TableStore>& store, std::string_view old_name,
                       std::string_view new_name) {
  std::string schema_name;
  {
    std::shared_lock slock(store->mutex());
    schema_name = store->schema().schema_name;
  }
  std::string from = registry_key(schema_name, old_name), to = registry_key(schema_name, new_name);
  std::lock_guard lock(mu_);
  if (from != to) {
    if (tables_.count(to)) throw sdk::Error::generic("table " + schema_name + "." + std::string(new_name) + " already exists");
    auto it = tables_.find(from);
    if (it == tables_.end() || it->second != store)
      throw sdk::Error::not_found("table " + schema_name + "." + std::string(old_name) + " is not stored here");
    tables_.emplace(to, store);
    tables_.erase(it);
  }
  std::unique_lock slock(store->mutex());
  store->rename(std::string(new_name));
}

uint32_t MemModule::notify_lens_deployment(const sdk::LensDeploymentSnapshot& snapshot) {
  std::lock_guard lock(mu_);
  uint32_t backed = 0;
  for (const sdk::LensTableSnapshot& t : snapshot.tables)
    for (const sdk::LensRelationBacking& r : t.relations)
      if (tables_.count(registry_key(r.schema_name, r.table_name))) ++backed;
  return backed;
}

}  // namespace quereus::mem

QUEREUS_PLUGIN(kMemManifest, quereus::mem::register_mem)
