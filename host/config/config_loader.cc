// Configuration: YAML deployment files → HostOptions. Errors are thrown as ConfigError
// inside this file and come out of the two public functions as Status(kConfig).
#include "config/config_loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

namespace quereus {
namespace {

struct ConfigError {
  std::string message;
};

// A deployment file is small; these bound what a hostile one can cost. Aliases are shared
// nodes in yaml-cpp, so an alias bomb loads in kilobytes but expands on every walk: the
// walk below counts each visit, aliases included, and refuses past the limit before the
// parser copies anything.
constexpr size_t kMaxConfigBytes = size_t{1} << 20;
constexpr size_t kMaxNodeVisits = 100'000;

constexpr const char* kLevelNames[] = {"trace", "debug", "info", "warn", "error", "off"};
constexpr const char* kSinkNames[] = {"stderr", "stdout", "file", "rotating_file", "daily_file"};

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
      diag = up;
    }
  }
  return row[b.size()];
}

// Hand-written scanners for the YAML 1.2 core-schema scalars: linear, no recursion, no
// std::regex (whose matcher recurses per character and overflows the stack on a long
// number).
size_t skip_digits(std::string_view s, size_t i) {
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  return i;
}
size_t skip_sign(std::string_view s) { return !s.empty() && (s[0] == '-' || s[0] == '+') ? 1 : 0; }
// [-+]?[0-9]+
bool is_decimal_integer(std::string_view s) {
  size_t i = skip_sign(s);
  return i < s.size() && skip_digits(s, i) == s.size();
}
bool is_hex_digit(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }
// 0x[0-9a-fA-F]+
bool is_hex_integer(std::string_view s) {
  return s.size() > 2 && s[0] == '0' && s[1] == 'x' && std::all_of(s.begin() + 2, s.end(), is_hex_digit);
}
// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool is_decimal_real(std::string_view s) {
  size_t i = skip_sign(s);
  if (i < s.size() && s[i] == '.') {
    size_t j = skip_digits(s, i + 1);
    if (j == i + 1) return false;
    i = j;
  } else {
    size_t j = skip_digits(s, i);
    if (j == i) return false;
    i = j;
    if (i < s.size() && s[i] == '.') i = skip_digits(s, i + 1);
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    size_t j = skip_digits(s, i);
    if (j == i) return false;
    i = j;
  }
  return i == s.size();
}
// [-+]?\.(inf|Inf|INF)
bool is_infinity(std::string_view s) {
  std::string_view rest = s.substr(skip_sign(s));
  return rest == ".inf" || rest == ".Inf" || rest == ".INF";
}
// \.(nan|NaN|NAN)
bool is_nan(std::string_view s) { return s == ".nan" || s == ".NaN" || s == ".NAN"; }

bool is_var_name(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// Parses one deployment file. `file_` prefixes every message and origin.
class Parser {
 public:
  explicit Parser(std::string file) : file_(std::move(file)) {}

  void parse(const YAML::Node& root, HostOptions* out) {
    if (root.IsNull()) return;
    check_expansion(root);
    if (!root.IsMap()) fail(root.Mark(), "the top level must be a mapping");
    for_each(root, "top level", {"plugin_dir", "plugins", "databases", "logging", "server"},
             [&](const std::string& key, const YAML::Node& k, const YAML::Node& v) {
               if (key == "plugin_dir")
                 out->plugin_dir = string(k, v);
               else if (key == "plugins")
                 plugins(k, v, &out->plugins);
               else if (key == "databases")
                 databases(k, v, &out->databases);
               else if (key == "server")
                 server(k, v, out);
               else
                 logging(k, v, &out->logging);
             });
  }

 private:
  using EntryFn = std::function<void(const std::string&, const YAML::Node&, const YAML::Node&)>;

  std::string where(const YAML::Mark& m) const {
    return m.line >= 0 ? file_ + ":" + std::to_string(m.line + 1) : file_;
  }
  [[noreturn]] void fail(const YAML::Mark& m, const std::string& message) const {
    throw ConfigError{where(m) + ": " + message};
  }

  // Refuses a document that expands (aliases followed) to more than kMaxNodeVisits
  // nodes. Iterative, so the depth of the document costs no stack.
  void check_expansion(const YAML::Node& root) const {
    std::vector<YAML::Node> stack{root};
    size_t visits = 0;
    while (!stack.empty()) {
      YAML::Node n = stack.back();
      stack.pop_back();
      if (++visits > kMaxNodeVisits)
        fail(n.Mark(), "the document expands to more than " + std::to_string(kMaxNodeVisits) +
                           " nodes (aliases counted each time they are used); refusing it");
      if (n.IsSequence()) {
        for (auto it = n.begin(); it != n.end(); ++it) stack.push_back(*it);
      } else if (n.IsMap()) {
        for (auto it = n.begin(); it != n.end(); ++it) {
          stack.push_back(it->first);
          stack.push_back(it->second);
        }
      }
    }
  }

  // Calls fn for every entry of `map` after checking its key is known and not repeated.
  void for_each(const YAML::Node& map, const std::string& context, std::initializer_list<const char*> known,
                const EntryFn& fn) {
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const std::string key = key_of(it->first, context);
      if (std::find_if(known.begin(), known.end(), [&](const char* k) { return key == k; }) == known.end()) {
        std::string msg = "unknown key '" + key + "' in " + context;
        auto best = std::min_element(known.begin(), known.end(), [&](const char* a, const char* b) {
          return edit_distance(key, a) < edit_distance(key, b);
        });
        if (best != known.end() && edit_distance(key, *best) <= 2)
          msg += " (did you mean '" + std::string(*best) + "'?)";
        fail(it->first.Mark(), msg);
      }
      if (!seen.insert(key).second) fail(it->first.Mark(), "duplicate key '" + key + "' in " + context);
      fn(key, it->first, it->second);
    }
  }

  // Like for_each for maps whose keys are names chosen by the user.
  void for_each_named(const YAML::Node& map, const std::string& context, const EntryFn& fn) {
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const std::string key = key_of(it->first, context);
      if (!seen.insert(key).second) fail(it->first.Mark(), "duplicate key '" + key + "' in " + context);
      fn(key, it->first, it->second);
    }
  }

  std::string key_of(const YAML::Node& k, const std::string& context) const {
    if (!k.IsScalar()) fail(k.Mark(), "keys in " + context + " must be strings");
    return k.Scalar();
  }

  void require_map(const YAML::Node& k, const YAML::Node& v) const {
    if (!v.IsMap() && !v.IsNull()) fail(k.Mark(), "key '" + k.Scalar() + "' must be a mapping");
  }

  // ${VAR} / ${VAR:-default} / $${ in a scalar value.
  std::string interpolate(const std::string& s, const YAML::Node& k) const {
    std::string out;
    for (size_t i = 0; i < s.size();) {
      if (s.compare(i, 3, "$${") == 0) {
        out += "${";
        i += 3;
        continue;
      }
      if (s.compare(i, 2, "${") != 0) {
        out += s[i++];
        continue;
      }
      const size_t close = s.find('}', i + 2);
      if (close == std::string::npos) fail(k.Mark(), "unterminated '${' in key '" + k.Scalar() + "'");
      const std::string body = s.substr(i + 2, close - i - 2);
      const size_t sep = body.find(":-");
      const std::string name = body.substr(0, sep);
      if (!is_var_name(name))
        fail(k.Mark(), "bad environment variable name '" + name + "' in key '" + k.Scalar() + "'");
      const char* env = std::getenv(name.c_str());
      if (sep != std::string::npos) {
        out += (env && *env) ? std::string(env) : body.substr(sep + 2);
      } else if (!env) {
        fail(k.Mark(), "environment variable '" + name + "' is not set (in key '" + k.Scalar() + "')");
      } else {
        out += env;
      }
      i = close + 1;
    }
    return out;
  }

  std::string string(const YAML::Node& k, const YAML::Node& v) const {
    if (v.IsNull()) return "";
    if (!v.IsScalar()) fail(k.Mark(), "key '" + k.Scalar() + "' must be a string");
    return interpolate(v.Scalar(), k);
  }

  // A setting value: see SettingList in options.h for the typing rules.
  Value value(const YAML::Node& k, const YAML::Node& v) const {
    if (v.IsNull()) return Value();
    if (!v.IsScalar())
      fail(k.Mark(), "key '" + k.Scalar() + "' must be a scalar (integer, real, boolean or text)");
    std::string s = interpolate(v.Scalar(), k);
    if (v.Tag() == "!") return Value::Text(std::move(s));  // quoted
    if (s == "~" || s == "null" || s == "Null" || s == "NULL") return Value();
    if (s == "true" || s == "True" || s == "TRUE") return Value::Boolean(true);
    if (s == "false" || s == "False" || s == "FALSE") return Value::Boolean(false);
    int64_t i = 0;
    if (is_decimal_integer(s)) {
      const char* b = s.data() + (s[0] == '+');
      if (std::from_chars(b, s.data() + s.size(), i).ec == std::errc()) return Value::Integer(i);
    }
    if (is_hex_integer(s)) {
      if (std::from_chars(s.data() + 2, s.data() + s.size(), i, 16).ec == std::errc()) return Value::Integer(i);
      fail(k.Mark(), "key '" + k.Scalar() + "': hexadecimal integer out of range (at most 0x7fffffffffffffff)");
    }
    if (is_decimal_real(s)) {
      errno = 0;
      const double d = std::strtod(s.c_str(), nullptr);
      if (errno == ERANGE && std::isinf(d))
        fail(k.Mark(), "key '" + k.Scalar() + "': number out of range (" + std::to_string(s.size()) +
                           " characters; beyond the largest REAL)");
      return Value::Real(d);
    }
    if (is_infinity(s)) return Value::Real(s[0] == '-' ? -HUGE_VAL : HUGE_VAL);
    if (is_nan(s)) return Value::Real(std::nan(""));
    return Value::Text(std::move(s));
  }

  SettingList settings(const YAML::Node& k, const YAML::Node& v, const std::string& context) {
    require_map(k, v);
    SettingList out;
    if (v.IsNull()) return out;
    for_each_named(v, context, [&](const std::string& key, const YAML::Node& sk, const YAML::Node& sv) {
      out.emplace_back(key, value(sk, sv));
    });
    return out;
  }

  void plugins(const YAML::Node& k, const YAML::Node& v, std::vector<PluginEntry>* out) {
    if (v.IsNull()) return;
    if (!v.IsSequence()) fail(k.Mark(), "key 'plugins' must be a list");
    for (size_t i = 0; i < v.size(); ++i) {
      const YAML::Node item = v[i];
      const std::string context = "plugins[" + std::to_string(i) + "]";
      if (!item.IsMap()) fail(item.Mark(), context + " must be a mapping with a key 'path'");
      PluginEntry e;
      e.origin = where(item.Mark());
      for_each(item, context, {"path", "sha256", "settings"},
               [&](const std::string& key, const YAML::Node& ek, const YAML::Node& ev) {
                 if (key == "path") {
                   e.path = string(ek, ev);
                 } else if (key == "sha256") {
                   std::string h = string(ek, ev);
                   if (h.size() != 64 || !std::all_of(h.begin(), h.end(), is_hex_digit))
                     fail(ek.Mark(), "key 'sha256' must be 64 hexadecimal digits");
                   std::transform(h.begin(), h.end(), h.begin(), ::tolower);
                   e.sha256 = h;
                 } else {
                   e.settings = settings(ek, ev, context + ".settings");
                 }
               });
      if (e.path.empty()) fail(item.Mark(), "missing key 'path' in " + context);
      out->push_back(std::move(e));
    }
  }

  // An integer value >= `min` (a YAML integer, possibly from ${VAR}).
  int64_t integer(const YAML::Node& k, const YAML::Node& v, int64_t min) const {
    Value x = value(k, v);
    if (x.type() != ValueType::kInteger || x.as_int() < min)
      fail(k.Mark(), "key '" + k.Scalar() + "' must be an integer >= " + std::to_string(min));
    return x.as_int();
  }

  // `limits:` of a database: the Limits field names (common/limits.h), each a positive integer.
  void limits(const YAML::Node& k, const YAML::Node& v, const std::string& context, Limits* out) {
    require_map(k, v);
    if (v.IsNull()) return;
    for_each(v, context,
             {"max_sql_length", "max_length", "max_compound_select", "max_join_tables", "max_expr_depth",
              "max_view_depth"},
             [&](const std::string& key, const YAML::Node& lk, const YAML::Node& lv) {
               if (lv.IsNull()) return;  // keeps the default
               *limit_field(*out, key) = integer(lk, lv, 1);
             });
  }

  void databases(const YAML::Node& k, const YAML::Node& v, std::map<std::string, DatabaseConfig>* out) {
    require_map(k, v);
    if (v.IsNull()) return;
    for_each_named(v, "databases", [&](const std::string& name, const YAML::Node& dk, const YAML::Node& dv) {
      require_map(dk, dv);
      DatabaseConfig db;
      const std::string context = "databases." + name;
      if (dv.IsMap()) {
        for_each(dv, context,
                 {"default_module", "module_options", "limits", "statement_timeout_ms", "file_access", "sync", "schema",
                  "migrate"},
                 [&](const std::string& key, const YAML::Node& ok, const YAML::Node& ov) {
                   if (key == "schema") {
                     schema_files(ok, ov, context + ".schema", &db.schema_files);
                     return;
                   }
                   if (key == "migrate") {
                     migrate(ok, ov, context + ".migrate", &db.migrate);
                     return;
                   }
                   if (key == "sync") {
                     db.sync = sync_client(ok, ov, context + ".sync", name);
                     return;
                   }
                   if (key == "default_module") {
                     db.default_module = string(ok, ov);
                     if (db.default_module.empty()) fail(ok.Mark(), "key 'default_module' must not be empty");
                     db.module_origins.try_emplace(db.default_module, where(ok.Mark()));
                     return;
                   }
                   if (key == "statement_timeout_ms") {
                     if (!ov.IsNull()) db.statement_timeout_ms = integer(ok, ov, 0);
                     return;
                   }
                   if (key == "file_access") {
                     static const char* const kAccess[] = {"none", "read", "read_write"};
                     db.file_access = choice(ok, ov, kAccess);
                     return;
                   }
                   if (key == "limits") {
                     limits(ok, ov, context + ".limits", &db.limits);
                     return;
                   }
                   require_map(ok, ov);
                   if (ov.IsNull()) return;
                   for_each_named(ov, context + ".module_options",
                                  [&](const std::string& module, const YAML::Node& mk, const YAML::Node& mv) {
                                    db.module_options[module] =
                                        settings(mk, mv, context + ".module_options." + module);
                                    db.module_origins[module] = where(mk.Mark());
                                  });
                 });
      }
      // Reconciliation errors name the file whose `migrate:` would authorize a change.
      if (db.migrate.file.empty() && !db.schema_files.empty()) db.migrate.file = file_;
      (*out)[name] = std::move(db);
    });
  }

  // A file named by the deployment, relative to the YAML file's directory, read whole
  // (at most 16 MiB).
  std::string read_named_file(const YAML::Node& k, const std::string& name, std::string* resolved) const {
    namespace fs = std::filesystem;
    fs::path p(name);
    if (p.is_relative()) p = fs::path(file_).parent_path() / p;
    *resolved = p.lexically_normal().string();
    std::ifstream in(*resolved, std::ios::binary);
    if (!in) fail(k.Mark(), "cannot open file '" + *resolved + "'");
    constexpr size_t kMax = 16u << 20;
    std::string text(kMax + 1, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<size_t>(in.gcount()));
    if (in.bad()) fail(k.Mark(), "cannot read file '" + *resolved + "'");
    if (text.size() > kMax) fail(k.Mark(), "file '" + *resolved + "' is larger than 16 MiB");
    return text;
  }

  // `schema:` a file name or a list of them.
  void schema_files(const YAML::Node& k, const YAML::Node& v, const std::string& context,
                    std::vector<DeclaredSchemaFile>* out) {
    if (v.IsNull()) return;
    std::vector<YAML::Node> names;
    if (v.IsScalar()) names.push_back(v);
    else if (v.IsSequence()) for (auto it = v.begin(); it != v.end(); ++it) names.push_back(*it);
    else fail(k.Mark(), "key 'schema' must be a file name or a list of file names");
    for (const YAML::Node& n : names) {
      if (!n.IsScalar() || n.Scalar().empty()) fail(n.Mark(), "an entry of " + context + " must be a file name");
      DeclaredSchemaFile f;
      f.text = read_named_file(n, interpolate(n.Scalar(), k), &f.path);
      f.origin = where(n.Mark());
      out->push_back(std::move(f));
    }
  }

  // A table reference of a migrate intent: `name` or `schema.name`, a part holding a dot
  // or other punctuation in SQL double quotes (`'"my.table"'`: YAML's own quotes around).
  std::string table_ref(const YAML::Node& n, const std::string& context) const {
    if (!n.IsScalar() || n.Scalar().empty()) fail(n.Mark(), context + ": a table name (or schema.table) is expected");
    const std::string& s = n.Scalar();
    size_t quotes = std::count(s.begin(), s.end(), '"');
    const std::vector<std::string> parts = table_ref_parts(s);
    if (quotes % 2 != 0 || parts.size() > 2 ||
        std::any_of(parts.begin(), parts.end(), [](const std::string& p) { return p.empty(); }))
      fail(n.Mark(), context + ": '" + s + "' is not a table name (name or schema.name; a name holding a dot " +
                         "in SQL double quotes, the whole in YAML single quotes: '\"my.table\"')");
    return s;
  }

  void migrate(const YAML::Node& k, const YAML::Node& v, const std::string& context, StructuralIntent* out) {
    require_map(k, v);
    out->file = file_;
    out->where = where(k.Mark());
    if (v.IsNull()) return;
    auto names = [&](const YAML::Node& nk, const YAML::Node& nv, const std::string& key,
                     std::vector<StructuralIntent::Named>* list) {
      if (nv.IsNull()) return;
      if (!nv.IsSequence()) fail(nk.Mark(), "key '" + key + "' must be a list of table names");
      for (auto it = nv.begin(); it != nv.end(); ++it)
        list->push_back({table_ref(*it, context + "." + key), {where(it->Mark()), context + "." + key}});
    };
    for_each(v, context, {"rename", "drop", "preserve", "retag", "prepare_constraints"},
             [&](const std::string& key, const YAML::Node& mk, const YAML::Node& mv) {
               if (key == "drop") return names(mk, mv, key, &out->drops);
               if (key == "preserve") return names(mk, mv, key, &out->preserves);
               if (key == "rename" || key == "retag") {
                 require_map(mk, mv);
                 if (mv.IsNull()) return;
                 for_each_named(mv, context + "." + key,
                                [&](const std::string& name, const YAML::Node& ek, const YAML::Node& ev) {
                                  const std::string path = context + "." + key + "." + name;
                                  IntentOrigin origin{where(ek.Mark()), path};
                                  if (key == "rename") {
                                    out->renames.push_back({table_ref(ek, path), table_ref(ev, path), origin});
                                  } else {
                                    if (!ev.IsScalar() || ev.Scalar().empty())
                                      fail(ek.Mark(), path + ": the table's previous quereus.id is expected");
                                    out->retags.push_back({table_ref(ek, path), ev.Scalar(), origin});
                                  }
                                });
                 return;
               }
               if (mv.IsNull()) return;
               if (!mv.IsSequence())
                 fail(mk.Mark(), "key 'prepare_constraints' must be a list of {name, sql} or {name, file} mappings");
               for (auto it = mv.begin(); it != mv.end(); ++it) {
                 const YAML::Node item = *it;
                 const std::string ctx = context + ".prepare_constraints";
                 if (!item.IsMap()) fail(item.Mark(), "an entry of " + ctx + " must be a mapping {name, sql | file}");
                 StructuralIntent::Prepare p;
                 bool has_sql = false;
                 for_each(item, ctx, {"name", "sql", "file"},
                          [&](const std::string& pk, const YAML::Node& pkn, const YAML::Node& pv) {
                            if (pk == "name") {
                              p.name = string(pkn, pv);
                            } else if (has_sql) {
                              fail(pkn.Mark(), "an entry of " + ctx + " takes one of 'sql' and 'file'");
                            } else {
                              has_sql = true;
                              if (pk == "sql") {
                                p.sql = string(pkn, pv);
                              } else {
                                std::string resolved;
                                p.sql = read_named_file(pkn, string(pkn, pv), &resolved);
                              }
                            }
                          });
                 if (p.name.empty()) fail(item.Mark(), "an entry of " + ctx + " needs a 'name'");
                 if (!has_sql) fail(item.Mark(), "entry '" + p.name + "' of " + ctx + " needs 'sql' or 'file'");
                 p.origin = {where(item.Mark()), ctx + "." + p.name};
                 out->prepare_constraints.push_back(std::move(p));
               }
             });
  }

  SyncClientConfig sync_client(const YAML::Node& k, const YAML::Node& v, const std::string& context,
                               const std::string& db_name) {
    if (!v.IsMap()) fail(k.Mark(), "key '" + k.Scalar() + "' must be a mapping (at least `url:`)");
    SyncClientConfig c;
    c.database_id = db_name;
    c.origin = where(k.Mark());
    bool has_url = false;
    for_each(v, context,
             {"url", "database_id", "token", "batch_size", "push_debounce_ms", "poll_ms", "reconnect_max_ms",
              "prune_interval_ms", "read_only", "ca_file"},
             [&](const std::string& key, const YAML::Node& sk, const YAML::Node& sv) {
               if (key == "url") {
                 c.url = string(sk, sv);
                 has_url = true;
                 const size_t scheme = c.url.rfind("wss://", 0) == 0 ? 6 : c.url.rfind("ws://", 0) == 0 ? 5 : 0;
                 if (scheme == 0)
                   fail(sk.Mark(), "key 'url' must start with ws:// or wss:// (got '" + c.url + "')");
                 const std::string authority = c.url.substr(scheme, c.url.find('/', scheme) - scheme);
                 const size_t colon = authority.rfind(':');
                 const bool bracketed = !authority.empty() && authority[0] == '[';
                 const size_t host_end = bracketed ? authority.find(']') : colon;
                 std::string port = bracketed ? (host_end != std::string::npos && host_end + 1 < authority.size() &&
                                                         authority[host_end + 1] == ':'
                                                     ? authority.substr(host_end + 2)
                                                     : "")
                                              : (colon == std::string::npos ? "" : authority.substr(colon + 1));
                 unsigned port_no = 0;
                 if (authority.empty() || host_end == 0 || (bracketed && host_end == std::string::npos) ||
                     (!port.empty() && ([&] {
                                        auto r = std::from_chars(port.data(), port.data() + port.size(), port_no);
                                        return r.ptr != port.data() + port.size() || r.ec != std::errc();
                                      }() || port_no == 0 || port_no > 65535)))
                   fail(sk.Mark(), "key 'url' must be ws[s]://HOST[:PORT][/BASE] (got '" + c.url + "')");
               } else if (key == "database_id") {
                 c.database_id = string(sk, sv);
                 if (!valid_hub_database_id(c.database_id))
                   fail(sk.Mark(), "key 'database_id' must be 1 to 128 characters of A-Z a-z 0-9 _ : . - (got '" +
                                       c.database_id + "')");
               } else if (key == "token") {
                 c.token = string(sk, sv);
               } else if (key == "batch_size") {
                 c.batch_size = integer(sk, sv, 1);
               } else if (key == "push_debounce_ms") {
                 c.push_debounce_ms = integer(sk, sv, 0);
               } else if (key == "poll_ms") {
                 c.poll_ms = integer(sk, sv, 0);
               } else if (key == "reconnect_max_ms") {
                 c.reconnect_max_ms = integer(sk, sv, 1000);
               } else if (key == "prune_interval_ms") {
                 c.prune_interval_ms = integer(sk, sv, 0);
               } else if (key == "read_only") {
                 c.read_only = boolean(sk, sv);
               } else if (key == "ca_file") {
                 c.ca_file = string(sk, sv);
               }
             });
    if (!has_url) fail(k.Mark(), "key '" + k.Scalar() + "' needs `url:` (ws://HOST:PORT/sync)");
    if (!valid_hub_database_id(c.database_id))
      fail(k.Mark(), "the database name '" + c.database_id +
                         "' is not a hub database id (A-Z a-z 0-9 _ : . -); give `database_id:`");
    return c;
  }

  void server(const YAML::Node& k, const YAML::Node& v, HostOptions* out) {
    if (!v.IsMap()) fail(k.Mark(), "key 'server' must be a mapping (at least `data_dir:`)");
    ServerConfig c;
    c.origin = where(k.Mark());
    bool has_dir = false;
    for_each(v, "server",
             {"listen", "base_path", "data_dir", "tokens", "allow_anonymous", "tls_cert_file", "tls_key_file",
              "max_message_bytes", "batch_size", "max_open_databases", "max_databases", "max_queued_messages",
              "prune_interval_ms",
              "module_options"},
             [&](const std::string& key, const YAML::Node& sk, const YAML::Node& sv) {
               if (key == "listen") {
                 c.listen = string(sk, sv);
                 const size_t colon = c.listen.rfind(':');
                 unsigned port = 0;
                 const char* first = colon == std::string::npos ? nullptr : c.listen.data() + colon + 1;
                 const char* last = c.listen.data() + c.listen.size();
                 if (colon == std::string::npos || colon == 0 || first == last ||
                     [&] {
                       auto r = std::from_chars(first, last, port);
                       return r.ptr != last || r.ec != std::errc();
                     }() || port > 65535)
                   fail(sk.Mark(), "key 'listen' must be HOST:PORT with a port from 0 to 65535 (got '" + c.listen + "')");
               } else if (key == "base_path") {
                 c.base_path = string(sk, sv);
                 if (c.base_path.empty() || c.base_path[0] != '/' || c.base_path.find_first_of("?# ") != std::string::npos)
                   fail(sk.Mark(), "key 'base_path' must be a path starting with '/' (got '" + c.base_path + "')");
                 while (c.base_path.size() > 1 && c.base_path.back() == '/') c.base_path.pop_back();
               } else if (key == "data_dir") {
                 c.data_dir = string(sk, sv);
                 has_dir = !c.data_dir.empty();
               } else if (key == "tokens") {
                 if (!sv.IsSequence()) fail(sk.Mark(), "key 'tokens' must be a list of strings or {token, sites} mappings");
                 for (const YAML::Node& t : sv) {
                   ServerToken entry;
                   if (t.IsMap()) {
                     for_each(t, "server.tokens[]", {"token", "sites"},
                              [&](const std::string& tk, const YAML::Node& tkn, const YAML::Node& tv) {
                                if (tk == "token") {
                                  entry.token = string(tkn, tv);
                                  return;
                                }
                                if (!tv.IsSequence()) fail(tkn.Mark(), "key 'sites' must be a list of site ids");
                                for (const YAML::Node& site : tv) {
                                  std::string id = string(tkn, site);
                                  if (id.size() != 22 || !std::all_of(id.begin(), id.end(), [](char ch) {
                                        return std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_';
                                      }))
                                    fail(site.Mark(), "'" + id + "' is not a site id (22 characters of base64url)");
                                  entry.sites.push_back(std::move(id));
                                }
                              });
                   } else {
                     entry.token = string(sk, t);
                   }
                   if (entry.token.size() < 8) fail(t.Mark(), "a token in 'tokens' must be at least 8 characters");
                   c.tokens.push_back(std::move(entry));
                 }
               } else if (key == "allow_anonymous") {
                 c.allow_anonymous = boolean(sk, sv);
               } else if (key == "tls_cert_file") {
                 c.tls_cert_file = string(sk, sv);
               } else if (key == "tls_key_file") {
                 c.tls_key_file = string(sk, sv);
               } else if (key == "max_message_bytes") {
                 c.max_message_bytes = integer(sk, sv, 1024);
               } else if (key == "batch_size") {
                 c.batch_size = integer(sk, sv, 1);
               } else if (key == "max_open_databases") {
                 c.max_open_databases = integer(sk, sv, 1);
               } else if (key == "max_databases") {
                 c.max_databases = integer(sk, sv, 1);
               } else if (key == "max_queued_messages") {
                 c.max_queued_messages = integer(sk, sv, 1);
               } else if (key == "prune_interval_ms") {
                 c.prune_interval_ms = integer(sk, sv, 0);
               } else if (key == "module_options") {
                 c.module_options = settings(sk, sv, "server.module_options");
                 // A hub relays every peer's facts, schema included: a hub that kept its
                 // schema its own would stop peers' tables and columns from reaching each other.
                 for (const auto& [name, v] : c.module_options)
                   if (name == "replicate_schema" && v.type() == ValueType::kBoolean && !v.as_bool())
                     fail(sv["replicate_schema"].IsDefined() ? sv["replicate_schema"].Mark() : sk.Mark(),
                          "key 'server.module_options.replicate_schema': a hub relays schema changes between "
                          "peers; false would stop them (set it on peers that keep their schema their own)");
               }
             });
    if (!has_dir) fail(k.Mark(), "key 'server' needs `data_dir:` (where the hub keeps its databases)");
    if (c.tokens.empty() && !c.allow_anonymous)
      fail(k.Mark(), "key 'server' needs `tokens:` (bearer tokens peers present), or `allow_anonymous: true` "
                     "for development");
    if (c.tls_cert_file.empty() != c.tls_key_file.empty())
      fail(k.Mark(), "key 'server': TLS needs both `tls_cert_file:` and `tls_key_file:`");
    out->server = std::move(c);
  }

  bool boolean(const YAML::Node& k, const YAML::Node& v) const {
    Value x = value(k, v);
    if (x.type() != ValueType::kBoolean) fail(k.Mark(), "key '" + k.Scalar() + "' must be true or false");
    return x.as_bool();
  }

  void logging(const YAML::Node& k, const YAML::Node& v, LoggingOptions* out) {
    require_map(k, v);
    if (v.IsNull()) return;
    for_each(v, "logging", {"level", "sinks"},
             [&](const std::string& key, const YAML::Node& lk, const YAML::Node& lv) {
               if (key == "level")
                 out->level = static_cast<LogLevel>(choice(lk, lv, kLevelNames));
               else
                 sinks(lk, lv, &out->sinks);
             });
  }

  void sinks(const YAML::Node& k, const YAML::Node& v, std::vector<LogSink>* out) {
    out->clear();
    if (v.IsNull()) return;
    if (!v.IsSequence()) fail(k.Mark(), "key 'sinks' must be a list");
    for (size_t i = 0; i < v.size(); ++i) {
      const YAML::Node item = v[i];
      const std::string context = "logging.sinks[" + std::to_string(i) + "]";
      if (!item.IsMap()) fail(item.Mark(), context + " must be a mapping with a key 'type'");
      LogSink sink;
      bool has_type = false;
      // Where each key other than `type` was given, to refuse one the type does not take.
      std::map<std::string, YAML::Mark> given;
      for_each(item, context, {"type", "path", "max_size", "max_files", "hour", "minute"},
               [&](const std::string& key, const YAML::Node& sk, const YAML::Node& sv) {
                 if (key == "type") {
                   sink.type = static_cast<LogSinkType>(choice(sk, sv, kSinkNames));
                   has_type = true;
                   return;
                 }
                 given[key] = sk.Mark();
                 if (key == "path")
                   sink.path = string(sk, sv);
                 else if (key == "max_size")
                   sink.max_size = integer(sk, sv, 1);
                 else if (key == "max_files")
                   sink.max_files = integer(sk, sv, 0);
                 else if (key == "hour")
                   sink.rotation_hour = integer(sk, sv, 0);
                 else
                   sink.rotation_minute = integer(sk, sv, 0);
               });
      if (!has_type) fail(item.Mark(), "missing key 'type' in " + context);
      const std::string type_name = kSinkNames[static_cast<int>(sink.type)];
      const bool to_file = sink.type == LogSinkType::kFile || sink.type == LogSinkType::kRotatingFile ||
                           sink.type == LogSinkType::kDailyFile;
      if (to_file && sink.path.empty())
        fail(item.Mark(), "missing key 'path' in " + context + " (required for type " + type_name + ")");
      // The keys each type takes.
      auto takes = [&](const std::string& key) {
        if (key == "path") return to_file;
        if (key == "max_size") return sink.type == LogSinkType::kRotatingFile;
        if (key == "max_files") return sink.type == LogSinkType::kRotatingFile || sink.type == LogSinkType::kDailyFile;
        return sink.type == LogSinkType::kDailyFile;  // hour, minute
      };
      for (const auto& [key, mark] : given) {
        if (takes(key)) continue;
        if (key == "path") fail(mark, "key 'path' is only allowed for the file types in " + context);
        fail(mark, "key '" + key + "' is not allowed for type " + type_name + " in " + context);
      }
      if (sink.rotation_hour > 23 || sink.rotation_minute > 59)
        fail(item.Mark(), "keys 'hour' and 'minute' must make a time of day (0-23, 0-59) in " + context);
      if (sink.max_files < 0) sink.max_files = sink.type == LogSinkType::kRotatingFile ? 5 : 0;
      out->push_back(std::move(sink));
    }
  }

  // The index of v's text in `names`, or an error listing them.
  template <size_t N>
  int choice(const YAML::Node& k, const YAML::Node& v, const char* const (&names)[N]) const {
    const std::string s = string(k, v);
    for (size_t i = 0; i < N; ++i)
      if (s == names[i]) return static_cast<int>(i);
    std::string list;
    for (size_t i = 0; i < N; ++i) list += (i ? ", " : "") + std::string(names[i]);
    fail(k.Mark(), "key '" + k.Scalar() + "' must be one of " + list + " (got '" + s + "')");
  }

  std::string file_;
};

}  // namespace

bool valid_hub_database_id(std::string_view id) {
  if (id.empty() || id.size() > 128 || id == "." || id == "..") return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':' || c == '.' || c == '-';
  });
}

const char* log_level_name(LogLevel level) { return kLevelNames[static_cast<int>(level)]; }
const char* log_sink_type_name(LogSinkType type) { return kSinkNames[static_cast<int>(type)]; }

Status parse_config(std::string_view yaml_text, const std::string& display_name, HostOptions* out) {
  *out = HostOptions{};
  if (yaml_text.size() > kMaxConfigBytes)
    return Status(StatusCode::kConfig, display_name + ": the file is larger than " + std::to_string(kMaxConfigBytes) +
                                           " bytes; refusing it");
  try {
    Parser(display_name).parse(YAML::Load(std::string(yaml_text)), out);
  } catch (const ConfigError& e) {
    return Status(StatusCode::kConfig, e.message);
  } catch (const YAML::Exception& e) {
    std::string where = display_name;
    if (e.mark.line >= 0) where += ":" + std::to_string(e.mark.line + 1);
    return Status(StatusCode::kConfig, where + ": YAML syntax error: " + e.msg);
  }
  out->databases.try_emplace("main");
  return Status::Ok();
}

Status load_config(const std::string& path, HostOptions* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(StatusCode::kConfig, path + ": cannot open file");
  // Read at most one byte past the limit: a huge (or endless, /dev/zero) file is refused
  // without being read whole.
  std::string text(kMaxConfigBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (in.bad()) return Status(StatusCode::kConfig, path + ": cannot read file");
  Status s = parse_config(text, path, out);
  if (!s.ok()) return s;
  namespace fs = std::filesystem;
  if (!out->plugin_dir.empty() && fs::path(out->plugin_dir).is_relative())
    out->plugin_dir = (fs::path(path).parent_path() / out->plugin_dir).lexically_normal().string();
  return s;
}

}  // namespace quereus
