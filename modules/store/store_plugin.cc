// modules/store/store_plugin.cc — the store plugin's entry: registers the module "store".
#include "store_table.h"

extern const char kStoreManifest[];  // store.plugin.json, embedded by CMake

namespace quereus::store {
namespace {
void register_store(sdk::Registrar& registrar) { registrar.add_module("store", std::make_shared<StoreModule>()); }
}  // namespace
}  // namespace quereus::store

QUEREUS_PLUGIN(kStoreManifest, quereus::store::register_store)
