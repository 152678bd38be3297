// The pragma table (see pragmas.h).
#include "main/pragmas.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>

#include "common/strings.h"
#include "main/database_impl.h"
#include "optimizer/optimizer.h"

namespace quereus {

namespace {

std::string lower_text(const Value& v) { return to_lower(v.to_text()); }

bool truthy_text(const Value& v) {
  std::string t = lower_text(v);
  return t == "1" || t == "true" || t == "on" || t == "yes";
}

// A comma-separated list, items trimmed, empty ones dropped.
std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t comma = list.find(',', start);
    std::string item = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

Status set_optimizer_disabled_passes(DatabaseImpl& db, const Value& v) {
  // '' (or NULL) enables every pass again.
  std::set<std::string> disabled;
  for (const std::string& item : split_list(v.is_null() ? std::string() : lower_text(v))) {
    const auto& known = Optimizer::pass_names();
    if (std::find(known.begin(), known.end(), item) == known.end())
      return Status(StatusCode::kError, "Unknown optimizer pass '" + item + "' (passes: " + join(known, ", ") + ")");
    disabled.insert(item);
  }
  db.options().optimizer.disabled = std::move(disabled);
  db.bump_schema_version();  // prepared statements re-plan under the new passes
  return Status::Ok();
}

// A switch the engine accepts and reads back without acting on it (EngineOptions).
Value read_switch(bool on) { return Value::Boolean(on); }

// default_vtab_args: only the empty set of arguments (the memory module takes none).
Status set_default_vtab_args(DatabaseImpl&, const Value& v) {
  std::string t = v.is_null() ? std::string() : v.to_text();
  t.erase(std::remove_if(t.begin(), t.end(), [](unsigned char c) { return std::isspace(c); }), t.end());
  if (t.empty() || t == "{}" || t == "[]" || iequals(t, "null")) return Status::Ok();
  return Status(StatusCode::kError,
                "default_vtab_args other than an empty object is not supported (got " + v.to_text() + ")");
}

Status set_schema_path(DatabaseImpl& db, const Value& v) {
  std::vector<std::string> path;
  for (std::string item : split_list(lower_text(v))) {
    if (item.size() >= 2 && item.front() == '"' && item.back() == '"') item = item.substr(1, item.size() - 2);
    if (!item.empty() && std::find(path.begin(), path.end(), item) == path.end()) path.push_back(item);
  }
  if (path.empty()) path.push_back("main");
  db.options().schema_path = std::move(path);
  db.bump_schema_version();  // prepared statements re-resolve their names
  return Status::Ok();
}

const std::vector<Pragma> kPragmas = {
    {"default_vtab_module", nullptr, [](DatabaseImpl& db) { return Value::Text(db.options().default_vtab_module); },
     [](DatabaseImpl& db, const Value& v) {
       if (!db.registry().find_module(v.to_text()))
         return Status(StatusCode::kError, "No virtual table module named '" + v.to_text() + "'");
       db.options().default_vtab_module = v.to_text();
       return Status::Ok();
     }},
    {"default_vtab_args", nullptr, [](DatabaseImpl&) { return Value::Text("{}"); }, set_default_vtab_args},
    {"default_column_nullability", "column_nullability_default,nullable_default",
     [](DatabaseImpl& db) { return Value::Text(db.options().default_nullable ? "nullable" : "not_null"); },
     [](DatabaseImpl& db, const Value& v) {
       std::string t = lower_text(v);
       if (t != "nullable" && t != "not_null")
         return Status(StatusCode::kError, "default_column_nullability must be 'nullable' or 'not_null'");
       db.options().default_nullable = t == "nullable";
       return Status::Ok();
     }},
    {"ddl_transaction_policy", nullptr,
     [](DatabaseImpl& db) { return Value::Text(db.options().ddl_strict ? "strict" : "permissive"); },
     [](DatabaseImpl& db, const Value& v) {
       std::string t = lower_text(v);
       if (t != "permissive" && t != "strict")
         return Status(StatusCode::kError, "ddl_transaction_policy must be 'permissive' or 'strict'");
       db.options().ddl_strict = t == "strict";
       return Status::Ok();
     }},
    {"foreign_keys", "fk_enforcement", [](DatabaseImpl& db) { return Value::Boolean(db.options().foreign_keys); },
     [](DatabaseImpl& db, const Value& v) {
       const bool on = truthy_text(v);
       // Writes through lenses plan their logical foreign keys by it (rewrite/view_writes.cc).
       if (on != db.options().foreign_keys) db.bump_schema_version();
       db.options().foreign_keys = on;
       return Status::Ok();
     }},
    {"default_collation", nullptr, [](DatabaseImpl& db) { return Value::Text(db.options().default_collation); },
     [](DatabaseImpl& db, const Value& v) {
       if (!db.registry().find_collation(v.to_text()))
         return Status(StatusCode::kError, "Unknown collation: " + v.to_text());
       db.options().default_collation = v.to_text();
       return Status::Ok();
     }},
    {"nondeterministic_schema", "allow_nondeterministic_schema_expressions",
     [](DatabaseImpl& db) { return Value::Boolean(db.options().nondeterministic_schema); },
     [](DatabaseImpl& db, const Value& v) {
       db.options().nondeterministic_schema = truthy_text(v);
       db.bump_schema_version();  // DML plans re-check the defaults they fire
       return Status::Ok();
     }},
    {"optimizer_disabled_passes", nullptr,
     [](DatabaseImpl& db) {
       return Value::Text(join({db.options().optimizer.disabled.begin(), db.options().optimizer.disabled.end()}, ", "));
     },
     set_optimizer_disabled_passes},
    {"module_pushdown", nullptr, [](DatabaseImpl& db) { return Value::Boolean(db.options().optimizer.module_pushdown); },
     [](DatabaseImpl& db, const Value& v) {
       // False: the conformance suite's reference mode (OptimizerOptions::module_pushdown).
       std::string t = lower_text(v);
       db.options().optimizer.module_pushdown = !(t == "0" || t == "false" || t == "off" || t == "no");
       db.bump_schema_version();  // prepared statements re-plan
       return Status::Ok();
     }},
    {"schema_path", "search_path", [](DatabaseImpl& db) { return Value::Text(join(db.options().schema_path, ",")); },
     set_schema_path},
    // SQLite's journal and sync settings are accepted and have no effect: storage and
    // durability belong to the modules (sql-txn.md 9.4).
    {"journal_mode", nullptr, [](DatabaseImpl&) { return Value::Text("memory"); },
     [](DatabaseImpl&, const Value&) { return Status::Ok(); }},
    {"synchronous", nullptr, [](DatabaseImpl&) { return Value::Text("off"); },
     [](DatabaseImpl&, const Value&) { return Status::Ok(); }},
    {"runtime_stats", "runtime_metrics", [](DatabaseImpl& db) { return read_switch(db.options().runtime_stats); },
     [](DatabaseImpl& db, const Value& v) {
       db.options().runtime_stats = truthy_text(v);
       return Status::Ok();
     }},
    {"validate_plan", "plan_validation", [](DatabaseImpl& db) { return read_switch(db.options().validate_plan); },
     [](DatabaseImpl& db, const Value& v) {
       db.options().validate_plan = truthy_text(v);
       return Status::Ok();
     }},
    {"trace_plan_stack", nullptr, [](DatabaseImpl& db) { return read_switch(db.options().trace_plan_stack); },
     [](DatabaseImpl& db, const Value& v) {
       db.options().trace_plan_stack = truthy_text(v);
       return Status::Ok();
     }},
    {"runtime_fuse_scalars", nullptr, [](DatabaseImpl& db) { return read_switch(db.options().runtime_fuse_scalars); },
     [](DatabaseImpl& db, const Value& v) {
       db.options().runtime_fuse_scalars = truthy_text(v);
       return Status::Ok();
     }},
    {"statement_timeout_ms", nullptr, [](DatabaseImpl& db) { return Value::Integer(db.options().statement_timeout_ms); },
     [](DatabaseImpl& db, const Value& v) {
       if (v.type() != ValueType::kInteger || v.as_int() < 0)
         return Status(StatusCode::kError, "statement_timeout_ms must be an integer >= 0 (0 = no timeout)");
       db.options().statement_timeout_ms = v.as_int();
       db.options().optimizer.timeout_ms = v.as_int();
       return Status::Ok();
     }},
    {"materialized_view_rebuild_row_threshold", nullptr,
     [](DatabaseImpl& db) { return Value::Integer(db.options().materialized_view_rebuild_row_threshold); },
     [](DatabaseImpl& db, const Value& v) {
       if (v.type() != ValueType::kInteger || v.as_int() < 0)
         return Status(StatusCode::kError,
                       "materialized_view_rebuild_row_threshold must be an integer >= 0 (0 = no limit)");
       db.options().materialized_view_rebuild_row_threshold = v.as_int();
       return Status::Ok();
     }},
};

// Sets the limit `name` from a pragma's `value`, which must be an integer >= 1 (an
// integral text or real is accepted). Returns ok, or an ERROR status naming the limit.
Status set_limit(Limits& limits, std::string_view name, const Value& value) {
  int64_t* field = limit_field(limits, name);
  if (!field) return Status(StatusCode::kError, "Unknown limit: " + std::string(name));
  std::optional<int64_t> n;
  if (value.type() == ValueType::kInteger) {
    n = value.as_int();
  } else if (value.type() == ValueType::kReal && std::isfinite(value.as_real()) &&
             value.as_real() == std::floor(value.as_real()) && std::fabs(value.as_real()) < 9e18) {
    n = static_cast<int64_t>(value.as_real());
  } else if (value.type() == ValueType::kText && !value.str().empty()) {
    char* end = nullptr;
    long long x = std::strtoll(value.str().c_str(), &end, 10);
    if (end == value.str().c_str() + value.str().size()) n = x;
  }
  if (!n || *n < 1)
    return Status(StatusCode::kError, std::string(name) + " must be a positive integer (got " + value.to_text() + ")");
  *field = *n;
  return Status::Ok();
}

}  // namespace

const std::vector<Pragma>& pragmas() { return kPragmas; }

const Pragma* find_pragma(std::string_view name) {
  for (const Pragma& p : kPragmas) {
    if (iequals(name, p.name)) return &p;
    if (p.alias)
      for (const std::string& alias : split_list(p.alias))
        if (iequals(name, alias)) return &p;
  }
  return nullptr;
}

Value read_pragma(DatabaseImpl& db, std::string_view name) {
  if (const Pragma* p = find_pragma(name)) return p->get(db);
  if (const int64_t* limit = limit_field(db.options().limits, to_lower(name))) return Value::Integer(*limit);
  throw Error(StatusCode::kError, "Unknown pragma: " + std::string(name));
}

Status write_pragma(DatabaseImpl& db, std::string_view name, const Value& value) {
  if (const Pragma* p = find_pragma(name)) return p->set(db, value);
  std::string lower = to_lower(name);
  if (limit_field(db.options().limits, lower)) {
    Status st = set_limit(db.options().limits, lower, value);  // read at the next prepare / statement
    if (st.ok() && lower == "max_length") {
      db.options().optimizer.max_length = db.options().limits.max_length;
      db.bump_schema_version();  // plans re-fold their constants under the new bound
    }
    return st;
  }
  return Status(StatusCode::kError, "Unknown pragma: " + std::string(name));
}

}  // namespace quereus
