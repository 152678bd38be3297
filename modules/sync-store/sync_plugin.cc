// modules/sync-store/sync_plugin.cc — the plugin entry: registers "sync-store" and its functions.
#include "sync_module.h"

extern const char kSyncStoreManifest[];  // sync-store.plugin.json, embedded by CMake

QUEREUS_PLUGIN(kSyncStoreManifest, quereus::sync::register_sync_store)
