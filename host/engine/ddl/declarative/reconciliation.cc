// Open-time structural reconciliation, the policy half (see reconciliation.h).
#include "ddl/declarative/reconciliation.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <map>

#include "common/status.h"
#include "common/strings.h"

namespace quereus {

namespace {

using Tables = std::map<std::string, TableIdentity>;  // by qualified lower-case name

Tables by_name(const std::vector<TableIdentity>& list) {
  Tables out;
  for (const TableIdentity& t : list) out.emplace(t.qualified(), t);
  return out;
}

// A name part as YAML writes it: bare when it is a plain identifier, else in SQL double
// quotes (a dot inside it would otherwise split it).
std::string yaml_part(const std::string& n) {
  bool plain = !n.empty() && !std::isdigit(static_cast<unsigned char>(n[0]));
  for (char c : n) plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (plain) return n;
  std::string out = "\"";
  for (char c : n) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// How a table is written in YAML: bare in main, qualified elsewhere; a reference holding
// SQL quotes is itself a single-quoted YAML scalar (YAML would take the double quotes).
std::string yaml_name(const std::string& schema, const std::string& name) {
  std::string ref = (schema == "main" ? std::string() : yaml_part(schema) + ".") + yaml_part(name);
  if (ref.find('"') == std::string::npos) return ref;
  std::string out = "'";
  for (char c : ref) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}
// The internal key "schema.name" (the schema holds no dot): its two parts.
std::pair<std::string, std::string> split_key(const std::string& key) {
  size_t dot = key.find('.');
  return {key.substr(0, dot), key.substr(dot + 1)};
}
std::string yaml_name(const TableIdentity& t) { return yaml_name(t.schema, t.name); }
std::string yaml_name(const std::string& qualified) {
  auto [schema, name] = split_key(qualified);
  return yaml_name(schema, name);
}

std::string quoted_id(const std::string& id) { return id.empty() ? "none" : "'" + id + "'"; }

class Planner {
 public:
  explicit Planner(const ReconcileInputs& in)
      : in_(in),
        live_(by_name(in.live)),
        dormant_(by_name(in.dormant)),
        declared_(by_name(in.declared)),
        intent_(in.intent ? *in.intent : empty_intent_) {
    if (in.history) done_before_.insert(in.history->applied.begin(), in.history->applied.end());
  }

  ReconcilePlan run() {
    check_declared_identities();
    check_intent_shapes();
    for (const auto& r : intent_.renames) rename(r);
    for (const auto& d : intent_.drops) drop(d);
    for (const auto& p : intent_.preserves) preserve(p);
    for (const auto& r : intent_.retags) retag(r);
    for (const auto& [name, t] : live_) prior_table(t);
    for (const auto& [name, t] : declared_) declared_table(t);
    if (!undecided_.empty()) refuse_undecided();
    prepare_steps();
    return std::move(plan_);
  }

 private:
  [[noreturn]] void config_error(const IntentOrigin& o, const std::string& message) const {
    std::string at = o.where.empty() ? std::string() : o.where + ": ";
    throw Error(StatusCode::kConfig, at + o.key + ": " + message);
  }
  std::string migrate_path() const { return "databases." + in_.database + ".migrate"; }
  std::string file_note() const { return intent_.file.empty() ? std::string() : " in " + intent_.file; }

  static std::string qualify(const std::string& ref, const std::string& default_schema = "main") {
    if (table_ref_parts(ref).size() == 1) return default_schema + "." + split_table_ref(ref).second;
    auto [s, t] = split_table_ref(ref);
    return s + "." + t;
  }

  // Two declared tables may not claim one identity.
  void check_declared_identities() {
    std::map<std::string, std::string> seen;
    for (const auto& [name, t] : declared_) {
      if (t.id.empty()) continue;
      auto [it, fresh] = seen.emplace(t.id, name);
      if (!fresh)
        throw Error(StatusCode::kSchema, "Tables '" + it->second + "' and '" + name +
                                             "' are both declared with quereus.id '" + t.id +
                                             "': a persisted identity belongs to one table");
    }
  }

  // One operation per prior table; one prior table per current table; one retag per table.
  void check_intent_shapes() {
    std::map<std::string, const IntentOrigin*> claimed;
    auto claim = [&](const std::string& table, const IntentOrigin& o) {
      auto [it, fresh] = claimed.emplace(table, &o);
      if (!fresh)
        config_error(o, "table '" + yaml_name(table) + "' already has an operation (" + it->second->key +
                            (it->second->where.empty() ? "" : " at " + it->second->where) +
                            "): a prior table takes exactly one of rename, drop and preserve");
    };
    std::map<std::string, const StructuralIntent::Rename*> onto;
    for (const auto& r : intent_.renames) {
      const std::string from = qualify(r.from), to = qualify(r.to, split_table_ref(r.from).first);
      claim(from, r.origin);
      if (split_key(from).first != split_key(to).first)
        config_error(r.origin, "a rename stays in its schema ('" + from + "' → '" + to + "')");
      auto [it, fresh] = onto.emplace(to, &r);
      if (!fresh)
        config_error(r.origin, "two prior tables ('" + yaml_name(qualify(it->second->from)) + "' and '" +
                                   yaml_name(from) + "') are renamed onto one table '" + yaml_name(to) +
                                   "': one current table continues at most one prior table");
    }
    for (const auto& d : intent_.drops) claim(qualify(d.table), d.origin);
    for (const auto& p : intent_.preserves) claim(qualify(p.table), p.origin);
    std::map<std::string, const IntentOrigin*> retagged;
    for (const auto& r : intent_.retags) {
      auto [it, fresh] = retagged.emplace(qualify(r.table), &r.origin);
      if (!fresh) config_error(r.origin, "table '" + r.table + "' is retagged twice");
    }
  }

  void rename(const StructuralIntent::Rename& r) {
    const std::string from = qualify(r.from), to = qualify(r.to, split_table_ref(r.from).first);
    const std::string canon = "rename " + from + " " + to;
    if (!live_.count(from)) {
      if (done_before_.count(canon) && !declared_.count(from) && declared_.count(to)) return;  // done earlier
      if (dormant_.count(from))
        config_error(r.origin, "table '" + yaml_name(from) +
                                   "' is preserved (dormant): declare it again under its own name to reactivate "
                                   "it first");
      config_error(r.origin, "there is no stored table '" + yaml_name(from) +
                                 "': the rename refers to a table that is not part of this open's structural diff");
    }
    if (declared_.count(from))
      config_error(r.origin, "table '" + yaml_name(from) +
                                 "' is still declared: a rename continues a table the declaration no longer names");
    if (!declared_.count(to))
      config_error(r.origin, "the rename's target '" + yaml_name(to) + "' is not declared");
    if (live_.count(to))
      config_error(r.origin, "'" + yaml_name(to) + "' is already a stored table: a rename cannot hand one table's rows "
                                                   "to another that has its own");
    if (dormant_.count(to))
      config_error(r.origin, "'" + yaml_name(to) + "' is the name of a preserved table");
    const TableIdentity& old = live_.at(from);
    plan_.renames.push_back({old, split_key(to).second});
    continued_[to] = old;
    handled_.insert(from);
    plan_.applied.push_back(canon);
  }

  void drop(const StructuralIntent::Named& d) {
    const std::string t = qualify(d.table), canon = "drop " + t;
    if (declared_.count(t))
      config_error(d.origin, "table '" + yaml_name(t) + "' is declared: drop only removes a table the declaration "
                                                        "no longer names");
    if (live_.count(t)) {
      plan_.drops.push_back(live_.at(t));
    } else if (dormant_.count(t)) {
      plan_.reactivations.push_back(dormant_.at(t));  // connected again, then dropped
      plan_.drops.push_back(dormant_.at(t));
    } else if (done_before_.count(canon)) {
      return;
    } else {
      config_error(d.origin, "there is no stored table '" + yaml_name(t) +
                                 "': the drop refers to a table that is not part of this open's structural diff");
    }
    handled_.insert(t);
    plan_.applied.push_back(canon);
  }

  void preserve(const StructuralIntent::Named& p) {
    const std::string t = qualify(p.table), canon = "preserve " + t;
    if (declared_.count(t))
      config_error(p.origin, "table '" + yaml_name(t) +
                                 "' is declared: preserve keeps a table the declaration no longer names (declaring "
                                 "a preserved table reactivates it)");
    if (live_.count(t) && dormant_.count(t))
      config_error(p.origin, "table '" + yaml_name(t) + "' is already preserved: a second table of that name cannot "
                                                        "be preserved over it");
    if (live_.count(t)) {
      plan_.preserves.push_back(live_.at(t));
      plan_.applied.push_back(canon);
    } else if (!dormant_.count(t) && !done_before_.count(canon)) {
      config_error(p.origin, "there is no stored table '" + yaml_name(t) +
                                 "': the preserve refers to a table that is not part of this open's structural diff");
    }
    handled_.insert(t);
  }

  // The stored table a declared one continues: itself, or a renamed prior table.
  const TableIdentity* stored_for(const std::string& declared) const {
    if (auto it = live_.find(declared); it != live_.end()) return &it->second;
    if (auto it = continued_.find(declared); it != continued_.end()) return &it->second;
    if (auto it = dormant_.find(declared); it != dormant_.end()) return &it->second;
    return nullptr;
  }

  void retag(const StructuralIntent::Retag& r) {
    const std::string t = qualify(r.table), canon = "retag " + t + " " + r.previous_id;
    auto d = declared_.find(t);
    if (d == declared_.end())
      config_error(r.origin, "table '" + yaml_name(t) + "' is not declared: retag names a table by its declared name");
    const TableIdentity* stored = stored_for(t);
    if (!stored) {
      if (done_before_.count(canon)) return;
      config_error(r.origin, "table '" + yaml_name(t) + "' has no stored rows yet: there is no identity to change");
    }
    if (stored->id == d->second.id) {
      if (done_before_.count(canon)) return;
      config_error(r.origin, "the retag authorizes nothing: table '" + yaml_name(t) + "' is stored with identity " +
                                 quoted_id(stored->id) + ", which its declaration keeps");
    }
    if (stored->id != r.previous_id)
      config_error(r.origin, "the retag gives the previous identity '" + r.previous_id + "', but table '" +
                                 yaml_name(stored->qualified()) + "' is stored with identity " + quoted_id(stored->id));
    retag_ok_.insert(t);
    plan_.applied.push_back(canon);
  }

  // A declared table's identity against the one stored: equal, a first tagging
  // (automatic), or a change that needs its retag.
  void check_identity(const std::string& declared_name, const TableIdentity& stored) {
    const TableIdentity& decl = declared_.at(declared_name);
    if (decl.id == stored.id) return;
    TableIdentity now = stored;
    now.name = decl.name;
    if (stored.id.empty() || retag_ok_.count(declared_name)) {
      plan_.retags.push_back({now, decl.id});
      return;
    }
    undecided_.push_back("Table '" + declared_name + "' is declared with quereus.id " + quoted_id(decl.id) +
                         " but is stored with identity " + quoted_id(stored.id) +
                         "; a persisted identity changes only by intent. To authorize it:\n      retag: {" +
                         yaml_name(declared_name) + ": " + stored.id + "}\n  (or declare it with quereus.id '" +
                         stored.id + "' again)");
  }

  void prior_table(const TableIdentity& t) {
    const std::string name = t.qualified();
    if (declared_.count(name)) {
      check_identity(name, t);
      return;
    }
    if (handled_.count(name)) return;
    // Which declared tables could continue it (new in this declaration).
    std::vector<std::string> candidates;
    for (const auto& [dn, d] : declared_)
      if (d.schema == t.schema && !live_.count(dn) && !continued_.count(dn) && !dormant_.count(dn))
        candidates.push_back(yaml_name(dn));
    std::string target = "NEW_NAME";
    for (const auto& [dn, d] : declared_)
      if (!t.id.empty() && d.id == t.id) target = yaml_name(dn);
    if (target == "NEW_NAME" && candidates.size() == 1) target = candidates[0];
    std::vector<std::pair<std::string, std::string>> choices = {
        {"drop: [" + yaml_name(t) + "]", "delete the table and its rows"},
        {"preserve: [" + yaml_name(t) + "]", "keep it and its rows, dormant and hidden, until it is declared again"}};
    if (!candidates.empty())
      choices.push_back({"rename: {" + yaml_name(t) + ": " + target + "}",
                         "a declared table continues it (new here: " + join(candidates) + ")"});
    size_t width = 0;
    for (const auto& c : choices) width = std::max(width, c.first.size());
    std::string msg = "Table '" + name + "' is stored but no longer declared" +
                      (t.id.empty() ? std::string() : " (identity '" + t.id + "')") + ". Authorize one of:";
    for (const auto& [line, why] : choices) msg += "\n      " + line + std::string(width - line.size() + 2, ' ') + "# " + why;
    undecided_.push_back(msg);
  }

  void declared_table(const TableIdentity& t) {
    const std::string name = t.qualified();
    // A preserved table's identity stays its own: no other declared table takes it
    // (preserved earlier, or by this open).
    if (!t.id.empty()) {
      auto refuse_reuse = [&](const TableIdentity& d) {
        if (d.id == t.id && d.qualified() != name)
          throw Error(StatusCode::kSchema, "Table '" + name + "' is declared with quereus.id '" + t.id +
                                               "', the identity of preserved table '" + d.qualified() +
                                               "'. Declare '" + yaml_name(d) +
                                               "' again under its own name to reactivate it, or give '" + name +
                                               "' another quereus.id");
      };
      for (const auto& [dn, d] : dormant_)
        if (!handled_.count(dn)) refuse_reuse(d);
      for (const TableIdentity& d : plan_.preserves) refuse_reuse(d);
    }
    if (auto c = continued_.find(name); c != continued_.end()) {
      check_identity(name, c->second);
      return;
    }
    if (live_.count(name)) return;  // checked as a prior table
    if (auto d = dormant_.find(name); d != dormant_.end()) {
      if (!d->second.id.empty() && d->second.id != t.id && !retag_ok_.count(name))
        throw Error(StatusCode::kSchema, "Table '" + name + "' reuses the name of a preserved table stored with "
                                         "identity '" + d->second.id + "', but is declared with quereus.id " +
                                         quoted_id(t.id) + ". Declare it with quereus.id '" + d->second.id +
                                         "' to reactivate the preserved table, authorize the change with retag: {" +
                                         yaml_name(name) + ": " + d->second.id + "}, or give it another name");
      plan_.reactivations.push_back(d->second);
      if (d->second.id != t.id) plan_.retags.push_back({d->second, t.id});
      return;
    }
    if (t.id.empty()) return;  // a new table
    for (const auto& [ln, l] : live_)
      if (l.id == t.id && !declared_.count(ln))
        undecided_.push_back("Table '" + name + "' is declared with quereus.id '" + t.id +
                             "', the identity of stored table '" + ln +
                             "', which the declaration no longer names: it would take over that table's rows. "
                             "To authorize it:\n      rename: {" + yaml_name(ln) + ": " + yaml_name(name) +
                             "}\n  (or drop/preserve '" + yaml_name(ln) + "' and give '" + yaml_name(name) +
                             "' another quereus.id)");
  }

  void refuse_undecided() {
    std::string msg = "Database '" + in_.database + "' does not open: its declared schema differs from the stored one "
                      "in ways that change row ownership or identity, and " + migrate_path() + file_note() +
                      " does not say what to do (nothing was changed).";
    for (const std::string& u : undecided_) msg += "\n- " + u;
    msg += "\nThe lines above go under " + migrate_path() + " (docs/reconciliation.md).";
    throw Error(StatusCode::kSchema, msg);
  }

  void prepare_steps() {
    std::map<std::string, const IntentOrigin*> seen;
    for (const auto& p : intent_.prepare_constraints) {
      auto [it, fresh] = seen.emplace(p.name, &p.origin);
      if (!fresh) config_error(p.origin, "prepare_constraints step '" + p.name + "' is named twice");
      if (in_.history && in_.history->prepared.count(p.name)) continue;  // ran at an earlier open
      plan_.prepare.push_back(&p);
    }
  }

  static std::string join(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
    return out;
  }

  const ReconcileInputs& in_;
  Tables live_, dormant_, declared_;
  inline static const StructuralIntent empty_intent_{};
  const StructuralIntent& intent_;
  std::set<std::string> done_before_;
  std::set<std::string> handled_;           // prior tables an intent decided
  std::map<std::string, TableIdentity> continued_;  // declared name → the prior table it continues
  std::set<std::string> retag_ok_;          // declared names whose identity change is authorized
  std::vector<std::string> undecided_;
  ReconcilePlan plan_;
};

}  // namespace

std::vector<std::string> table_ref_parts(const std::string& ref) {
  std::vector<std::string> parts(1);
  bool quoted = false;
  for (size_t i = 0; i < ref.size(); ++i) {
    const char c = ref[i];
    if (quoted) {
      if (c != '"') parts.back() += c;
      else if (i + 1 < ref.size() && ref[i + 1] == '"') parts.back() += c, ++i;
      else quoted = false;
    } else if (c == '"') {
      quoted = true;
    } else if (c == '.') {
      parts.emplace_back();
    } else {
      parts.back() += c;
    }
  }
  return parts;
}

std::pair<std::string, std::string> split_table_ref(const std::string& ref) {
  std::vector<std::string> parts = table_ref_parts(ref);
  if (parts.size() == 1) return {"main", to_lower(parts[0])};
  std::string name = parts[1];
  for (size_t i = 2; i < parts.size(); ++i) name += "." + parts[i];  // an unquoted dotted name: the first dot splits
  return {to_lower(parts[0]), to_lower(name)};
}

ReconcilePlan plan_reconciliation(const ReconcileInputs& in) { return Planner(in).run(); }

// ---- the history's stored form: one JSON object

namespace {

nlohmann::json tables_json(const std::vector<TableIdentity>& list) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& t : list) out.push_back({{"schema", t.schema}, {"name", t.name}, {"id", t.id}});
  return out;
}

std::vector<TableIdentity> tables_of(const nlohmann::json& j) {
  std::vector<TableIdentity> out;
  for (const auto& t : j) out.push_back({t.at("schema").get<std::string>(), t.at("name").get<std::string>(),
                                         t.at("id").get<std::string>()});
  return out;
}

constexpr int kHistoryFormat = 1;

}  // namespace

std::string StructuralHistory::encode() const {
  nlohmann::json j;
  j["format"] = kHistoryFormat;
  j["schemas"] = schemas;
  j["active"] = tables_json(active);
  j["dormant"] = tables_json(dormant);
  j["prepared"] = prepared;
  j["applied"] = applied;
  return j.dump();
}

StructuralHistory StructuralHistory::decode(const std::string& text) {
  try {
    nlohmann::json j = nlohmann::json::parse(text);
    const int format = j.at("format").get<int>();
    if (format != kHistoryFormat)
      throw Error(StatusCode::kFormat, "the structural history (catalog entry structure:history) is of format " +
                                           std::to_string(format) + "; this build reads format " +
                                           std::to_string(kHistoryFormat) +
                                           ". Open the database with the build that wrote it, or a newer one");
    StructuralHistory h;
    h.schemas = j.at("schemas").get<std::set<std::string>>();
    h.active = tables_of(j.at("active"));
    h.dormant = tables_of(j.at("dormant"));
    h.prepared = j.at("prepared").get<std::set<std::string>>();
    h.applied = j.at("applied").get<std::vector<std::string>>();
    return h;
  } catch (const nlohmann::json::exception& e) {
    throw Error(StatusCode::kCorrupt, std::string("the structural history does not read: ") + e.what());
  }
}

}  // namespace quereus
