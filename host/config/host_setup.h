// Host setup: what HostOptions describe, made real — the plugin list with the built-in
// default `mem`, a Registry with the plugins loaded, and each database's DatabaseOptions.
// Shared by the `quereus` executable and the logic-test runner.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "config/options.h"
#include "main/database.h"
#include "catalog/registry.h"

namespace quereus {

class PluginLoader;

// <directory of the running executable>/../lib/quereus (normalized).
std::string default_plugin_dir();

// options.plugin_dir, or default_plugin_dir() when it is empty.
std::string effective_plugin_dir(const HostOptions& options);

// The plugins to load, in order: `mem` (origin "built-in default") unless options.plugins
// names it (an entry whose file stem is "mem"), then options.plugins.
std::vector<PluginEntry> plugins_to_load(const HostOptions& options);

// A registry with plugins_to_load(options) loaded from effective_plugin_dir(options).
// *loader receives the loader, which the caller keeps alive as long as the registry.
// Fails with the loader's status for the first refusal (kPlugin, naming path and origin).
Status load_host_plugins(const HostOptions& options, std::shared_ptr<Registry>* registry,
                         std::unique_ptr<PluginLoader>* loader);

// The DatabaseOptions for a database's configuration.
DatabaseOptions database_options(const DatabaseConfig& config);

// Opens the database `name` configured by `config` (Database::Open with
// database_options(config), named `name`), with errors passed through
// attach_config_origin.
Status open_configured_database(std::shared_ptr<Registry> registry, const std::string& name,
                                const DatabaseConfig& config, std::unique_ptr<Database>* out);

// `s` (a failed Database::Open of database `name`) with the place in the deployment file
// that configures the module it is about, when it is about one: a module that refused its
// options or storage while the database opened it, or a default module that is not
// registered. "config.yaml:12: module 'store' open of database main: …". Other statuses
// are returned unchanged.
Status attach_config_origin(const Status& s, const DatabaseConfig& config, const std::string& name);

}  // namespace quereus
