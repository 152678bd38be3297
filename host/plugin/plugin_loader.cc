// Plugin loading: manifest and hash verification before any plugin code runs, then
// dlopen, entry call and an all-or-nothing commit of the plugin's registrations.
#include "plugin/plugin_loader.h"

#include <dlfcn.h>
#include <spdlog/spdlog.h>

#include <boost/dll/shared_library.hpp>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "plugin/module_adapter.h"
#include "plugin/plugin_image.h"

namespace quereus {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string fold(std::string_view s, int (*f)(int)) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(f(static_cast<unsigned char>(c)));
  return out;
}
std::string lower(std::string_view s) { return fold(s, ::tolower); }

// A manifest is a few hundred bytes; a larger sidecar is refused unread.
constexpr size_t kMaxManifestBytes = size_t{1} << 20;

std::optional<std::string> read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text(kMaxManifestBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return std::nullopt;
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

Value json_to_value(const json& j) {
  if (j.is_null()) return Value();
  if (j.is_boolean()) return Value::Boolean(j.get<bool>());
  if (j.is_number_integer()) return Value::Integer(j.get<int64_t>());
  if (j.is_number()) return Value::Real(j.get<double>());
  if (j.is_string()) return Value::Text(j.get<std::string>());
  return Value::Json(j.dump());
}

// Validates the manifest's shape; returns the first problem, or "".
std::string parse_manifest(const json& j, PluginManifest& m) {
  if (!j.is_object()) return "not a JSON object";
  for (const char* key : {"name", "version"})
    if (!j.contains(key) || !j[key].is_string()) return std::string("missing string '") + key + "'";
  m.name = j["name"].get<std::string>();
  m.version = j["version"].get<std::string>();
  const json* abi = j.contains("abi") ? &j["abi"] : nullptr;
  for (const char* key : {"major", "minor"})
    if (!abi || !abi->is_object() || !abi->contains(key) || !(*abi)[key].is_number_integer())
      return std::string("missing integer 'abi.") + key + "'";
  m.abi_major = (*abi)["major"].get<int>();
  m.abi_minor = (*abi)["minor"].get<int>();
  if (!j.contains("provides") || !j["provides"].is_object()) return "missing object 'provides'";
  const json& provides = j["provides"];
  for (auto [key, list] : {std::pair{"modules", &m.modules},
                           {"collations", &m.collations},
                           {"functions", &m.functions}}) {
    const json* a = provides.contains(key) ? &provides[key] : nullptr;
    if (!a || !a->is_array()) return std::string("missing array 'provides.") + key + "'";
    for (const json& name : *a) {
      if (!name.is_string()) return std::string("'provides.") + key + "' must hold strings";
      list->push_back(name.get<std::string>());
    }
  }
  if (!j.contains("settings")) return "";
  const json& settings = j["settings"];
  m.settings.emplace();
  auto add = [&](std::string key, const json& decl) {
    bool has_default = decl.is_object() && decl.contains("default");
    m.settings->push_back({std::move(key), has_default
                                               ? std::optional(json_to_value(decl["default"]))
                                               : std::nullopt});
  };
  if (settings.is_object()) {  // { "key": { "default": … }, … }
    for (const auto& [key, decl] : settings.items()) add(key, decl);
  } else if (settings.is_array()) {  // [ { "key": …, "default": … }, … ]
    for (const json& decl : settings) {
      if (!decl.is_object() || !decl.contains("key") || !decl["key"].is_string())
        return "each of 'settings' must be an object with a string 'key'";
      add(decl["key"].get<std::string>(), decl);
    }
  } else {
    return "'settings' must be an array or an object";
  }
  return "";
}

bool declared(const std::vector<std::string>& list, std::string_view name) {
  std::string key = lower(name);
  for (const std::string& n : list)
    if (lower(n) == key) return true;
  return false;
}

// Registrations of one plugin, staged until its entry returned. Each is tried at once on
// a copy of the registry, so a collision is reported (to the plugin and the user) with the
// registry's own message; nothing reaches the real registry before load() commits.
struct Staging {
  Staging(const Registry& registry, const PluginManifest& m, PluginLibrary lib, std::string o)
      : trial(registry), manifest(m), library(std::move(lib)), origin(std::move(o)) {}

  Registry trial;
  const PluginManifest& manifest;
  PluginLibrary library;
  std::string origin;
  std::vector<std::pair<std::string, std::shared_ptr<PluginModule>>> modules;
  std::vector<std::shared_ptr<const Collation>> collations;
  std::vector<ScalarFunction> scalars;
  std::vector<AggregateFunction> aggregates;
  std::set<std::string> own;  // "kind:name" of every registration so far
  std::string failure;        // the first refused registration

  void once(const std::string& kind, const std::string& name, const std::string& key) {
    if (!own.insert(kind + ":" + key).second)
      throw Error(StatusCode::kPlugin,
                  "duplicate " + kind + " name '" + name + "': registered twice by the plugin");
  }

  void require_declared(const char* kind, const std::string& name,
                        const std::vector<std::string>& list, const char* field) {
    if (!declared(list, name))
      throw Error(StatusCode::kPlugin, std::string(kind) + " '" + name +
                                           "' is not declared in the manifest's provides." + field);
  }

  // Runs one registration; never throws (it is called from plugin code).
  template <class F>
  static qrs_status guard(void* ctx, qrs_error* err, F&& f) {
    auto& s = *static_cast<Staging*>(ctx);
    std::string why;
    try {
      f(s);
      return QRS_OK;
    } catch (const std::exception& e) {
      why = e.what();
    } catch (...) {
      why = "unknown error";
    }
    if (s.failure.empty()) s.failure = why;
    if (err && err->set_message) err->set_message(err, why.data(), why.size());
    return QRS_ERROR;
  }

  // Each registration is checked (shape, manifest, collisions) before the host takes
  // ownership: a refused registration stays the plugin's, as the SDK expects.
  static qrs_status add_module(void* ctx, qrs_string name, qrs_module module, qrs_error* err) {
    return guard(ctx, err, [&](Staging& s) {
      std::string n(to_view(name));
      if (n.empty() || module.vt == nullptr)
        throw Error(StatusCode::kPlugin, "module '" + n + "': empty name or no vtable");
      s.require_declared("module", n, s.manifest.modules, "modules");
      s.once("module", n, lower(n));
      s.trial.add_module(n, nullptr, s.origin);
      s.modules.emplace_back(lower(n), PluginModule::make(n, module, s.library));
    });
  }
  static qrs_status add_scalar(void* ctx, const qrs_scalar_function_def* def, qrs_error* err) {
    return guard(ctx, err, [&](Staging& s) {
      auto d = copy_struct(def);
      s.check_function(d.name, d.num_args,
                       [&](ScalarFunction f) { s.trial.add_scalar(f, s.origin); });
      s.scalars.push_back(make_plugin_scalar(d, s.library));
    });
  }
  static qrs_status add_aggregate(void* ctx, const qrs_aggregate_function_def* def,
                                  qrs_error* err) {
    return guard(ctx, err, [&](Staging& s) {
      auto d = copy_struct(def);
      s.check_function(d.name, d.num_args, [&](const ScalarFunction& f) {
        s.trial.add_aggregate(AggregateFunction{f.name, f.num_args, f.flags, 0, {}, {}}, s.origin);
      });
      s.aggregates.push_back(make_plugin_aggregate(d, s.library));
    });
  }
  static qrs_status add_collation(void* ctx, const qrs_collation_def* def, qrs_error* err) {
    return guard(ctx, err, [&](Staging& s) {
      auto d = copy_struct(def);
      std::string n(to_view(d.name));
      s.require_declared("collation", n, s.manifest.collations, "collations");
      s.once("collation", n, fold(n, ::toupper));
      s.trial.add_collation(std::make_shared<const Collation>(n, nullptr, nullptr, 0), s.origin);
      s.collations.push_back(make_plugin_collation(d, s.library));
    });
  }

  // Checks a function registration against the manifest, then `add` tries it on `trial`.
  template <class Add>
  void check_function(qrs_string name, int32_t num_args, Add&& add) {
    ScalarFunction probe;
    probe.name = lower(to_view(name));
    probe.num_args = num_args;
    require_declared("function", probe.name, manifest.functions, "functions");
    once("function", probe.name, probe.name + "/" + std::to_string(num_args));
    add(std::move(probe));
  }
};

}  // namespace

Status parse_plugin_manifest(std::string_view text, const std::string& file, PluginManifest& out) {
  json j = json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded()) return Status(StatusCode::kPlugin, "not a plugin: malformed manifest " + file);
  PluginManifest m;
  std::string problem = parse_manifest(j, m);
  if (!problem.empty()) return Status(StatusCode::kPlugin, "not a plugin: manifest " + file + ": " + problem);
  m.json = std::string(text);
  out = std::move(m);
  return Status::Ok();
}

Status read_plugin_manifest(const std::string& library_path, PluginManifest& out) {
  fs::path lib(library_path);
  fs::path file = lib.parent_path() / (lib.stem().string() + ".plugin.json");
  auto text = read_text(file);
  if (!text) return Status(StatusCode::kPlugin, "not a plugin: no manifest " + file.string());
  if (text->size() > kMaxManifestBytes)
    return Status(StatusCode::kPlugin, "not a plugin: manifest " + file.string() + " is larger than " +
                                           std::to_string(kMaxManifestBytes) + " bytes");
  return parse_plugin_manifest(*text, file.string(), out);
}

std::optional<std::string> sha256_file_hex(const std::string& path) {
  PluginImage image;
  if (!PluginImage::read(path, &image).ok()) return std::nullopt;
  return image.sha256();
}

PluginLoader::PluginLoader(std::shared_ptr<Registry> registry, std::vector<std::string> search_dirs)
    : registry_(std::move(registry)), search_dirs_(std::move(search_dirs)) {}

std::optional<std::string> PluginLoader::resolve(const std::string& path) const {
  auto found = [](const fs::path& p) -> std::optional<std::string> {
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) return std::nullopt;
    return fs::absolute(p, ec).lexically_normal().string();
  };
  if (path.find('/') != std::string::npos) return found(path);
  std::string file = fs::path(path).extension() == ".so" ? path : path + ".so";
  for (const std::string& dir : search_dirs_)
    if (auto p = found(fs::path(dir) / file)) return p;
  return std::nullopt;
}

Status PluginLoader::load(const PluginSpec& spec) {
  std::string shown = spec.path;
  auto refuse = [&](const std::string& reason) {
    std::string m = "plugin '" + shown + "': " + reason;
    if (!spec.origin.empty()) m += " (at " + spec.origin + ")";
    return Status(StatusCode::kPlugin, m);
  };

  // 1. The file.
  auto resolved = resolve(spec.path);
  if (!resolved) {
    std::string where;
    if (spec.path.find('/') == std::string::npos) {
      for (const std::string& d : search_dirs_) where += (where.empty() ? "" : ", ") + d;
      where = " (searched: " + (where.empty() ? std::string("no search directories") : where) + ")";
    }
    return refuse("file not found" + where);
  }
  shown = *resolved;

  // 2-4. Manifest, ABI, hash: no plugin code has run yet.
  PluginManifest manifest;
  if (Status st = read_plugin_manifest(*resolved, manifest); !st.ok())
    return refuse(st.raw_message());
  if (manifest.abi_major != QRS_ABI_MAJOR)
    return refuse("ABI major mismatch: plugin built for ABI " + std::to_string(manifest.abi_major) +
                  ", host speaks ABI " + std::to_string(QRS_ABI_MAJOR));
  // The library is read once; the hash, the ELF checks and the load all use those bytes.
  PluginImage image;
  if (Status st = PluginImage::read(*resolved, &image); !st.ok()) return refuse(st.raw_message());
  if (spec.sha256 && lower(*spec.sha256) != image.sha256())
    return refuse("SHA-256 mismatch: expected " + lower(*spec.sha256) + ", actual " + image.sha256());
  if (Status st = image.validate(); !st.ok()) return refuse(st.raw_message());
  for (const char* symbol : {QRS_PLUGIN_ENTRY_V1, QRS_PLUGIN_MANIFEST_V1})
    if (!image.exports(symbol)) return refuse(std::string("not a plugin: no ") + symbol + " symbol");
  std::vector<std::pair<std::string, Value>> settings = spec.settings;
  if (manifest.settings) {
    for (const auto& [key, value] : settings) {
      bool known = false;
      for (const auto& decl : *manifest.settings) known = known || decl.key == key;
      if (!known) return refuse("unknown setting '" + key + "' (not declared in the manifest)");
    }
    for (const auto& decl : *manifest.settings) {
      bool given = false;
      for (const auto& s : settings) given = given || s.first == decl.key;
      if (!given && decl.default_value) settings.emplace_back(decl.key, *decl.default_value);
    }
  }

  // 5. Load and check the embedded manifest. Only now does library code run.
  if (before_load_for_testing_) before_load_for_testing_(*resolved);
  PluginLibrary lib;
  if (Status st = image.load(&lib); !st.ok()) return refuse(st.raw_message());
  if (!lib->has(QRS_PLUGIN_ENTRY_V1))
    return refuse("not a plugin: no " QRS_PLUGIN_ENTRY_V1 " symbol");
  if (!lib->has(QRS_PLUGIN_MANIFEST_V1))
    return refuse("not a plugin: no " QRS_PLUGIN_MANIFEST_V1 " symbol");
  const char* embedded = lib->get<const char*()>(QRS_PLUGIN_MANIFEST_V1)();
  json sidecar = json::parse(manifest.json);
  json inner = embedded ? json::parse(embedded, nullptr, false) : json();
  if (inner.is_discarded() || inner != sidecar)
    return refuse("the embedded manifest differs from the sidecar " +
                  fs::path(*resolved).replace_extension(".plugin.json").string());
  auto entry = lib->get<std::remove_pointer_t<qrs_plugin_entry_v1_fn>>(QRS_PLUGIN_ENTRY_V1);

  // 6. Run the entry against a staging registrar.
  PluginLibrary library = lib;
  std::string origin = "plugin '" + shown + "'";
  if (!spec.origin.empty()) origin += " (" + spec.origin + ")";
  Staging staging(*registry_, manifest, library, origin);
  std::vector<qrs_option> options;
  for (const auto& [key, value] : settings) options.push_back({to_qrs(key), to_qrs(value)});
  qrs_registrar reg{};
  reg.struct_size = sizeof(reg);
  reg.ctx = &staging;
  reg.settings = options.data();
  reg.setting_count = static_cast<uint32_t>(options.size());
  reg.register_module = &Staging::add_module;
  reg.register_scalar = &Staging::add_scalar;
  reg.register_aggregate = &Staging::add_aggregate;
  reg.register_collation = &Staging::add_collation;
  ErrorBox err;
  qrs_status st;
  try {
    st = call_plugin(QRS_PLUGIN_ENTRY_V1, entry, host_api(), &reg, err.get());
  } catch (const Error& e) {  // an exception escaped the entry: refuse the plugin
    return refuse(e.raw_message());
  }
  if (!staging.failure.empty()) return refuse(staging.failure);  // staged objects released here
  if (st != QRS_OK)
    return refuse(std::string(QRS_PLUGIN_ENTRY_V1 " failed (") + qrs_status_name(st) + ")" +
                  (err.message().empty() ? "" : ": " + err.message()));

  // An INVERSE profile's function must exist with the arity it is called with (the
  // written value plus the other arguments): registered by this plugin or already loaded.
  for (const auto& f : staging.scalars) {
    if (f.invertibility.kind != Invertibility::Kind::kInverse) continue;
    const std::string& g = f.invertibility.inverse;
    const int argc = f.num_args < 0 ? -1 : f.num_args;
    bool found = registry_->find_scalar(g, argc) != nullptr;
    for (const auto& o : staging.scalars)
      found = found || (o.name == g && (o.num_args < 0 || o.num_args == argc));
    if (!found)
      return refuse("function '" + f.name + "': its inverse '" + g + "' is not a registered scalar function taking " +
                    (argc < 0 ? std::string("its arguments") : std::to_string(argc) + " argument(s)") +
                    " (register it in the same plugin)");
  }

  // 7. Commit. Every registration already succeeded on a copy of the registry.
  LoadedPlugin record{shown, spec.origin, manifest, {}, {}, {}, library};
  for (auto& [name, module] : staging.modules) {
    registry_->add_module(name, module, origin);
    record.modules.push_back(name);
  }
  for (auto& c : staging.collations) {
    registry_->add_collation(c, origin);
    record.collations.push_back(c->name());
  }
  for (auto& f : staging.scalars) {
    record.functions.push_back(f.name);
    registry_->add_scalar(std::move(f), origin);
  }
  for (auto& f : staging.aggregates) {
    record.functions.push_back(f.name);
    registry_->add_aggregate(std::move(f), origin);
  }
  auto warn_missing = [&](const std::vector<std::string>& declared_names,
                          const std::vector<std::string>& registered, const char* kind) {
    for (const std::string& n : declared_names)
      if (!declared(registered, n))
        spdlog::warn("{}: declares {} '{}' but did not register it", origin, kind, n);
  };
  warn_missing(manifest.modules, record.modules, "module");
  warn_missing(manifest.collations, record.collations, "collation");
  warn_missing(manifest.functions, record.functions, "function");
  spdlog::info("loaded {} {} from {}", manifest.name, manifest.version, shown);
  loaded_.push_back(std::move(record));
  return Status::Ok();
}

}  // namespace quereus
