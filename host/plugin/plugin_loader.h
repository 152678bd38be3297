// PluginLoader: finds, verifies and loads plugin shared libraries and registers what
// they provide in the Registry.
//
// Loading one plugin, in order:
//   1. resolve the file (a path, or a bare name looked up as <dir>/<name>.so);
//   2. read and validate the sidecar manifest <dir>/<stem>.plugin.json;
//   3. refuse an ABI major other than the host's;
//   4. read the library file once into memory (PluginImage, plugin_image.h) and, on those
//      bytes: verify the pinned SHA-256, if any; validate the ELF (a truncated or
//      malformed file is refused here, never mapped); require the dynamic symbol table to
//      export qrs_plugin_entry_v1 and qrs_plugin_manifest_v1; check the settings against
//      the manifest;
//   only then is plugin code run (its constructors first):
//   5. load those same bytes from a sealed memfd (Boost.DLL), so the pinned bytes are the
//      bytes loaded and a later change to the file cannot reach them; resolve both entry
//      points and require the embedded manifest to equal the sidecar (as JSON) — the one
//      refusal that comes after the library's constructors ran;
//   6. call the entry; registrations are staged and checked (declared in the manifest's
//      `provides`, no name taken in the Registry or twice by the plugin);
//   7. commit everything to the Registry, or nothing.
//
// Manifest (JSON):
//   { "name": "sample", "version": "1.0.0",
//     "abi": { "major": 1, "minor": 0 },
//     "provides": { "modules": [..], "collations": [..], "functions": [..] },
//     "settings": [ { "key": "k", "type": "string", "default": .. }, .. ]   // optional
//   }
// When `settings` is present, a setting the deployment gives that it does not declare is
// refused, and declared defaults are passed for settings the deployment omits.
//
// Registration ownership: a registration that returns QRS_OK transfers the module's
// `self` / the definition's `user` to the host (released through their release slots, also
// when the plugin is refused later); a refused one (QRS_ERROR + message) leaves it with the
// plugin, which is how the SDK's Registrar behaves.
//
// A loaded plugin is never unloaded while anything it created lives: every adapter holds
// the library (PluginLibrary), and so does the loader.
//
// Thread safety: not thread-safe; load plugins before the Registry is used concurrently.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "catalog/registry.h"
#include "plugin/host_api.h"
#include "types/value.h"

namespace quereus {

// One `plugins:` entry of a deployment.
struct PluginSpec {
  std::string path;                   // a file path, or a bare name looked up in the search dirs
  std::optional<std::string> sha256;  // pinned hex digest of the library file (any case)
  std::vector<std::pair<std::string, Value>> settings;  // handed to the plugin's entry
  std::string origin;  // "file:line" of the YAML entry, for messages ("" if none)
};

// One setting a manifest declares.
struct PluginSettingDecl {
  std::string key;
  std::optional<Value> default_value;
};

// A plugin's manifest, as read from its sidecar file.
struct PluginManifest {
  std::string name;
  std::string version;
  int abi_major = 0;
  int abi_minor = 0;
  std::vector<std::string> modules;     // provides.modules
  std::vector<std::string> collations;  // provides.collations
  std::vector<std::string> functions;   // provides.functions (scalar and aggregate)
  std::optional<std::vector<PluginSettingDecl>> settings;  // nullopt: none declared
  std::string json;                                        // the sidecar's text
};

// One plugin the loader accepted.
struct LoadedPlugin {
  std::string path;  // the resolved library file
  std::string origin;
  PluginManifest manifest;
  // What it registered (registry names: modules and functions lower-case, collations upper-case).
  std::vector<std::string> modules, collations, functions;
  PluginLibrary library;
};

class PluginLoader {
 public:
  // REQUIRES: registry != nullptr. search_dirs are tried in order for bare names.
  PluginLoader(std::shared_ptr<Registry> registry, std::vector<std::string> search_dirs);

  // Loads one plugin and registers everything it provides, or nothing. On refusal returns
  // Status(kPlugin, "plugin '<path>': <reason>"), with " (at <origin>)" appended when the
  // spec has an origin.
  Status load(const PluginSpec& spec);

  // The plugins accepted so far, in load order.
  const std::vector<LoadedPlugin>& loaded() const { return loaded_; }

  // The absolute path `path` names (see PluginSpec::path), or nullopt when absent.
  std::optional<std::string> resolve(const std::string& path) const;

  // Fault injection for tests: called with the library's path after every check on its
  // bytes and before they are loaded (a test swaps or truncates the file there).
  void set_before_load_for_testing(std::function<void(const std::string& path)> hook) {
    before_load_for_testing_ = std::move(hook);
  }

 private:
  std::function<void(const std::string&)> before_load_for_testing_;
  std::shared_ptr<Registry> registry_;
  std::vector<std::string> search_dirs_;
  std::vector<LoadedPlugin> loaded_;
};

// Validates manifest text (`file` names it in messages). Errors are the bare reason.
Status parse_plugin_manifest(std::string_view text, const std::string& file, PluginManifest& out);

// Reads and validates the sidecar manifest of `library_path` without loading the library.
// Errors are the bare reason ("not a plugin: …").
Status read_plugin_manifest(const std::string& library_path, PluginManifest& out);

// The lower-case hex SHA-256 of a file's contents (as the loader reads it: a regular
// file of at most PluginImage::kMaxBytes), or nullopt when it cannot be read.
std::optional<std::string> sha256_file_hex(const std::string& path);

}  // namespace quereus
