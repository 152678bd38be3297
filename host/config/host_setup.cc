// Host setup: HostOptions → loaded plugins and DatabaseOptions.
#include "config/host_setup.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string_view>

#include "plugin/module_adapter.h"
#include "plugin/plugin_loader.h"

namespace quereus {

namespace fs = std::filesystem;

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

}  // namespace

std::string default_plugin_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "lib/quereus";
  return (exe.parent_path() / ".." / "lib" / "quereus").lexically_normal().string();
}

std::string effective_plugin_dir(const HostOptions& options) {
  return options.plugin_dir.empty() ? default_plugin_dir() : options.plugin_dir;
}

std::vector<PluginEntry> plugins_to_load(const HostOptions& options) {
  std::vector<PluginEntry> out;
  const bool lists_mem = std::any_of(options.plugins.begin(), options.plugins.end(),
                                     [](const PluginEntry& e) { return fs::path(e.path).stem() == "mem"; });
  if (!lists_mem) out.push_back(PluginEntry{"mem", std::nullopt, {}, "built-in default"});
  out.insert(out.end(), options.plugins.begin(), options.plugins.end());
  return out;
}

Status load_host_plugins(const HostOptions& options, std::shared_ptr<Registry>* registry,
                         std::unique_ptr<PluginLoader>* loader) {
  *registry = std::make_shared<Registry>();
  *loader =
      std::make_unique<PluginLoader>(*registry, std::vector<std::string>{effective_plugin_dir(options)});
  for (const PluginEntry& e : plugins_to_load(options)) {
    Status s = (*loader)->load(PluginSpec{e.path, e.sha256, e.settings, e.origin});
    if (!s.ok()) return s;  // kPlugin, "plugin '<path>': <reason> (at <origin>)"
  }
  return Status::Ok();
}

DatabaseOptions database_options(const DatabaseConfig& config) {
  DatabaseOptions out;
  out.default_module = config.default_module;
  out.module_options = config.module_options;
  out.limits = config.limits;
  out.statement_timeout_ms = config.statement_timeout_ms;
  out.file_access = static_cast<DatabaseOptions::FileAccess>(config.file_access);
  out.schema_files = config.schema_files;
  out.migrate = config.migrate;
  return out;
}

Status attach_config_origin(const Status& s, const DatabaseConfig& config, const std::string& name) {
  if (s.ok()) return s;
  const std::string& message = s.raw_message();
  for (const auto& [module, origin] : config.module_origins) {
    if (origin.empty()) continue;
    // The registry names modules in lower case; the file may not.
    const bool about_module =
        starts_with(lower(message), lower(module_open_context(module, name) + ":")) ||
        starts_with(message, "default module '" + module + "' is not registered");
    if (about_module) return Status(s.code(), origin + ": " + message, s.site());
  }
  return s;
}

Status open_configured_database(std::shared_ptr<Registry> registry, const std::string& name,
                                const DatabaseConfig& config, std::unique_ptr<Database>* out) {
  DatabaseOptions options = database_options(config);
  options.name = name;
  return attach_config_origin(Database::Open(std::move(registry), options, out), config, name);
}

}  // namespace quereus
