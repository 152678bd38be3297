// DECLARE LENS, APPLY SCHEMA of a logical schema, the advisory governance and the lens
// introspection functions (main/lenses.h).
#include "main/lenses.h"

#include <spdlog/spdlog.h>

#include <set>

#include "catalog/catalog.h"
#include "catalog/registry.h"
#include "common/strings.h"
#include "ddl/declarative/declared_schema.h"
#include "ddl/schema_ddl.h"
#include "ddl/tags.h"
#include "main/database_impl.h"
#include "parser/ast_clone.h"
#include "parser/ast_printer.h"
#include "types/json_value.h"

namespace quereus {

namespace {

class LensActionExec : public Executable {
 public:
  explicit LensActionExec(std::function<void()> fn) : fn_(std::move(fn)) {}
  void start(ExecContext&) override { fn_(); }
  bool next(Row&) override { return false; }

 private:
  std::function<void()> fn_;
};

// ------------------------------------------------------------------ governance

// The advisory codes a table's escalation policy may name (spec/lens.md "Escalation
// policy"): the warnings the prover emits.
const std::set<std::string>& governable_codes() {
  static const std::set<std::string> codes = {
      "lens.no-backing-index",       "lens.no-answering-structure", "lens.partial-override",
      "lens.pk-not-reconstructible", "lens.getput-lossy",           "lens.over-restrictive-basis-key"};
  return codes;
}

// FNV-1a (64-bit) of `facts`, as base64url without padding: the advisory's fingerprint.
std::string fingerprint(const std::string& facts) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : facts) {
    h ^= c;
    h *= 1099511628211ull;
  }
  static const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  for (int i = 0; i < 11; ++i) {
    out.push_back(alphabet[h & 63]);
    h >>= 6;
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> string_tags(const ast::TagList& tags) {
  return tag_entries(tag_set(tags));
}

struct Ack {
  std::string code;       // lens.<code>
  std::string target;     // "" when none
  std::string rationale;  // without the #fp= token
  std::string recorded;   // the recorded fingerprint, "" when none
  std::string constraint; // the constraint it is written on ("" for the table)
  std::vector<std::string> columns;  // that constraint's columns
};

std::vector<Ack> acks_of(const ast::CreateTableStmt& t) {
  std::vector<Ack> out;
  const std::string prefix = "quereus.lens.ack.";
  auto read = [&](const ast::TagList& tags, const std::string& constraint, std::vector<std::string> columns) {
    for (auto& [k, v] : string_tags(tags)) {
      if (k.size() <= prefix.size() || !iequals(k.substr(0, prefix.size()), prefix)) continue;
      Ack a;
      std::string rest = k.substr(prefix.size());
      size_t colon = rest.find(':');
      a.code = "lens." + to_lower(rest.substr(0, colon));
      if (colon != std::string::npos) a.target = rest.substr(colon + 1);
      std::string value = v;
      size_t fp = value.find("#fp=");
      if (fp != std::string::npos) {
        a.recorded = value.substr(fp + 4);
        value = value.substr(0, fp);
      }
      size_t end = value.find_last_not_of(" \t");
      a.rationale = end == std::string::npos ? "" : value.substr(0, end + 1);
      a.constraint = constraint;
      a.columns = columns;
      out.push_back(std::move(a));
    }
  };
  read(t.tags, "", {});
  for (const auto& cd : t.columns)
    for (const auto& cc : cd.constraints)
      if (!cc.tags.empty()) read(cc.tags, cc.name.empty() ? "" : cc.name, {cd.name});
  for (const auto& tc : t.constraints) {
    std::vector<std::string> cols;
    for (const auto& ic : tc.columns) cols.push_back(ic.name);
    read(tc.tags, tc.name, cols);
  }
  return out;
}

bool ack_matches(const Ack& a, const LensAdvisory& adv) {
  if (a.code != adv.code) return false;
  if (!a.constraint.empty() && !iequals(a.constraint, adv.constraint)) {
    // An ack on a constraint governs that constraint's advisories only.
    bool same_columns = !a.columns.empty() && a.columns.size() == 1 && iequals(a.columns[0], adv.column);
    if (!same_columns) return false;
  }
  if (a.target.empty()) return true;
  if (iequals(a.target, adv.column) || iequals(a.target, adv.constraint)) return true;
  for (const std::string& c : a.columns)
    if (iequals(c, a.target) && adv.column.empty()) return true;
  return false;
}

// Applies the table's acknowledgements and escalation policy to its warnings: sets each
// one's status, and turns into errors what the policy escalates.
void govern(const ast::CreateTableStmt& t, std::vector<LensAdvisory>& diags) {
  std::vector<Ack> acks = acks_of(t);
  for (LensAdvisory& d : diags) {
    if (d.error) continue;
    if (d.facts.empty()) d.facts = d.code + "|" + d.table + "|" + d.constraint + "|" + d.column;
    d.fingerprint = fingerprint(d.facts);
    for (const Ack& a : acks) {
      if (!ack_matches(a, d)) continue;
      d.rationale = a.rationale;
      d.recorded = a.recorded;
      if (a.rationale.empty())
        spdlog::warn("lens: the acknowledgement of {} on '{}' has an empty rationale (it still applies)", d.code, d.table);
      if (a.recorded.empty()) d.status = "acknowledged-unconditional";
      else if (a.recorded == d.fingerprint) d.status = "acknowledged";
      else {
        d.status = "re-surfaced";
        d.message += " (previously acknowledged; situation changed)";
      }
      break;
    }
  }
  std::vector<std::string> error_on, require_ack;
  for (auto& [k, v] : string_tags(t.tags)) {
    std::vector<std::string>* list = iequals(k, "quereus.lens.policy.error-on")      ? &error_on
                                     : iequals(k, "quereus.lens.policy.require-ack") ? &require_ack
                                                                                     : nullptr;
    if (!list) continue;
    for (const std::string& code : split_trim(v, ',')) {
      if (!governable_codes().count(to_lower(code))) {
        LensAdvisory e;
        e.table = t.table.name;
        e.code = "lens.unknown-policy-code";
        e.error = true;
        std::string known;
        for (const std::string& c : governable_codes()) known += (known.empty() ? "" : ", ") + c;
        e.message = "tag '" + k + "' of logical table '" + t.table.name + "' names '" + code +
                    "', which is no advisory code (known: " + known + ")";
        diags.push_back(std::move(e));
        continue;
      }
      list->push_back(to_lower(code));
    }
  }
  for (LensAdvisory& d : diags) {
    if (d.error) continue;
    bool hard = std::find(error_on.begin(), error_on.end(), d.code) != error_on.end();
    bool needs_ack = std::find(require_ack.begin(), require_ack.end(), d.code) != require_ack.end() &&
                     (d.status == "active" || d.status == "re-surfaced");
    if (hard || needs_ack) {
      d.error = true;
      d.message += hard ? " (escalated by quereus.lens.policy.error-on)"
                        : " (quereus.lens.policy.require-ack: acknowledge it with a quereus.lens.ack tag)";
    }
  }
}

std::string site_of(const LensAdvisory& d) {
  std::string s = d.table;
  if (!d.column.empty()) s += "." + d.column;
  if (!d.constraint.empty()) s += " [" + d.constraint + "]";
  return s;
}

// ------------------------------------------------------------------ the basis

bool is_logical(DatabaseImpl& db, const std::string& schema) {
  auto& declared = db.declared_schemas().declared;
  auto it = declared.find(schema);
  return it != declared.end() && it->second->logical;
}

std::string infer_basis(DatabaseImpl& db, const std::string& x, const std::vector<const ast::CreateTableStmt*>& tables) {
  std::vector<std::string> candidates;
  for (const std::string& s : db.catalog().schemas()) {
    if (s == "temp" || s == x || is_logical(db, s)) continue;
    bool has = false;
    for (const auto& t : db.catalog().tables())
      if (t->schema.schema_name == s && !t->schema.derivation) has = true;
    for (const auto& v : db.catalog().views())
      if (v->schema_name == s) has = true;
    if (has) candidates.push_back(s);
  }
  if (candidates.size() == 1) return candidates[0];
  std::vector<std::string> backing;
  for (const std::string& s : candidates) {
    bool all = true;
    for (const auto* t : tables) {
      ResolvedRelation rel = db.find_relation(s, t->table.name);
      if (!rel.table && !rel.view) all = false;
    }
    if (all) backing.push_back(s);
  }
  if (backing.size() == 1) return backing[0];
  std::string list;
  for (const std::string& s : candidates) list += (list.empty() ? "" : ", ") + s;
  throw Error(StatusCode::kError,
              "logical schema '" + x + "' has no lens naming its basis, and " +
                  (candidates.empty() ? std::string("no schema holds tables to map it onto")
                                      : "the basis is ambiguous (" + list + ")") +
                  ": declare lens for " + x + " over <basis schema> { }");
}

// The items of a logical declaration: its tables; anything physical is refused.
std::vector<const ast::CreateTableStmt*> logical_tables(const ast::DeclareSchemaStmt& decl) {
  const std::string x = decl.name;
  std::vector<const ast::CreateTableStmt*> tables;
  for (const auto& item : decl.items) {
    switch (item->kind) {
      case ast::StmtKind::kCreateTable: {
        auto& t = static_cast<const ast::CreateTableStmt&>(*item);
        if (!t.module_name.empty())
          throw Error(StatusCode::kError,
                      "table '" + t.table.name + "' of logical schema '" + x + "' names module '" + t.module_name +
                          "': a logical table has no storage (map it onto a basis table with a lens)",
                      t.site);
        if (t.maintained)
          throw Error(StatusCode::kError,
                      "maintained table '" + t.table.name + "' is not allowed in logical schema '" + x + "'", t.site);
        if (t.temporary)
          throw Error(StatusCode::kError, "temporary table '" + t.table.name + "' is not allowed in logical schema '" + x + "'",
                      t.site);
        validate_reserved_tags(t.tags, TagSite::kLogicalTable);
        for (const auto& cd : t.columns) {
          validate_reserved_tags(cd.tags, TagSite::kLogicalColumn);
          for (const auto& cc : cd.constraints) validate_reserved_tags(cc.tags, TagSite::kLogicalConstraint);
        }
        for (const auto& tc : t.constraints) validate_reserved_tags(tc.tags, TagSite::kLogicalConstraint);
        for (const auto* other : tables)
          if (iequals(other->table.name, t.table.name))
            throw Error(StatusCode::kError, "table '" + t.table.name + "' is declared twice in logical schema '" + x + "'",
                        t.site);
        tables.push_back(&t);
        break;
      }
      case ast::StmtKind::kCreateIndex:
        throw Error(StatusCode::kError,
                    "index '" + static_cast<const ast::CreateIndexStmt&>(*item).index.name +
                        "' is not allowed in logical schema '" + x +
                        "': indexes are basis structures (declare a materialized view over the basis)",
                    item->site);
      case ast::StmtKind::kCreateView:
        throw Error(StatusCode::kError,
                    "view '" + static_cast<const ast::CreateViewStmt&>(*item).view.name +
                        "' is not allowed in logical schema '" + x + "' (declare it over the logical tables instead)",
                    item->site);
      case ast::StmtKind::kCreateMaterializedView:
        throw Error(StatusCode::kError,
                    "materialized view is not allowed in logical schema '" + x + "': it is a basis structure",
                    item->site);
      case ast::StmtKind::kSeed:
        throw Error(StatusCode::kError,
                    "seed data is not allowed in logical schema '" + x + "': a logical table stores nothing",
                    item->site);
      default:
        throw Error(StatusCode::kError, "logical schema '" + x + "' may declare only tables", item->site);
    }
  }
  return tables;
}

std::string lens_applied_key(const std::string& x) { return "lensapply:" + x; }

// A digest of the basis tables' declarations (spec/lens.md "basisHash"): a later look can
// tell whether the basis changed since the deploy.
std::string basis_hash(DatabaseImpl& db, const std::string& basis) {
  std::vector<std::string> ddl;
  for (const auto& t : db.catalog().tables())
    if (t->schema.schema_name == basis) ddl.push_back(create_table_ddl(t->schema));
  std::sort(ddl.begin(), ddl.end());
  std::string all;
  for (const std::string& d : ddl) all += d + "\n";
  return fingerprint(all);
}

}  // namespace

void declare_lens(DatabaseImpl& db, const ast::DeclareLensStmt& s, DdlOrigin origin) {
  ast::StatementPtr copy = ast::clone(s);
  copy->text_begin = copy->text_end = 0;
  std::shared_ptr<const ast::DeclareLensStmt> lens(static_cast<ast::DeclareLensStmt*>(copy.release()));
  const std::string x = to_lower(s.logical_schema);
  if (origin == DdlOrigin::kStatement) db.persist_declaration(x + "#lens", statement_to_string(*lens));
  db.declared_schemas().lenses[x] = std::move(lens);
}

std::unique_ptr<Executable> plan_declare_lens(DatabaseImpl& db, const ast::DeclareLensStmt& s) {
  return std::make_unique<LensActionExec>([&db, &s] { declare_lens(db, s); });
}

namespace {

void deploy(DatabaseImpl& db, const std::string& x, std::shared_ptr<const ast::DeclareSchemaStmt> decl,
            std::shared_ptr<const ast::DeclareLensStmt> lens, DdlOrigin origin);

}  // namespace

void apply_logical_schema(DatabaseImpl& db, const std::string& name, DdlOrigin origin) {
  const std::string x = to_lower(name);
  auto& ds = db.declared_schemas();
  auto it = ds.declared.find(x);
  if (it == ds.declared.end() || !it->second->logical)
    throw Error(StatusCode::kError, "'" + name + "' is not a declared logical schema");
  std::shared_ptr<const ast::DeclareLensStmt> lens;
  if (auto l = ds.lenses.find(x); l != ds.lenses.end()) lens = l->second;
  deploy(db, x, it->second, lens, origin);
}

void replay_logical_apply(DatabaseImpl& db, const std::vector<ast::StatementPtr>& statements) {
  std::shared_ptr<const ast::DeclareSchemaStmt> decl;
  std::shared_ptr<const ast::DeclareLensStmt> lens;
  std::string name;
  for (const auto& st : statements) {
    ast::StatementPtr copy = ast::clone(*st);
    if (st->kind == ast::StmtKind::kDeclareSchema)
      decl.reset(static_cast<ast::DeclareSchemaStmt*>(copy.release()));
    else if (st->kind == ast::StmtKind::kDeclareLens)
      lens.reset(static_cast<ast::DeclareLensStmt*>(copy.release()));
    else if (st->kind == ast::StmtKind::kApplySchema)
      name = static_cast<const ast::ApplySchemaStmt&>(*st).name;
  }
  if (!decl || name.empty() || !decl->logical)
    throw Error(StatusCode::kCorrupt, "a stored lens deployment lacks its logical declaration or its apply");
  deploy(db, to_lower(name), decl, lens, DdlOrigin::kStoredCatalog);
}

namespace {

void deploy(DatabaseImpl& db, const std::string& x, std::shared_ptr<const ast::DeclareSchemaStmt> decl,
            std::shared_ptr<const ast::DeclareLensStmt> lens, DdlOrigin origin) {
  auto& ds = db.declared_schemas();
  std::vector<const ast::CreateTableStmt*> tables = logical_tables(*decl);
  const std::string basis = lens ? to_lower(lens->basis_schema) : infer_basis(db, x, tables);
  if (basis == x || is_logical(db, basis))
    throw Error(StatusCode::kError, "logical schema '" + x + "' cannot be its own basis: a lens maps onto a physical schema");
  if (!db.catalog().has_schema(basis))
    throw Error(StatusCode::kError, "the basis '" + basis + "' of logical schema '" + x + "' does not exist");
  if (lens)
    for (const auto& v : lens->views) {
      bool known = std::any_of(tables.begin(), tables.end(),
                               [&](const ast::CreateTableStmt* t) { return iequals(t->table.name, v.name); });
      if (!known)
        throw Error(StatusCode::kError,
                    "the lens for '" + x + "' maps view '" + v.name + "', which is not a table of the logical schema",
                    v.site);
    }
  // Compile and prove every table before anything changes.
  std::vector<CompiledLensTable> compiled;
  std::vector<LensAdvisory> errors, warnings;
  for (const ast::CreateTableStmt* t : tables) {
    compiled.push_back(compile_lens_table(db, *decl, *t, lens.get(), basis));
    govern(*t, compiled.back().diagnostics);
    for (LensAdvisory& d : compiled.back().diagnostics) (d.error ? errors : warnings).push_back(d);
  }
  // A propagating foreign-key action writes its child: a read-only logical child cannot
  // take it (every delete through the parent would fail planning its child write).
  for (const CompiledLensTable& c : compiled) {
    if (!c.view || !c.view->lens) continue;
    for (const LensCascade& cas : c.view->lens->cascades) {
      using Act = LensCascade::Action;
      auto writes = [](Act a) { return a == Act::kCascade || a == Act::kSetNull || a == Act::kSetDefault; };
      if (!writes(cas.on_delete) && !writes(cas.on_update)) continue;
      for (const CompiledLensTable& ch : compiled)
        if (ch.view && ch.view->lens && iequals(ch.view->lens->table, cas.child) && !ch.view->lens->read_only.empty()) {
          LensAdvisory e;
          e.table = cas.child;
          e.code = "lens.unrealizable-constraint";
          e.error = true;
          e.message = "the foreign key of logical table '" + cas.child + "' onto '" + c.view->lens->table +
                      "' declares an action that writes '" + cas.child + "', which is read-only (" +
                      ch.view->lens->read_only + ")";
          errors.push_back(std::move(e));
        }
    }
  }
  if (!errors.empty()) {
    std::string msg = "apply schema " + x + ": the lens does not deploy (" + std::to_string(errors.size()) +
                      (errors.size() == 1 ? " error" : " errors") + ")";
    for (const LensAdvisory& e : errors) msg += "\n  " + e.code + " at " + site_of(e) + ": " + e.message;
    throw Error(StatusCode::kConstraint, msg);
  }
  // The logical schema's names must be free for its tables (its previous lens views go).
  Catalog& cat = db.catalog();
  std::shared_ptr<const LensDeployment> previous;
  if (auto d = ds.deployments.find(x); d != ds.deployments.end()) previous = d->second;
  for (const CompiledLensTable& c : compiled) {
    if (cat.find(x, c.view->name))
      throw Error(StatusCode::kError, "logical table '" + x + "." + c.view->name + "' clashes with a table of that name");
    auto v = cat.find_view(x, c.view->name);
    if (v && !v->lens)
      throw Error(StatusCode::kError, "logical table '" + x + "." + c.view->name + "' clashes with a view of that name");
  }
  for (const auto& v : cat.views())
    if (v->schema_name == x && v->lens) cat.remove_view(x, v->name);
  if (!cat.has_schema(x)) cat.add_schema(x);
  auto dep = std::make_shared<LensDeployment>();
  dep->basis = basis;
  if (previous) {
    auto prior = std::make_shared<LensDeployment>(*previous);
    prior->previous = nullptr;  // one level is kept
    dep->previous = prior;
  }
  for (CompiledLensTable& c : compiled) {
    dep->slots.push_back(c.view->lens);
    cat.add_view(c.view);
  }
  dep->advisories = warnings;
  dep->snapshot.logical_schema = x;
  dep->snapshot.basis_schema = basis;
  dep->snapshot.basis_hash = basis_hash(db, basis);
  for (const auto& slot : dep->slots) dep->snapshot.tables.push_back(slot->snapshot);
  dep->applied_text = statement_to_string(*decl) + ";\n" + (lens ? statement_to_string(*lens) + ";\n" : "") +
                      "apply schema " + x;
  ds.deployments[x] = dep;
  for (const LensAdvisory& w : warnings)
    if (w.status == "active" || w.status == "re-surfaced")
      spdlog::warn("apply schema {}: {} at {}: {}", x, w.code, site_of(w), w.message);
  if (origin == DdlOrigin::kStatement)
    if (auto m = db.module(db.options().default_vtab_module)) m->catalog_put(lens_applied_key(x), dep->applied_text);
  db.bump_schema_version();
}

}  // namespace

void notify_lens_deployment(DatabaseImpl& db, const std::string& name) {
  auto& deps = db.declared_schemas().deployments;
  auto it = deps.find(to_lower(name));
  if (it == deps.end()) return;
  // The deployment record is shared with readers; the tally is rebuilt on a copy.
  auto dep = std::make_shared<LensDeployment>(*it->second);
  dep->notified.clear();
  struct Store {
    std::map<std::string, std::shared_ptr<const LensDeployment>>& deps;
    std::string key;
    std::shared_ptr<LensDeployment>& dep;
    ~Store() { deps[key] = dep; }
  } store{deps, it->first, dep};
  for (const auto& [module_name, module] : db.opened_modules()) {
    std::optional<uint32_t> backed = module->notify_lens_deployment(dep->snapshot);
    if (backed) dep->notified.emplace_back(module_name, *backed);
  }
}

// ------------------------------------------------------------------ introspection

namespace {

// quereus_effective_lens(schema, table).
void register_effective_lens(Registry& r) {
  TableFunction eff;
  eff.name = "quereus_effective_lens";
  eff.min_args = 2;
  eff.num_args = 2;
  eff.flags = 0;
  eff.columns = {{"logical_column", QRS_LT_TEXT, false}, {"source", QRS_LT_TEXT, false},
                 {"inverse", QRS_LT_TEXT, false},        {"advertised_member", QRS_LT_TEXT, true},
                 {"advertisement_anchor", QRS_LT_TEXT, true}, {"effective_sql", QRS_LT_TEXT, false}};
  eff.rows = [](DatabaseImpl& db, std::span<const Value> args) {
    std::string schema = to_lower(args[0].to_text()), table = args[1].to_text();
    auto view = db.catalog().find_view(schema, table);
    if (!view || !view->lens)
      throw Error(StatusCode::kError, "'" + schema + "." + table + "' is not a deployed logical table");
    const LensSlot& slot = *view->lens;
    std::vector<Row> rows;
    for (const LensColumn& c : slot.columns) {
      const char* inv = c.inverse == LensColumn::Inverse::kAuthored   ? "authored"
                        : c.inverse == LensColumn::Inverse::kInferred ? "inferred"
                                                                      : "none";
      rows.push_back({Value::Text(c.name), Value::Text(c.covered ? "override" : "default"), Value::Text(inv),
                      c.member.empty() ? Value() : Value::Text(c.member),
                      slot.anchor.empty() ? Value() : Value::Text(slot.anchor), Value::Text(slot.effective_sql)});
    }
    return rows;
  };
  r.add_table_function(std::move(eff), "builtin");
}

// quereus_lens_advisories(schema).
void register_lens_advisories(Registry& r) {
  TableFunction adv;
  adv.name = "quereus_lens_advisories";
  adv.min_args = 1;
  adv.num_args = 1;
  adv.flags = 0;
  adv.columns = {{"table", QRS_LT_TEXT, false},       {"code", QRS_LT_TEXT, false},
                 {"constraint", QRS_LT_TEXT, true},   {"column", QRS_LT_TEXT, true},
                 {"status", QRS_LT_TEXT, false},      {"rationale", QRS_LT_TEXT, true},
                 {"fingerprint", QRS_LT_TEXT, false}, {"recorded_fingerprint", QRS_LT_TEXT, true},
                 {"message", QRS_LT_TEXT, false}};
  adv.rows = [](DatabaseImpl& db, std::span<const Value> args) {
    std::string schema = to_lower(args[0].to_text());
    auto& deps = db.declared_schemas().deployments;
    auto it = deps.find(schema);
    if (it == deps.end()) {
      if (!is_logical(db, schema))
        throw Error(StatusCode::kError, "'" + schema + "' is not a logical schema");
      return std::vector<Row>{};
    }
    std::vector<Row> rows;
    auto text_or_null = [](const std::string& s) { return s.empty() ? Value() : Value::Text(s); };
    for (const LensAdvisory& a : it->second->advisories)
      rows.push_back({Value::Text(a.table), Value::Text(a.code), text_or_null(a.constraint), text_or_null(a.column),
                      Value::Text(a.status), text_or_null(a.rationale), Value::Text(a.fingerprint),
                      text_or_null(a.recorded), Value::Text(a.message)});
    return rows;
  };
  r.add_table_function(std::move(adv), "builtin");
}

// quereus_lens_notifications(schema).
void register_lens_notifications(Registry& r) {
  TableFunction notes;
  notes.name = "quereus_lens_notifications";
  notes.min_args = 1;
  notes.num_args = 1;
  notes.flags = 0;
  notes.columns = {{"module", QRS_LT_TEXT, false}, {"relations_backed", QRS_LT_INTEGER, false}};
  notes.rows = [](DatabaseImpl& db, std::span<const Value> args) {
    auto& deps = db.declared_schemas().deployments;
    auto it = deps.find(to_lower(args[0].to_text()));
    std::vector<Row> rows;
    if (it == deps.end()) return rows;
    for (const auto& [module, backed] : it->second->notified)
      rows.push_back({Value::Text(module), Value::Integer(backed)});
    return rows;
  };
  r.add_table_function(std::move(notes), "builtin");
}

void register_basis_backfill(Registry& r) {
  // quereus_basis_backfill(logical_schema): per basis relation the current deploy reads and
  // the previous one did not, how to populate it from the previous deploy's get body
  // (spec/lens.md "Classification — re-decomposition vs needs-data").
  TableFunction bf;
  bf.name = "quereus_basis_backfill";
  bf.min_args = 1;
  bf.num_args = 1;
  bf.flags = 0;
  bf.columns = {{"logical_table", QRS_LT_TEXT, false},     {"basis_relation", QRS_LT_TEXT, false},
                {"category", QRS_LT_TEXT, false},          {"backfill_sql", QRS_LT_TEXT, true},
                {"generated_columns", QRS_LT_TEXT, false}, {"missing_columns", QRS_LT_TEXT, false},
                {"reason", QRS_LT_TEXT, false}};
  bf.rows = [](DatabaseImpl& db, std::span<const Value> args) {
    std::string x = to_lower(args[0].to_text());
    if (!is_logical(db, x)) throw Error(StatusCode::kError, "'" + x + "' is not a logical schema");
    std::vector<Row> rows;
    auto& deps = db.declared_schemas().deployments;
    auto it = deps.find(x);
    if (it == deps.end() || !it->second->previous) return rows;
    const LensDeploymentSnapshot& now = it->second->snapshot;
    const LensDeploymentSnapshot& before = it->second->previous->snapshot;
    std::set<std::string> backed_before;
    for (const auto& t : before.tables)
      for (const auto& r : t.relations) backed_before.insert(r.schema + "." + to_lower(r.table));
    const bool drifted = basis_hash(db, now.basis_schema) != now.basis_hash;
    std::vector<std::pair<std::string, std::string>> order;  // (logical table, relation) sort keys
    for (const auto& t : now.tables) {
      const LensTableSnapshot* prior = nullptr;
      for (const auto& p : before.tables)
        if (iequals(p.logical_table, t.logical_table)) prior = &p;
      if (!prior) continue;  // a new logical table has no prior rows
      std::vector<const LensRelationBacking*> fresh;
      for (const auto& r : t.relations)
        if (!backed_before.count(r.schema + "." + to_lower(r.table))) fresh.push_back(&r);
      std::sort(fresh.begin(), fresh.end(), [](auto* a, auto* b) { return to_lower(a->table) < to_lower(b->table); });
      for (const LensRelationBacking* r : fresh) {
        std::vector<std::pair<std::string, std::string>> gen;  // basis → logical
        std::vector<std::string> missing;
        for (const auto& [b, l] : r->columns) {
          bool known = std::any_of(prior->logical_columns.begin(), prior->logical_columns.end(),
                                   [&](const std::string& c) { return iequals(c, l); });
          if (known) gen.emplace_back(b, l);
          else missing.push_back(b);
        }
        // The NOT-NULL rule: every required basis column must be among those generated.
        auto table = db.catalog().find(r->schema, r->table);
        std::vector<std::string> unfilled;
        if (table)
          for (const ColumnSchema& c : table->schema.columns) {
            if (!c.not_null || c.default_expr || c.generated()) continue;
            bool filled = std::any_of(gen.begin(), gen.end(), [&](const auto& g) { return iequals(g.first, c.name); });
            if (!filled) unfilled.push_back(c.name);
          }
        std::string category = missing.empty() ? "re-decomposition" : gen.empty() ? "needs-data" : "partial";
        std::string reason;
        Value sql;
        if (category == "needs-data") {
          reason = "no column of '" + r->table + "' is produced by the previous deploy: the application supplies its rows";
        } else if (!unfilled.empty()) {
          std::string list;
          for (const std::string& u : unfilled) list += (list.empty() ? "" : ", ") + u;
          reason = "required column(s) " + list +
                   " (NOT NULL, no default) have no value from the previous deploy: the application owns the insert";
        } else {
          std::string cols, sel;
          for (const auto& [b, l] : gen) {
            cols += (cols.empty() ? "" : ", ") + quote_identifier(b);
            sel += (sel.empty() ? "" : ", ") + std::string("prior.") + quote_identifier(l);
          }
          sql = Value::Text("insert into " + quote_identifier(r->schema) + "." + quote_identifier(r->table) + " (" +
                            cols + ") select " + sel + " from (" + prior->get_body + ") as prior");
          reason = category == "re-decomposition"
                       ? "every column is reconstructible from the previous deploy's get body"
                       : "the reconstructible columns are generated; the application supplies the missing ones";
        }
        if (drifted) reason += "; warning: the basis changed out of band since this deploy (basis hash drift)";
        std::string generated, miss;
        for (const auto& [b, l] : gen) generated += (generated.empty() ? "" : ",") + b;
        for (const std::string& m : missing) miss += (miss.empty() ? "" : ",") + m;
        rows.push_back({Value::Text(t.logical_table), Value::Text(r->schema + "." + r->table), Value::Text(category),
                        sql, Value::Text(generated), Value::Text(miss), Value::Text(reason)});
      }
    }
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
      return to_lower(a[0].to_text()) < to_lower(b[0].to_text());
    });
    return rows;
  };
  r.add_table_function(std::move(bf), "builtin");
}

}  // namespace

void register_lens_functions(Registry& r) {
  if (r.find_table_function("quereus_effective_lens")) return;  // an earlier Database::Open
  register_effective_lens(r);
  register_lens_advisories(r);
  register_lens_notifications(r);
  register_basis_backfill(r);
}

}  // namespace quereus
