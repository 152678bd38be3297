// libFuzzer target for the plugin manifest reader: any text is a manifest or a PLUGIN
// status ("not a plugin: …"), never a crash.
#include <cstdint>
#include <string_view>

#include "plugin/plugin_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  quereus::PluginManifest m;
  quereus::Status s = quereus::parse_plugin_manifest(
      std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.plugin.json", m);
  if (!s.ok() && s.code() != quereus::StatusCode::kPlugin) __builtin_trap();
  if (s.ok() && m.json.size() != size) __builtin_trap();
  return 0;
}
