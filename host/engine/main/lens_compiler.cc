// The lens compiler and its prover (main/lenses.h; spec/lens.md "The Default Mapper",
// "Sparse Overrides", "Constraint Attachment", "Proving the spec and the body agree").
//
// One logical table at a time: the effective body is composed at the AST level (the
// author's override, gap-filled by name from its FROM; or an n-way join synthesized from
// a module advertisement; or the plain name match), every basis source qualified with the
// basis schema. The body is then analyzed by the view-write surface (which column writes
// where, which is computed) and planned (types, nullability, keys), and the prover runs
// its checklist over those facts. Finally the logical constraints that the body does not
// guarantee become attached CHECKs over the basis write rows (catalog/lens.h LensCheck).
#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include <spdlog/spdlog.h>

#include "catalog/catalog.h"
#include "catalog/derivation.h"
#include "common/strings.h"
#include "ddl/declarative/declared_schema.h"
#include "ddl/table_ddl.h"
#include "eval/exec_context.h"
#include "main/database_impl.h"
#include "main/lenses.h"
#include "parser/ast_build.h"
#include "parser/ast_clone.h"
#include "parser/ast_printer.h"
#include "parser/ast_visit.h"
#include "parser/ast_walk.h"
#include "planner/planner.h"
#include "planner/properties.h"
#include "planner/scalar_expr.h"
#include "rewrite/view_writes.h"
#include "types/compare.h"
#include "types/json_value.h"
#include "types/logical_type.h"

namespace quereus {

// ------------------------------------------------------------------ shared helpers (lenses.h)

std::vector<std::pair<std::string, std::string>> tag_entries(const TagSet& tags) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [key, value] : tags.entries()) out.emplace_back(key, tag_text(value));
  return out;
}

// ------------------------------------------------------------------ shared helpers (lenses.h)

std::vector<std::string> split_trim(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(sep, start);
    if (end == std::string::npos) end = s.size();
    std::string part = s.substr(start, end - start);
    size_t a = part.find_first_not_of(" \t"), b = part.find_last_not_of(" \t");
    if (a != std::string::npos) out.push_back(part.substr(a, b - a + 1));
    start = end + 1;
  }
  return out;
}

namespace {

using ast::ExprPtr;

// ------------------------------------------------------------------ small helpers

// A value as SQL would spell it, for messages.
std::string sql_literal(const Value& v) {
  if (v.is_null()) return "NULL";
  if (v.type() == ValueType::kText) return "'" + v.to_text() + "'";
  return v.to_text();
}

// The value of tag `key` (matched without regard to case) as text; "" when absent.
std::string tag_value(const TagSet& tags, std::string_view key) {
  for (const auto& [k, v] : tags.entries())
    if (iequals(k, key)) return tag_text(v);
  return "";
}

// Every table source of a query, subqueries, CTE bodies and compound legs included.
struct BodyWalk {
  std::function<void(ast::TableSource&)> on_source;
  std::function<void(ast::Select&)> on_select;

  void select(ast::Select& s) {
    if (on_select) on_select(s);
    if (s.with)
      for (auto& c : s.with->ctes)
        if (c.select) select(*c.select);
    core(s.core);
    for (auto& leg : s.compounds) core(leg.core);
    for (auto& o : s.order_by) expr(o.expr);
    expr(s.limit);
    expr(s.offset);
    for (auto& d : s.defaults) expr(d.value);
  }
  void core(ast::SelectCore& c) {
    if (c.nested) {
      select(*c.nested);
      return;
    }
    for (auto& rc : c.columns) {
      expr(rc.expr);
      for (auto& inv : rc.inverse) expr(inv.value);
    }
    if (c.from) source(*c.from);
    expr(c.where);
    for (auto& g : c.group_by) expr(g);
    expr(c.having);
    for (auto& row : c.values)
      for (auto& v : row) expr(v);
  }
  void source(ast::TableSource& t) {
    switch (t.kind) {
      case ast::TableSource::Kind::kTable:
        if (on_source) on_source(t);
        break;
      case ast::TableSource::Kind::kSubquery:
        if (t.subquery) select(*t.subquery);
        break;
      case ast::TableSource::Kind::kFunction:
        for (auto& a : t.function_args) expr(a);
        break;
      case ast::TableSource::Kind::kJoin:
        if (t.left) source(*t.left);
        if (t.right) source(*t.right);
        expr(t.on);
        break;
    }
  }
  void expr(ExprPtr& e) {
    if (!e) return;
    ast::for_each_child(*e, [&](ExprPtr& c) { expr(c); }, [&](ast::Select& q) { select(q); });
  }
};

// Replaces every column reference at the expression's own level (not inside subqueries)
// for which `fn` returns a replacement.
void substitute(ExprPtr& e, const std::function<ExprPtr(const ast::ColumnRef&)>& fn) {
  if (!e) return;
  if (e->kind == ast::ExprKind::kColumn) {
    if (ExprPtr r = fn(static_cast<const ast::ColumnRef&>(*e))) e = std::move(r);
    return;
  }
  ast::for_each_child(*e, [&](ExprPtr& c) { substitute(c, fn); }, [](ast::Select&) {});
}

// A logical CHECK's references to the row being written (lens.md "Row-local": the rewrite
// is scope-aware): a bare logical column, or one qualified by the table's name or `new`, at
// the CHECK's own level or correlated from inside a subquery. A reference a nested FROM
// binds — a qualifier one of its sources takes, a bare name one of its sources exposes —
// is the subquery's own and is left alone, as are qualified references to other relations.
// `on_ref` returns a replacement for a written-row reference (or null to keep it).
class WriteRowWalk {
 public:
  struct Hooks {
    std::function<bool(const std::string& column)> is_row_column;
    // The columns a table source exposes (nullopt: unknown — taken to expose none); may
    // qualify the name (a logical table of the schema being compiled).
    std::function<std::optional<std::vector<std::string>>(ast::QualifiedName&)> table_columns;
    std::function<ExprPtr(const ast::ColumnRef&)> on_ref;
  };
  WriteRowWalk(std::string table, Hooks hooks) : table_(std::move(table)), hooks_(std::move(hooks)) {}

  void run(ExprPtr& e) { expr(e, nullptr); }

  // The written-row references of `e` (the logical columns they name), at every level.
  static std::vector<std::string> columns(const ast::Expr& e, const std::string& table, Hooks hooks) {
    std::vector<std::string> out;
    hooks.on_ref = [&](const ast::ColumnRef& r) -> ExprPtr {
      out.push_back(r.column);
      return nullptr;
    };
    ExprPtr copy = ast::clone(e);
    WriteRowWalk(table, std::move(hooks)).run(copy);
    return out;
  }

 private:
  struct Level {
    const Level* outer = nullptr;
    std::vector<std::string> qualifiers;  // the FROM's sources, as its columns name them
    std::vector<std::string> columns;     // the bare names its sources expose
    std::vector<std::pair<std::string, std::vector<std::string>>> ctes;  // WITH members in scope
  };

  static bool has(const std::vector<std::string>& v, const std::string& name) {
    return std::any_of(v.begin(), v.end(), [&](const std::string& x) { return iequals(x, name); });
  }
  bool row_ref(const ast::ColumnRef& r, const Level* lv) const {
    if (!r.schema.empty() || !hooks_.is_row_column(r.column)) return false;
    for (const Level* l = lv; l; l = l->outer)
      if (r.table.empty() ? has(l->columns, r.column) : has(l->qualifiers, r.table)) return false;
    return r.table.empty() || iequals(r.table, table_) || iequals(r.table, "new");
  }
  static const std::vector<std::string>* cte(const Level* lv, const std::string& name) {
    for (const Level* l = lv; l; l = l->outer)
      for (auto it = l->ctes.rbegin(); it != l->ctes.rend(); ++it)
        if (iequals(it->first, name)) return &it->second;
    return nullptr;
  }
  // The output names of a query (its first core's named result columns).
  static std::vector<std::string> output_names(const ast::Select& s) {
    const ast::SelectCore* c = &s.core;
    while (c->nested) c = &c->nested->core;
    std::vector<std::string> out;
    for (const ast::ResultColumn& rc : c->columns) {
      if (!rc.alias.empty()) out.push_back(rc.alias);
      else if (rc.expr && rc.expr->kind == ast::ExprKind::kColumn)
        out.push_back(static_cast<const ast::ColumnRef&>(*rc.expr).column);
    }
    return out;
  }

  void expr(ExprPtr& e, const Level* lv) {
    if (!e) return;
    if (e->kind == ast::ExprKind::kColumn) {
      const auto& r = static_cast<const ast::ColumnRef&>(*e);
      if (row_ref(r, lv))
        if (ExprPtr x = hooks_.on_ref(r)) e = std::move(x);
      return;
    }
    ast::for_each_child(*e, [&](ExprPtr& c) { expr(c, lv); }, [&](ast::Select& q) { select(q, lv); });
  }

  void select(ast::Select& s, const Level* outer) {
    if (s.dml) return;  // a write in a CHECK is refused when the CHECK is bound
    Level with;
    const Level* base = outer;
    if (s.with) {
      with.outer = outer;
      for (auto& c : s.with->ctes) {
        std::vector<std::string> names = !c.columns.empty() ? c.columns
                                         : c.select          ? output_names(*c.select)
                                                             : std::vector<std::string>{};
        if (s.with->recursive) with.ctes.emplace_back(c.name, names);
        if (c.select) select(*c.select, &with);
        if (!s.with->recursive) with.ctes.emplace_back(c.name, std::move(names));
      }
      base = &with;
    }
    core(s.core, base, s.compounds.empty() ? &s.order_by : nullptr);
    for (auto& leg : s.compounds) core(leg.core, base, nullptr);
    if (!s.compounds.empty())
      for (auto& o : s.order_by) expr(o.expr, base);
    expr(s.limit, base);
    expr(s.offset, base);
  }

  void core(ast::SelectCore& c, const Level* outer, std::vector<ast::OrderingTerm>* order_by) {
    if (c.nested) {
      select(*c.nested, outer);
      if (order_by)
        for (auto& o : *order_by) expr(o.expr, outer);
      return;
    }
    for (auto& row : c.values)
      for (auto& v : row) expr(v, outer);
    Level lv;
    lv.outer = outer;
    if (c.from) source(*c.from, lv);
    for (auto& rc : c.columns) expr(rc.expr, &lv);
    expr(c.where, &lv);
    for (auto& g : c.group_by) expr(g, &lv);
    expr(c.having, &lv);
    if (order_by)
      for (auto& o : *order_by) expr(o.expr, &lv);
  }

  void source(ast::TableSource& t, Level& lv) {
    using K = ast::TableSource::Kind;
    switch (t.kind) {
      case K::kTable: {
        lv.qualifiers.push_back(t.alias.empty() ? t.table.name : t.alias);
        const std::vector<std::string>* named = t.table.schema.empty() ? cte(lv.outer, t.table.name) : nullptr;
        if (named) {
          lv.columns.insert(lv.columns.end(), named->begin(), named->end());
        } else if (auto cols = hooks_.table_columns(t.table)) {
          lv.columns.insert(lv.columns.end(), cols->begin(), cols->end());
        }
        break;
      }
      case K::kSubquery:
        if (!t.alias.empty()) lv.qualifiers.push_back(t.alias);
        if (t.subquery) {
          select(*t.subquery, t.lateral ? &lv : lv.outer);
          std::vector<std::string> names = t.alias_columns.empty() ? output_names(*t.subquery) : t.alias_columns;
          lv.columns.insert(lv.columns.end(), names.begin(), names.end());
        }
        break;
      case K::kFunction: {
        lv.qualifiers.push_back(t.alias.empty() ? t.function_name : t.alias);
        for (auto& a : t.function_args) expr(a, t.lateral ? &lv : lv.outer);
        static const std::vector<std::string> kJson = {"key", "value", "type", "atom", "id", "parent", "fullkey", "path"};
        if (!t.alias_columns.empty()) lv.columns.insert(lv.columns.end(), t.alias_columns.begin(), t.alias_columns.end());
        else if (iequals(t.function_name, "json_each") || iequals(t.function_name, "json_tree"))
          lv.columns.insert(lv.columns.end(), kJson.begin(), kJson.end());
        else if (iequals(t.function_name, "generate_series")) lv.columns.push_back("value");
        break;
      }
      case K::kJoin:
        if (t.left) source(*t.left, lv);
        if (t.right) source(*t.right, lv);
        expr(t.on, &lv);
        break;
    }
  }

  std::string table_;
  Hooks hooks_;
};

// The column references of `e` at its own level.
void column_refs(const ast::Expr& e, std::vector<const ast::ColumnRef*>& out) {
  if (e.kind == ast::ExprKind::kColumn) {
    out.push_back(static_cast<const ast::ColumnRef*>(&e));
    return;
  }
  ast::for_each_child(e, [&](const ExprPtr& c) { column_refs(*c, out); }, [](const ast::Select&) {});
}

ExprPtr literal_of(const Value& v) { return ast::value_literal(v); }

// The value of a closed, deterministic expression; nullopt when it is not one (a
// subquery, a volatile function, a column left over) or its evaluation fails. Never reads
// a table.
std::optional<Value> eval_const(DatabaseImpl& db, const ast::Expr& e) {
  if (ast::contains_subquery(e)) return std::nullopt;
  try {
    Planner planner(db);
    Scope none;
    ScalarPtr s = planner.bind_expr(e, none);
    if (!is_closed(*s)) return std::nullopt;
    ExecContext ctx;
    EvalEnv env{nullptr, nullptr, &ctx};
    return s->eval(env);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool same_value(const Value& a, const Value& b) {
  if (a.is_null() || b.is_null()) return a.is_null() && b.is_null();
  return compare_values(a, b) == 0;
}

// `col IN (literal, …)` conjuncts over column `name` among `checks`: the enumerable
// domain, narrowed by the other CHECKs that read only that column (each value is kept
// when every such CHECK holds for it). nullopt when no IN-list constrains the column.
std::optional<std::vector<Value>> enumerable_domain(DatabaseImpl& db, const std::vector<CheckSchema>& checks,
                                                    const std::string& name) {
  std::optional<std::vector<Value>> domain;
  std::vector<const ast::Expr*> others;
  for (const CheckSchema& ck : checks) {
    // Only a CHECK every write of the column passes bounds the stored values.
    if (!ck.on_insert || !ck.on_update) continue;
    const ast::Expr& e = *ck.expr;
    if (e.kind == ast::ExprKind::kIn) {
      auto& in = static_cast<const ast::InExpr&>(e);
      if (!in.negated && !in.subquery && in.operand && in.operand->kind == ast::ExprKind::kColumn &&
          iequals(static_cast<const ast::ColumnRef&>(*in.operand).column, name)) {
        std::vector<Value> values;
        bool ok = true;
        for (const auto& item : in.list) {
          std::optional<Value> v = eval_const(db, *item);
          if (!v) {
            ok = false;
            break;
          }
          values.push_back(*v);
        }
        if (ok && values.size() <= 64) {
          if (!domain) domain = std::move(values);
          else {
            std::vector<Value> both;
            for (const Value& v : *domain)
              if (std::any_of(values.begin(), values.end(), [&](const Value& w) { return same_value(v, w); }))
                both.push_back(v);
            domain = std::move(both);
          }
          continue;
        }
      }
    }
    std::vector<const ast::ColumnRef*> refs;
    column_refs(e, refs);
    if (!refs.empty() && std::all_of(refs.begin(), refs.end(), [&](auto* r) { return iequals(r->column, name); }))
      others.push_back(&e);
  }
  if (!domain) return domain;
  std::vector<Value> kept;
  for (const Value& v : *domain) {
    bool holds = true;
    for (const ast::Expr* o : others) {
      ExprPtr probe = ast::clone(*o);
      substitute(probe, [&](const ast::ColumnRef&) { return literal_of(v); });
      std::optional<Value> r = eval_const(db, *probe);
      bool null = false;
      if (r && !r->truthy(&null) && !null) holds = false;
    }
    if (holds) kept.push_back(v);
  }
  return kept;
}

// ------------------------------------------------------------------ the body

struct Source {
  std::string qualifier;  // how the body's columns name it
  std::string schema;     // lower-case
  std::string name;
  std::vector<std::string> columns;
  std::shared_ptr<TableEntry> table;  // null for a basis view
};

std::vector<std::string> relation_column_names(DatabaseImpl& db, const std::string& schema, const std::string& name) {
  ResolvedRelation rel = db.find_relation(schema, name);
  if (rel.table) {
    std::vector<std::string> out;
    for (const ColumnSchema& c : rel.table->schema.columns) out.push_back(c.name);
    return out;
  }
  std::vector<ast::ResultColumn> cols;
  cols.push_back(ast::star());
  auto q = ast::select(std::move(cols), ast::table_source({schema, name, {}}, ""));
  Planner planner(db);
  return planner.plan_select(*q, nullptr).names;
}

std::string quoted(const std::string& schema, const std::string& name) { return schema + "." + name; }

[[noreturn]] void fail(const std::string& code, const std::string& message, std::optional<SourceSite> site = {}) {
  throw Error(StatusCode::kError, code + ": " + message, site);
}

// The primary-storage mapping advertisement of one logical table, resolved against the
// catalog: what the modules owning the basis tables advertised (SDK 1.10; the generic
// modules build theirs from `quereus.lens.decomp.*` tags), checked member by member
// (spec/lens.md "The module mapping advertisement"; docs/decompositions.md).
struct Advertisement {
  std::string id;
  std::string anchor;   // the anchor's relation id
  bool surrogate = false;
  std::string module;   // the module that advertised it
  struct Member {
    std::shared_ptr<TableEntry> table;
    std::string relation_id;
    bool optional = false;
    std::vector<std::pair<std::string, std::string>> columns;  // logical → basis column
    std::optional<AdvertisedMember::Pivot> pivot;              // an EAV member
    std::vector<std::string> key;                              // its shared-key basis columns
  };
  std::vector<Member> members;  // the anchor first
  std::vector<MappingAdvertisement> auxiliaries;
};

// Every advertisement the modules owning basis tables of `basis` make for logical table
// `logical` (case-insensitive), each module asked once with its own tables.
std::vector<MappingAdvertisement> collect_advertisements(DatabaseImpl& db, const std::string& basis,
                                                         const std::string& logical) {
  std::vector<std::pair<VtabModule*, std::vector<const TableSchema*>>> by_module;
  for (const auto& t : db.catalog().tables()) {
    if (t->schema.schema_name != basis || !t->module || t->schema.derivation) continue;
    auto it = std::find_if(by_module.begin(), by_module.end(), [&](auto& e) { return e.first == t->module.get(); });
    if (it == by_module.end()) {
      by_module.push_back({t->module.get(), {}});
      it = by_module.end() - 1;
    }
    it->second.push_back(&t->schema);
  }
  std::vector<MappingAdvertisement> out;
  for (auto& [module, tables] : by_module) {
    std::optional<std::vector<MappingAdvertisement>> ads;
    try {
      ads = module->mapping_advertisements(basis, tables);
    } catch (const Error& e) {
      // A module's refusal fails the deploy with the module's own code and message.
      throw Error(e.code(), e.raw_message());
    }
    if (!ads) continue;
    for (auto& ad : *ads)
      if (iequals(ad.logical_table, logical)) out.push_back(std::move(ad));
  }
  return out;
}

// True when `cols` (basis column names of `t`) are, as a set, its primary key or the
// columns of one of its non-partial UNIQUE constraints / indexes.
bool declared_unique(const TableSchema& t, const std::vector<std::string>& cols) {
  std::set<int> want;
  for (const std::string& c : cols) want.insert(t.find_column(c));
  if (want.count(-1) || want.size() != cols.size()) return false;
  std::set<int> pk;
  for (const KeyColumn& k : t.primary_key) pk.insert(k.column);
  if (pk == want) return true;
  for (const IndexSchema& ix : t.indexes) {
    if (!ix.unique || ix.where) continue;
    std::set<int> got;
    for (const IndexColumn& c : ix.columns) got.insert(c.column);
    if (got == want) return true;
  }
  return false;
}

// `for_override`: an override composes with it, so an advertised column the logical
// table does not have (the override renamed it) is dropped, not refused.
std::optional<Advertisement> find_advertisement(DatabaseImpl& db, const std::string& basis, const TableSchema& ts,
                                                bool for_override = false) {
  const std::string& logical = ts.name;
  std::vector<MappingAdvertisement> all = collect_advertisements(db, basis, logical);
  const MappingAdvertisement* primary = nullptr;
  std::optional<MappingAdvertisement> merged;
  std::vector<MappingAdvertisement> aux;
  for (const MappingAdvertisement& a : all) {
    if (a.auxiliary) {
      aux.push_back(a);
      continue;
    }
    if (primary && iequals(primary->id, a.id) && primary->module != a.module) {
      // One decomposition over tables of several modules: each module advertises the
      // members it holds; the parts must agree on the decomposition's own fields.
      if (!iequals(primary->anchor, a.anchor) || primary->surrogate != a.surrogate)
        fail("lens.malformed-advertisement", "decomposition '" + a.id + "' of logical table '" + logical +
                                                 "' is advertised differently by modules '" + primary->module +
                                                 "' and '" + a.module + "' (anchor or shared-key kind)");
      if (!merged) merged = *primary;
      for (const AdvertisedMember& m : a.members) merged->members.push_back(m);
      merged->module += ", " + a.module;
      primary = &*merged;
      continue;
    }
    if (primary)
      fail("lens.malformed-advertisement", "logical table '" + logical + "' has two primary-storage advertisements ('" +
                                               primary->id + "' from module '" + primary->module + "', '" + a.id +
                                               "' from module '" + a.module + "')");
    primary = &a;
  }
  if (!primary) return std::nullopt;
  const MappingAdvertisement& p = *primary;
  const std::string what = "decomposition '" + p.id + "' of logical table '" + logical + "'";
  Advertisement ad;
  ad.id = p.id;
  ad.anchor = p.anchor;
  ad.surrogate = p.surrogate;
  ad.module = p.module;
  ad.auxiliaries = std::move(aux);
  if (p.anchor.empty()) fail("lens.malformed-advertisement", what + " names no anchor");
  std::set<std::string> ids;
  for (const AdvertisedMember& m : p.members) {
    Advertisement::Member am;
    am.relation_id = m.relation_id;
    if (!ids.insert(to_lower(m.relation_id)).second)
      fail("lens.malformed-advertisement", what + " names member '" + m.relation_id + "' twice");
    const std::string schema = m.schema_name.empty() ? basis : to_lower(m.schema_name);
    ResolvedRelation rel = db.find_relation(schema, m.table_name);
    if (schema != basis || !rel.table)
      fail("lens.malformed-advertisement", what + ": member '" + m.relation_id + "' names basis table '" + schema + "." +
                                               m.table_name + "', which is not a table of basis schema '" + basis + "'");
    am.table = rel.table;
    const TableSchema& t = rel.table->schema;
    auto column = [&](const std::string& c, const std::string& role) {
      int at = t.find_column(c);
      if (at < 0)
        fail("lens.malformed-advertisement", what + ": member '" + m.relation_id + "' advertises " + role + " '" + c +
                                                 "', which table '" + t.name + "' does not have");
      return t.columns[at].name;
    };
    am.optional = m.optional;
    for (const auto& [l, b] : m.columns) {
      if (ts.find_column(l) < 0 && for_override) continue;
      if (ts.find_column(l) < 0)
        fail("lens.malformed-advertisement", what + ": member '" + m.relation_id + "' backs column '" + l +
                                                 "', which logical table '" + logical + "' does not have");
      am.columns.emplace_back(ts.columns[ts.find_column(l)].name, column(b, "column"));
    }
    if (m.pivot) {
      am.pivot = AdvertisedMember::Pivot{column(m.pivot->entity, "entity column"),
                                         column(m.pivot->attribute, "attribute column"),
                                         column(m.pivot->value, "value column")};
      if (!declared_unique(t, {am.pivot->entity, am.pivot->attribute}))
        fail("lens.malformed-advertisement", what + ": EAV member '" + m.relation_id + "' needs a PRIMARY KEY or "
                                                 "non-partial UNIQUE on (" + am.pivot->entity + ", " +
                                                 am.pivot->attribute + ") of table '" + t.name + "'");
    }
    for (const std::string& k : m.key_columns) {
      // A logical-tuple key may be spelled by the logical column a member column backs.
      std::string c = k;
      if (t.find_column(c) < 0)
        for (const auto& [l, b] : am.columns)
          if (iequals(l, k) && !am.pivot) c = b;
      am.key.push_back(column(c, "key column"));
    }
    if (iequals(m.relation_id, p.anchor)) ad.members.insert(ad.members.begin(), std::move(am));
    else ad.members.push_back(std::move(am));
  }
  if (ad.members.empty() || !iequals(ad.members.front().relation_id, p.anchor))
    fail("lens.malformed-advertisement", what + " names anchor '" + p.anchor + "', which is not one of its members");
  const Advertisement::Member& anchor = ad.members.front();
  if (anchor.pivot) fail("lens.malformed-advertisement", what + ": the anchor '" + anchor.relation_id + "' is an EAV member");
  std::vector<std::string> logical_pk;
  for (const KeyColumn& k : ts.primary_key) logical_pk.push_back(ts.columns[k.column].name);
  if (!ts.primary_key_declared) logical_pk.clear();
  if (ad.surrogate) {
    if (anchor.key.empty())
      fail("lens.malformed-advertisement", what + ": a surrogate shared key needs the anchor's key columns "
                                               "(quereus.lens.decomp.key)");
    for (const std::string& k : anchor.key) {
      const ColumnSchema& c = anchor.table->schema.columns[anchor.table->schema.find_column(k)];
      if (!c.default_expr)
        fail("lens.malformed-advertisement", what + ": the surrogate key column '" + anchor.table->schema.name + "." +
                                                 c.name + "' declares no DEFAULT (the engine generates no key of its own)");
    }
  }
  const size_t arity = ad.surrogate ? anchor.key.size() : logical_pk.size();
  for (Advertisement::Member& m : ad.members) {
    if (m.key.empty() && !ad.surrogate && !m.pivot) {
      // A logical-tuple member keyed by the logical key's own column names.
      for (const std::string& k : logical_pk) {
        std::string c = k;
        for (const auto& [l, b] : m.columns)
          if (iequals(l, k)) c = b;
        if (m.table->schema.find_column(c) < 0) break;
        m.key.push_back(m.table->schema.columns[m.table->schema.find_column(c)].name);
      }
    }
    if (m.key.size() != arity)
      fail("lens.malformed-advertisement", what + ": member '" + m.relation_id + "' shares a key of " +
                                               std::to_string(m.key.size()) + " column(s), the " +
                                               (ad.surrogate ? "anchor's surrogate key" : "logical primary key") +
                                               " has " + std::to_string(arity));
    if (arity > 0 && !m.pivot && !declared_unique(m.table->schema, m.key))
      fail("lens.malformed-advertisement", what + ": the stitch key (" + join(m.key, ", ") + ") of member '" +
                                               m.relation_id + "' is not a PRIMARY KEY or non-partial UNIQUE of table '" +
                                               m.table->schema.name + "'");
  }
  // Every logical column backed at most once.
  std::map<std::string, std::string> backed;
  for (const Advertisement::Member& m : ad.members)
    for (const auto& [l, b] : m.columns) {
      auto [it, fresh] = backed.emplace(to_lower(l), m.relation_id);
      if (!fresh)
        fail("lens.malformed-advertisement", what + ": logical column '" + l + "' is backed by two members ('" +
                                                 it->second + "', '" + m.relation_id + "')");
    }
  return ad;
}

struct Body {
  std::unique_ptr<ast::Select> select;
  std::vector<Source> sources;       // the top-level FROM relations, in order
  std::vector<bool> covered;         // per logical column
  std::vector<std::string> member;   // per logical column: the advertised member backing it
  std::string anchor;
  std::vector<LensSlot::EavMember> eav;
  std::vector<LensSlot::AuxRoute> aux;
  std::vector<LensSlot::InclusionDependency> inds;
};

ExprPtr qualified_ref(const std::string& qualifier, const std::string& column) {
  return ast::column_ref(qualifier, column);
}

// The get of an advertised decomposition (spec/lens.md "Get synthesis"): rooted at the
// existence anchor, every other stored member joined on its shared key — mandatory inner,
// optional left —, an EAV member read per column as a correlated scalar subquery
// `(select value from pivot where entity = anchor.key and attribute = '<attr>')`, and a
// keyless (`primary key ()`) singleton joined `on true`.
// The routes of the auxiliary-access advertisements (spec/lens.md "Auxiliary-access
// read-path routing"): each auxiliary member keyed like the anchor on the logical key
// (a PRIMARY KEY or non-partial UNIQUE of its table), one route per advertised column.
// A surrogate-keyed decomposition routes nothing (the auxiliary would have to join
// through the surrogate; deferred). A member or column the catalog lacks is malformed.
std::vector<LensSlot::AuxRoute> aux_routes(DatabaseImpl& db, const TableSchema& ts, const Advertisement& ad,
                                           const std::string& basis, const std::string& anchor_qualifier) {
  std::vector<LensSlot::AuxRoute> out;
  const Advertisement::Member& anchor = ad.members.front();
  std::vector<std::string> logical_pk;
  if (ts.primary_key_declared)
    for (const KeyColumn& k : ts.primary_key) logical_pk.push_back(ts.columns[k.column].name);
  for (const MappingAdvertisement& a : ad.auxiliaries) {
    const std::string what = "auxiliary-access advertisement '" + a.id + "' of logical table '" + ts.name + "'";
    for (const AdvertisedMember& m : a.members) {
      const std::string schema = m.schema_name.empty() ? basis : to_lower(m.schema_name);
      ResolvedRelation rel = db.find_relation(schema, m.table_name);
      if (schema != basis || !rel.table)
        fail("lens.malformed-advertisement", what + ": member '" + m.relation_id + "' names basis table '" + schema +
                                                 "." + m.table_name + "', which is not a table of basis schema '" +
                                                 basis + "'");
      const TableSchema& t = rel.table->schema;
      auto column = [&](const std::string& c, const std::string& role) {
        int at = t.find_column(c);
        if (at < 0)
          fail("lens.malformed-advertisement", what + ": member '" + m.relation_id + "' advertises " + role + " '" +
                                                   c + "', which table '" + t.name + "' does not have");
        return t.columns[at].name;
      };
      // Its key, aligned with the anchor's: the advertised key columns, else the logical
      // key's names (through the member's column map).
      std::vector<std::string> key;
      for (const std::string& k : m.key_columns) key.push_back(column(k, "key column"));
      if (key.empty())
        for (const std::string& k : logical_pk) {
          std::string c = k;
          for (const auto& [l, b] : m.columns)
            if (iequals(l, k)) c = b;
          key.push_back(column(c, "key column"));
        }
      const bool routable = !ad.surrogate && !key.empty() && key.size() == anchor.key.size() &&
                            declared_unique(t, key);
      for (const MappingAdvertisement::Access& acc : a.access)
        for (const std::string& lc : acc.columns) {
          const int li = ts.find_column(lc);
          if (li < 0)
            fail("lens.malformed-advertisement", what + " answers column '" + lc + "', which logical table '" +
                                                     ts.name + "' does not have");
          std::string bc = ts.columns[li].name;
          for (const auto& [l, b] : m.columns)
            if (iequals(l, lc)) bc = b;
          bc = column(bc, "column");
          if (!routable) continue;
          LensSlot::AuxRoute r;
          r.id = a.id;
          r.schema = basis;
          r.table = t.name;
          r.column = ts.columns[li].name;
          r.aux_column = bc;
          for (const std::string& f : acc.forms) r.forms.push_back(to_lower(f));
          for (size_t j = 0; j < key.size(); ++j) r.key.emplace_back(key[j], anchor.key[j]);
          r.anchor_qualifier = anchor_qualifier;
          out.push_back(std::move(r));
        }
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return to_lower(x.id) < to_lower(y.id); });
  return out;
}

// An EAV member of advertisement `ad` as the lens slot records it (its logical columns
// left to the caller).
LensSlot::EavMember eav_member(const TableSchema& ts, const Advertisement& ad, const Advertisement::Member& m,
                               const std::string& basis) {
  const Advertisement::Member& anchor = ad.members.front();
  LensSlot::EavMember e;
  e.schema = basis;
  e.table = m.table->schema.name;
  e.entity = m.pivot->entity;
  e.attribute = m.pivot->attribute;
  e.value = m.pivot->value;
  e.anchor_key = anchor.key[0];
  if (ad.surrogate) {
    e.surrogate = true;
    e.anchor_schema = basis;
    e.anchor_table = anchor.table->schema.name;
    if (ts.primary_key_declared && ts.primary_key.size() == 1)
      for (const auto& [l, bc] : anchor.columns)
        if (iequals(l, ts.columns[ts.primary_key[0].column].name)) e.key_backing = bc;
  }
  return e;
}

// An EAV attribute's read: the value of the pivot row keyed (entity, attribute) —
//   (select <value> from <pivot> as quereus_eav where quereus_eav.<attribute> = '<column>'
//      and quereus_eav.<entity> = <anchor qualifier>.<anchor key>)
ExprPtr eav_attribute(const Advertisement::Member& m, const Advertisement::Member& anchor, const std::string& column,
                      const std::string& basis, const std::string& anchor_qualifier) {
  const std::string alias = "quereus_eav";
  ExprPtr where = ast::binary(ast::BinaryOp::kEq, qualified_ref(alias, m.pivot->attribute), ast::string_literal(column));
  for (size_t j = 0; j < m.key.size(); ++j)
    where = ast::conjoin(std::move(where), ast::binary(ast::BinaryOp::kEq, qualified_ref(alias, m.key[j]),
                                                       qualified_ref(anchor_qualifier, anchor.key[j])));
  std::vector<ast::ResultColumn> v;
  v.push_back(ast::result_column(qualified_ref(alias, m.pivot->value)));
  return ast::scalar_subquery(
      ast::select(std::move(v), ast::table_source({basis, m.table->schema.name, {}}, alias), std::move(where)));
}

Body decomposition_body(DatabaseImpl& db, const TableSchema& ts, const Advertisement& ad, const std::string& basis) {
  Body b;
  b.anchor = ad.anchor;
  const size_t n = ts.columns.size();
  b.covered.assign(n, false);
  b.member.assign(n, "");
  const Advertisement::Member& anchor = ad.members.front();
  std::vector<int> source_of(ad.members.size(), -1);
  for (size_t mi = 0; mi < ad.members.size(); ++mi) {
    const auto& m = ad.members[mi];
    if (m.pivot) continue;
    Source s;
    s.qualifier = m.table->schema.name;
    s.schema = basis;
    s.name = m.table->schema.name;
    s.table = m.table;
    for (const ColumnSchema& c : m.table->schema.columns) s.columns.push_back(c.name);
    source_of[mi] = static_cast<int>(b.sources.size());
    b.sources.push_back(std::move(s));
  }
  const std::string& aq = b.sources[0].qualifier;
  for (const auto& m : ad.members)
    if (m.pivot && m.key.size() == 1 && anchor.key.size() == 1) {
      LensSlot::EavMember e = eav_member(ts, ad, m, basis);
      for (const auto& [l, bc] : m.columns) e.columns.push_back(l);
      b.eav.push_back(std::move(e));
    }
  auto anchor_key = [&](size_t j) { return qualified_ref(aq, anchor.key[j]); };
  b.aux = aux_routes(db, ts, ad, basis, aq);
  // One inclusion dependency per mandatory stored member but the anchor (a keyed one).
  for (size_t mi = 1; mi < ad.members.size(); ++mi) {
    const auto& m = ad.members[mi];
    if (m.pivot || m.optional || m.key.empty() || source_of[mi] < 0) continue;
    LensSlot::InclusionDependency ind{b.sources[source_of[mi]].qualifier, basis, m.table->schema.name, m.key,
                                      anchor.key, {}};
    for (const auto& [l, bc] : m.columns) ind.columns.push_back(l);
    b.inds.push_back(std::move(ind));
  }
  std::vector<std::string> logical_pk;
  if (ts.primary_key_declared)
    for (const KeyColumn& k : ts.primary_key) logical_pk.push_back(ts.columns[k.column].name);
  std::vector<ast::ResultColumn> cols;
  for (size_t i = 0; i < n; ++i) {
    const std::string& lc = ts.columns[i].name;
    ExprPtr e;
    for (size_t mi = 0; mi < ad.members.size() && !e; ++mi) {
      const auto& m = ad.members[mi];
      for (const auto& [l, bc] : m.columns) {
        if (!iequals(l, lc)) continue;
        b.member[i] = m.table->schema.name;
        if (!m.pivot) {
          e = qualified_ref(b.sources[source_of[mi]].qualifier, bc);
          break;
        }
        e = eav_attribute(m, anchor, lc, basis, aq);
        break;
      }
    }
    if (!e && !ad.surrogate) {
      // A logical key column no member names: the anchor's shared-key column in its place.
      for (size_t j = 0; j < logical_pk.size() && j < anchor.key.size(); ++j)
        if (iequals(logical_pk[j], lc)) {
          e = anchor_key(j);
          b.member[i] = anchor.table->schema.name;
        }
    }
    if (!e)
      fail("lens.uncovered-column", "logical column '" + ts.name + "." + lc +
                                        "' has no basis backing: decomposition '" + ad.id +
                                        "' advertises no member column for it");
    cols.push_back(ast::result_column(std::move(e), lc));
  }
  // anchor [inner|left] join member on member.k = anchor.k …  (a singleton key: on true)
  ast::TableSourcePtr from = ast::table_source({basis, anchor.table->schema.name, {}}, "");
  for (size_t mi = 1; mi < ad.members.size(); ++mi) {
    const auto& m = ad.members[mi];
    if (m.pivot) continue;
    auto j = std::make_unique<ast::TableSource>();
    j->kind = ast::TableSource::Kind::kJoin;
    j->join = m.optional ? ast::JoinKind::kLeft : ast::JoinKind::kInner;
    j->left = std::move(from);
    j->right = ast::table_source({basis, m.table->schema.name, {}}, "");
    ExprPtr on;
    for (size_t k = 0; k < m.key.size(); ++k)
      on = ast::conjoin(std::move(on), ast::binary(ast::BinaryOp::kEq,
                                                   qualified_ref(b.sources[source_of[mi]].qualifier, m.key[k]),
                                                   anchor_key(k)));
    if (!on) {
      auto t = std::make_unique<ast::Literal>();
      t->literal_kind = ast::LiteralKind::kTrue;
      on = std::move(t);
    }
    j->on = std::move(on);
    from = std::move(j);
  }
  b.select = ast::select(std::move(cols), std::move(from));
  return b;
}

Body name_match_body(DatabaseImpl& db, const TableSchema& ts, const std::string& basis) {
  Body b;
  const size_t n = ts.columns.size();
  b.covered.assign(n, false);
  b.member.assign(n, "");
  ResolvedRelation rel = db.find_relation(basis, ts.name);
  if (!rel.table && !rel.view)
    fail("lens.uncovered-column", "logical table '" + ts.name + "' has no basis backing: basis schema '" + basis +
                                      "' has no relation named '" + ts.name + "'");
  Source s;
  s.schema = basis;
  s.name = rel.table ? rel.table->schema.name : rel.view->name;
  s.qualifier = s.name;
  s.table = rel.table;
  s.columns = relation_column_names(db, basis, s.name);
  std::vector<ast::ResultColumn> cols;
  for (size_t i = 0; i < n; ++i) {
    const std::string& lc = ts.columns[i].name;
    auto it = std::find_if(s.columns.begin(), s.columns.end(), [&](const std::string& c) { return iequals(c, lc); });
    if (it == s.columns.end())
      fail("lens.uncovered-column", "logical column '" + ts.name + "." + lc + "' has no basis backing: '" +
                                        quoted(basis, s.name) + "' has no column '" + lc + "'");
    cols.push_back(ast::result_column(qualified_ref(s.qualifier, *it), lc));
  }
  b.select = ast::select(std::move(cols), ast::table_source({basis, s.name, {}}, ""));
  b.sources.push_back(std::move(s));
  return b;
}

void collect_sources(DatabaseImpl& db, ast::TableSource& t, std::vector<Source>& out, const std::set<std::string>& ctes) {
  if (t.kind == ast::TableSource::Kind::kJoin) {
    if (t.left) collect_sources(db, *t.left, out, ctes);
    if (t.right) collect_sources(db, *t.right, out, ctes);
    return;
  }
  if (t.kind != ast::TableSource::Kind::kTable) return;
  if (t.table.schema.empty() && ctes.count(to_lower(t.table.name))) return;
  Source s;
  s.schema = to_lower(t.table.schema);
  s.name = t.table.name;
  s.qualifier = t.alias.empty() ? t.table.name : t.alias;
  ResolvedRelation rel = db.find_relation(s.schema, s.name);
  s.table = rel.table;
  s.columns = relation_column_names(db, s.schema, s.name);
  out.push_back(std::move(s));
}

Body override_body(DatabaseImpl& db, const TableSchema& ts, const ast::DeclareLensStmt::View& ov,
                   const std::string& basis, const std::optional<Advertisement>& ad) {
  Body b;
  const size_t n = ts.columns.size();
  b.covered.assign(n, false);
  b.member.assign(n, "");
  b.select = ast::clone(*ov.select);
  ast::Select& sel = *b.select;
  const std::string where = "lens body for '" + ts.name + "'";
  if (!sel.compounds.empty() || !sel.core.values.empty() || sel.core.nested)
    fail("lens.body-shape", where + " must be a single SELECT (compound and VALUES bodies are not supported)", ov.site);
  // A name any WITH of the body declares is that CTE everywhere in the body.
  std::set<std::string> ctes;
  BodyWalk collect;
  collect.on_select = [&](ast::Select& s) {
    if (s.with)
      for (auto& c : s.with->ctes) ctes.insert(to_lower(c.name));
  };
  collect.select(sel);
  // Every source names the basis (or a CTE): bare names are qualified with it.
  BodyWalk qualify;
  qualify.on_source = [&](ast::TableSource& t) {
    if (t.table.schema.empty()) {
      if (ctes.count(to_lower(t.table.name))) return;
      ResolvedRelation rel = db.find_relation(basis, t.table.name);
      if (!rel.table && !rel.view)
        fail("lens.body-escapes-basis", where + " reads '" + t.table.name + "', which is not a relation of its basis '" +
                                            basis + "'",
             t.site);
      t.table.schema = basis;
      return;
    }
    if (!iequals(t.table.schema, basis))
      fail("lens.body-escapes-basis", where + " reads '" + t.table.schema + "." + t.table.name +
                                          "', outside its basis '" + basis + "'",
           t.site);
    t.table.schema = basis;
  };
  qualify.select(sel);
  if (sel.core.from) collect_sources(db, *sel.core.from, b.sources, ctes);
  // A bare JOIN … USING column names the first source carrying it (in a plain query it
  // is ambiguous; a lens body is read as the spec's examples write it).
  std::vector<std::string> using_names;
  std::function<void(const ast::TableSource&)> usings = [&](const ast::TableSource& t) {
    if (t.kind != ast::TableSource::Kind::kJoin) return;
    usings(*t.left);
    usings(*t.right);
    for (const std::string& u : t.using_columns) using_names.push_back(u);
  };
  if (sel.core.from) usings(*sel.core.from);
  if (!using_names.empty()) {
    auto qualify_using = [&](ExprPtr& e) {
      substitute(e, [&](const ast::ColumnRef& r) -> ExprPtr {
        if (!r.table.empty() || std::none_of(using_names.begin(), using_names.end(),
                                             [&](const std::string& u) { return iequals(u, r.column); }))
          return nullptr;
        for (const Source& src : b.sources)
          for (const std::string& c : src.columns)
            if (iequals(c, r.column)) return qualified_ref(src.qualifier, c);
        return nullptr;
      });
    };
    for (ast::ResultColumn& rc : sel.core.columns)
      if (rc.kind == ast::ResultColumn::Kind::kExpr) {
        bool bare = rc.alias.empty() && rc.expr->kind == ast::ExprKind::kColumn &&
                    static_cast<const ast::ColumnRef&>(*rc.expr).table.empty() &&
                    std::any_of(using_names.begin(), using_names.end(), [&](const std::string& u) {
                      return iequals(u, static_cast<const ast::ColumnRef&>(*rc.expr).column);
                    });
        std::string name = bare ? static_cast<const ast::ColumnRef&>(*rc.expr).column : "";
        qualify_using(rc.expr);
        if (bare) rc.alias = name;
      }
    qualify_using(sel.core.where);
  }
  // Coverage, by output name.
  std::vector<std::optional<ast::ResultColumn>> by_column(n);
  auto cover = [&](ast::ResultColumn rc, const std::string& name, const SourceSite& site) {
    int i = ts.find_column(name);
    if (i < 0)
      fail("lens.body-shape", where + " outputs '" + name + "', which is not a column of logical table '" + ts.name + "'",
           site);
    if (by_column[i])
      fail("lens.body-shape", where + " outputs logical column '" + ts.columns[i].name + "' more than once", site);
    if (rc.alias.empty() && !(rc.expr && rc.expr->kind == ast::ExprKind::kColumn &&
                              iequals(static_cast<const ast::ColumnRef&>(*rc.expr).column, ts.columns[i].name)))
      rc.alias = ts.columns[i].name;
    by_column[i] = std::move(rc);
  };
  for (ast::ResultColumn& rc : sel.core.columns) {
    if (rc.kind == ast::ResultColumn::Kind::kExpr) {
      std::string name = rc.alias;
      if (name.empty()) {
        if (rc.expr->kind != ast::ExprKind::kColumn)
          fail("lens.body-shape", where + ": the computed term '" + expr_to_string(*rc.expr) +
                                      "' maps to no logical column; alias it to the column it computes (… as <column>)",
               rc.site);
        name = static_cast<const ast::ColumnRef&>(*rc.expr).column;
      }
      SourceSite site = rc.site;
      cover(std::move(rc), name, site);
      continue;
    }
    for (const Source& s : b.sources) {
      if (rc.kind == ast::ResultColumn::Kind::kTableStar && !iequals(rc.table, s.qualifier)) continue;
      for (const std::string& c : s.columns) cover(ast::result_column(qualified_ref(s.qualifier, c)), c, rc.site);
    }
  }
  // Override composition with an advertisement (spec/lens.md "Override composition with
  // an advertisement"): a sparse override (one that leaves columns to gap-fill) stays
  // inside the advertised decomposition — its FROM reads only the decomposition's members
  // — and an uncovered column is filled from the member the advertisement names for it,
  // re-qualified to that member's alias in the FROM. A full override bypasses the
  // advertisement. Every column keeps the advertised member as its provenance.
  const bool sparse = std::any_of(by_column.begin(), by_column.end(), [](const auto& c) { return !c; });
  auto member_of = [&](const std::string& table) -> const Advertisement::Member* {
    if (!ad) return nullptr;
    for (const Advertisement::Member& m : ad->members)
      if (iequals(m.table->schema.name, table)) return &m;
    return nullptr;
  };
  if (ad)
    for (size_t i = 0; i < n; ++i)
      for (const Advertisement::Member& m : ad->members)
        for (const auto& [l, bc] : m.columns)
          if (iequals(l, ts.columns[i].name)) b.member[i] = m.table->schema.name;
  // A covered column reading a member's column directly (a rename) keeps that member.
  for (size_t i = 0; i < n && ad; ++i) {
    if (!b.member[i].empty() || !by_column[i] || !by_column[i]->expr ||
        by_column[i]->expr->kind != ast::ExprKind::kColumn)
      continue;
    const auto& ref = static_cast<const ast::ColumnRef&>(*by_column[i]->expr);
    for (const Source& s : b.sources)
      if ((ref.table.empty() || iequals(ref.table, s.qualifier)) && member_of(s.name) &&
          std::any_of(s.columns.begin(), s.columns.end(), [&](const std::string& c) { return iequals(c, ref.column); })) {
        b.member[i] = member_of(s.name)->table->schema.name;
        break;
      }
  }
  if (ad && sparse)
    for (const Source& s : b.sources)
      if (!s.table || s.schema != basis || !member_of(s.name))
        fail("lens.override-outside-decomposition",
             where + " leaves columns to the advertised decomposition '" + ad->id + "' (anchor '" + ad->anchor +
                 "') but reads '" + quoted(s.schema, s.name) +
                 "', which is not one of its members; a body that reads other relations must cover every column",
             ov.site);
  // Gap-fill: an uncovered logical column takes the advertised member's column, else
  // name-matches a column of the FROM.
  std::vector<ast::ResultColumn> cols;
  for (size_t i = 0; i < n; ++i) {
    if (by_column[i]) {
      b.covered[i] = true;
      cols.push_back(std::move(*by_column[i]));
      continue;
    }
    const std::string& lc = ts.columns[i].name;
    bool filled = false;
    if (ad)
      for (const Advertisement::Member& m : ad->members)
        for (const auto& [l, bc] : m.columns) {
          if (filled || !iequals(l, lc)) continue;
          if (m.pivot) {
            // An EAV attribute: its correlated read, keyed by the anchor's alias in the
            // FROM; written as the decomposition writes it.
            const Advertisement::Member& anchor = ad->members.front();
            auto src = std::find_if(b.sources.begin(), b.sources.end(), [&](const Source& s) {
              return s.table && iequals(s.name, anchor.table->schema.name);
            });
            if (src == b.sources.end() || m.key.size() != 1 || anchor.key.size() != 1)
              fail("lens.uncovered-column", "logical column '" + ts.name + "." + lc + "' is an EAV attribute of member '" +
                                                m.relation_id + "', keyed by the anchor '" + ad->anchor + "' (table '" +
                                                anchor.table->schema.name + "'), which " + where +
                                                " does not read; add the anchor to the FROM or cover the column",
                   ov.site);
            cols.push_back(ast::result_column(eav_attribute(m, anchor, lc, basis, src->qualifier), lc));
            auto e = std::find_if(b.eav.begin(), b.eav.end(),
                                  [&](const LensSlot::EavMember& x) { return iequals(x.table, m.table->schema.name); });
            if (e == b.eav.end()) {
              b.eav.push_back(eav_member(ts, *ad, m, basis));
              e = b.eav.end() - 1;
            }
            e->columns.push_back(lc);
            filled = true;
            continue;
          }
          auto src = std::find_if(b.sources.begin(), b.sources.end(), [&](const Source& s) {
            return s.table && iequals(s.name, m.table->schema.name);
          });
          if (src == b.sources.end())
            fail("lens.uncovered-column", "logical column '" + ts.name + "." + lc + "' is backed by member '" +
                                              m.relation_id + "' (table '" + m.table->schema.name +
                                              "') of decomposition '" + ad->id + "', which " + where +
                                              " does not read; add it to the FROM or cover the column",
                 ov.site);
          cols.push_back(ast::result_column(qualified_ref(src->qualifier, bc), lc));
          filled = true;
        }
    if (filled) continue;
    for (const Source& s : b.sources) {
      auto it = std::find_if(s.columns.begin(), s.columns.end(), [&](const std::string& c) { return iequals(c, lc); });
      if (it == s.columns.end()) continue;
      cols.push_back(ast::result_column(qualified_ref(s.qualifier, *it), lc));
      filled = true;
      break;
    }
    if (!filled) {
      std::string from;
      for (const Source& s : b.sources) from += (from.empty() ? "" : ", ") + quoted(s.schema, s.name);
      fail("lens.uncovered-column", "logical column '" + ts.name + "." + lc + "' has no basis backing: " + where +
                                        " does not cover it and its FROM (" + from + ") has no column '" + lc + "'",
           ov.site);
    }
  }
  sel.core.columns = std::move(cols);
  // A sparse override rooted at the anchor writes as the decomposition does.
  if (ad && sparse && !b.sources.empty() && iequals(b.sources.front().name, ad->members.front().table->schema.name))
    b.anchor = ad->anchor;
  return b;
}

// ------------------------------------------------------------------ the prover

// Whether a body column of type `body` satisfies a logical column declared `logical`.
bool type_conforms(qrs_logical_type logical, qrs_logical_type body) {
  if (logical == QRS_LT_ANY || body == QRS_LT_ANY || logical == body) return true;
  auto numeric = [](qrs_logical_type t) {
    return t == QRS_LT_INTEGER || t == QRS_LT_REAL || t == QRS_LT_NUMERIC || t == QRS_LT_BOOLEAN;
  };
  if ((logical == QRS_LT_REAL || logical == QRS_LT_NUMERIC) && numeric(body)) return true;
  if (logical == QRS_LT_INTEGER && body == QRS_LT_BOOLEAN) return true;
  return false;
}

struct ColumnFacts {
  LensColumn::Inverse inverse = LensColumn::Inverse::kNone;
  std::shared_ptr<TableEntry> table;  // the basis relation it writes (put target)
  int column = -1;                    // its basis column (-1: none, or several puts)
  int source = -1;                    // index into Body::sources
  bool bijective = false;             // authored: forward/inverse proved a bijection
};

LensAdvisory finding(const TableSchema& ts, std::string code, std::string message, bool error,
                     std::string constraint = "", std::string column = "") {
  LensAdvisory a;
  a.table = ts.name;
  a.code = std::move(code);
  a.message = std::move(message);
  a.error = error;
  a.constraint = std::move(constraint);
  a.column = std::move(column);
  return a;
}

// The display name of a key constraint: "primary key", the UNIQUE's name, or "unique".
std::string key_site(const IndexSchema* ix) {
  if (!ix) return "primary key";
  return ix->constraint_named ? ix->name : "unique";
}

std::string band(const TableEntry* t) {
  if (!t || !t->row_count) return "unknown";
  int64_t n = *t->row_count;
  return n == 0 ? "empty" : n < 1000 ? "small" : n < 1000000 ? "medium" : "large";
}

}  // namespace

namespace {

// Compiles one logical table: composes its body, then runs the prover's checks in order,
// each adding diagnostics and attaching what it can enforce to the slot.
class LensTableCompiler {
 public:
  LensTableCompiler(DatabaseImpl& db, const ast::DeclareSchemaStmt& logical, const ast::CreateTableStmt& table,
                    const ast::DeclareLensStmt* lens, const std::string& basis)
      : db(db), logical(logical), table(table), lens(lens), basis(basis), x(to_lower(logical.name)),
        ts(build_table_schema(db, table, x)), n(ts.columns.size()) {}

  CompiledLensTable run() {
    compose_body();
    analyze_body();
    check_conformance();
    check_authored_inverses();
    check_writable_intent();
    check_key_reconstructibility();
    attach_checks();
    attach_keys();
    attach_foreign_keys();
    attach_parent_keys();
    check_access_patterns();
    note_partial_override();
    record_dispositions();
    record_snapshot();
    view->lens = slot;
    return std::move(out);
  }

 private:
  // Composes the effective body: the override, the advertised decomposition or the name
  // match; the view the logical table is, carrying the slot.
  void compose_body() {
    if (lens)
      for (const auto& v : lens->views)
        if (iequals(v.name, ts.name)) ov = &v;
    if (ov) body = override_body(db, ts, *ov, basis, find_advertisement(db, basis, ts, /*for_override=*/true));
    else if (auto ad = find_advertisement(db, basis, ts)) body = decomposition_body(db, ts, *ad, basis);
    else body = name_match_body(db, ts, basis);

    slot = std::make_shared<LensSlot>();
    slot->logical_schema = x;
    slot->table = ts.name;
    slot->basis_schema = basis;
    slot->anchor = body.anchor;
    slot->eav = body.eav;
    slot->aux_routes = body.aux;
    slot->inds = body.inds;
    {
      auto copy = ast::clone(table);
      slot->spec.reset(static_cast<ast::CreateTableStmt*>(copy.release()));
    }
    auto def = std::make_shared<ast::CreateViewStmt>();
    def->view.name = ts.name;
    for (const ColumnSchema& c : ts.columns) def->columns.push_back(c.name);
    def->select = ast::clone(sel());
    slot->effective_sql = select_to_string(*def->select);
    view = std::make_shared<ViewEntry>();
    view->schema_name = x;
    view->name = ts.name;
    view->columns = def->columns;
    view->sql = statement_to_string(*def);
    view->tags = ts.tags;
    view->definition = def;
    view->lens = slot;  // the analyses below see a lens view (an advertised decomposition's writes)
    out.view = view;
  }

  // What the body writes where, and its types, nullability and keys.
  void analyze_body() {
    single = sel().core.from && sel().core.from->kind == ast::TableSource::Kind::kTable &&
                        sel().core.group_by.empty() && !sel().core.having && !sel().core.distinct && !sel().limit &&
                        !sel().offset && !sel().with && body.sources.size() == 1 && body.sources[0].table;
    ViewWriteSurface surface = describe_view_writes(db, *view);
    facts.assign(n, ColumnFacts{});
    for (size_t i = 0; i < n; ++i) {
      const ast::ResultColumn& rc = sel().core.columns[i];
      ColumnFacts& f = facts[i];
      if (surface.ok && i < surface.sites.size() && surface.sites[i].table) {
        f.table = surface.sites[i].table;
        f.column = surface.sites[i].column;
        for (size_t s = 0; s < body.sources.size(); ++s)
          if (body.sources[s].table == f.table) f.source = static_cast<int>(s);
      }
      if (!rc.inverse.empty()) f.inverse = LensColumn::Inverse::kAuthored;
      else if (f.table) f.inverse = LensColumn::Inverse::kInferred;
    }
    Planner planner(db);
    QueryPlan qp = planner.plan_select(sel(), nullptr);
    attrs = qp.root->columns;
    props = derive_properties(*qp.root);
  }

  // Column conformance: each logical column's declared type and nullability against what
  // the body yields.
  void check_conformance() {
    for (size_t i = 0; i < n && i < attrs.size(); ++i) {
      const ColumnSchema& c = ts.columns[i];
      if (!type_conforms(c.logical_type, attrs[i].type))
        diags.push_back(finding(ts, "lens.type-mismatch",
                                "logical column '" + ts.name + "." + c.name + "' is declared " +
                                    logical_type_name(c.logical_type) + " but its lens body yields " + logical_type_name(attrs[i].type),
                                true, "", c.name));
      if (c.not_null && attrs[i].nullable)
        diags.push_back(finding(ts, "lens.nullability-mismatch",
                                "logical column '" + ts.name + "." + c.name +
                                    "' is NOT NULL but its lens body can yield NULL (declare it NULL, or map it to a "
                                    "NOT NULL basis expression)",
                                true, "", c.name));
    }
  }

  // Authored inverses: PutGet by enumeration, bijectivity over the basis domain.
  void check_authored_inverses() {
    for (size_t i = 0; i < n; ++i) {
      if (facts[i].inverse != LensColumn::Inverse::kAuthored || !single) continue;
      const ast::ResultColumn& rc = sel().core.columns[i];
      const ColumnSchema& c = ts.columns[i];
      if (rc.inverse.size() != 1 || !facts[i].table || facts[i].column < 0) continue;
      const std::string target = facts[i].table->schema.columns[facts[i].column].name;
      const ast::Expr& put = *rc.inverse[0].value;
      // Forward of basis value b; inverse of logical value v (nullopt: not const-foldable).
      auto forward = [&](const Value& b) -> std::optional<Value> {
        ExprPtr e = ast::clone(*rc.expr);
        bool other = false;
        substitute(e, [&](const ast::ColumnRef& r) -> ExprPtr {
          if (iequals(r.column, target)) return literal_of(b);
          other = true;
          return nullptr;
        });
        if (other) return std::nullopt;
        return eval_const(db, *e);
      };
      auto inverse = [&](const Value& v) -> std::optional<Value> {
        ExprPtr e = ast::clone(put);
        bool other = false;
        substitute(e, [&](const ast::ColumnRef& r) -> ExprPtr {
          if (iequals(r.table, "new") && iequals(r.column, rc.alias.empty() ? c.name : rc.alias)) return literal_of(v);
          other = true;
          return nullptr;
        });
        if (other) return std::nullopt;
        return eval_const(db, *e);
      };
      if (auto domain = enumerable_domain(db, ts.checks, c.name)) {
        for (const Value& v : *domain) {
          auto b = inverse(v);
          if (!b) break;
          auto back = forward(*b);
          if (!back) break;
          if (!same_value(*back, v)) {
            diags.push_back(finding(ts, "lens.putget-violation",
                                    "writing " + sql_literal(v) + " to logical column '" + ts.name + "." + c.name +
                                        "' stores " + sql_literal(*b) + " in '" + target + "', which reads back as " +
                                        sql_literal(*back),
                                    true, "", c.name));
            break;
          }
        }
      }
      if (auto domain = enumerable_domain(db, facts[i].table->schema.checks, target)) {
        bool bijective = !domain->empty();
        // A CHECK passes NULL: a nullable column's domain holds it too.
        if (!facts[i].table->schema.columns[facts[i].column].not_null) domain->push_back(Value());
        std::vector<Value> images;
        for (const Value& b : *domain) {
          auto f = forward(b);
          auto back = f ? inverse(*f) : std::nullopt;
          if (!f || !back || !same_value(*back, b) ||
              std::any_of(images.begin(), images.end(), [&](const Value& w) { return same_value(w, *f); })) {
            bijective = false;
            break;
          }
          images.push_back(*f);
        }
        facts[i].bijective = bijective;
      }
    }
  }

  // Writable intent: a column tagged quereus.lens.writable needs an inverse.
  void check_writable_intent() {
    for (size_t i = 0; i < n; ++i) {
      if (!single || facts[i].inverse != LensColumn::Inverse::kNone) continue;
      if (tag_value(ts.columns[i].tags, "quereus.lens.writable") == "true")
        diags.push_back(finding(ts, "lens.non-invertible",
                                "logical column '" + ts.name + "." + ts.columns[i].name +
                                    "' is tagged quereus.lens.writable = true, but its lens body '" +
                                    expr_to_string(*sel().core.columns[i].expr) +
                                    "' has no inverse (author one: … with inverse (<basis column> = <expr over new." +
                                    ts.columns[i].name + ">))",
                                true, "", ts.columns[i].name));
    }
  }

  // Key reconstructibility: the primary key must map back to basis values (a bare column,
  // whose written value is the basis value, or a proved bijection); then getput-lossy: an
  // authored column whose forward is not proved injective (a read-only table never runs
  // the put, so it has nothing to warn about).
  void check_key_reconstructibility() {
    if (ts.primary_key_declared)
      for (const KeyColumn& k : ts.primary_key)
        if (!reconstructible(k.column)) {
          read_only = true;
          slot->read_only = "its primary key column '" + ts.columns[k.column].name + "' is not reconstructible at the " +
                            "lens boundary (" +
                            (facts[k.column].inverse == LensColumn::Inverse::kAuthored
                                 ? std::string("its authored inverse is not proved a bijection")
                                 : "it is computed by '" + expr_to_string(*sel().core.columns[k.column].expr) + "'") +
                            ")";
          LensAdvisory a = finding(ts, "lens.pk-not-reconstructible",
                                   "logical table '" + ts.name + "' is read-only: " + slot->read_only, false,
                                   "primary key", ts.columns[k.column].name);
          a.facts = a.code + "|" + ts.name + "|" + ts.columns[k.column].name;
          diags.push_back(std::move(a));
          break;
        }
    if (!read_only)
      for (size_t i = 0; i < n; ++i) {
        if (!single || facts[i].inverse != LensColumn::Inverse::kAuthored || facts[i].bijective) continue;
        LensAdvisory a = finding(ts, "lens.getput-lossy",
                                 "logical column '" + ts.name + "." + ts.columns[i].name +
                                     "' writes through an authored inverse whose forward is not proved injective: a "
                                     "write-back normalizes the basis value to the inverse's representative",
                                 false, "", ts.columns[i].name);
        std::string domain;
        if (auto d = enumerable_domain(db, ts.checks, ts.columns[i].name))
          for (const Value& v : *d) domain += sql_literal(v) + ",";
        a.facts = a.code + "|" + ts.name + "|" + ts.columns[i].name + "|" + domain;
        diags.push_back(std::move(a));
      }
  }

  // CHECK constraints: realizable when every column they read has a write path
  // (an authored one only on a single-source body); enforced as a CHECK over the basis
  // row of the member that owns every column they read.
  void attach_checks() {
    for (const CheckSchema& ck : ts.checks) {
      std::set<int> cols;
      for (const std::string& name : WriteRowWalk::columns(*ck.expr, ts.name, write_row_hooks()))
        cols.insert(ts.find_column(name));
      bool realizable = true;
      std::string why;
      for (int c : cols) {
        if (facts[c].inverse == LensColumn::Inverse::kNone) {
          realizable = false;
          why = "column '" + ts.columns[c].name + "' is computed by '" + expr_to_string(*sel().core.columns[c].expr) +
                "' and has no write path";
        } else if (facts[c].inverse == LensColumn::Inverse::kAuthored && !single) {
          realizable = false;
          why = "column '" + ts.columns[c].name +
                "' writes through an authored inverse on a multi-source body, where its forward cannot be evaluated "
                "over one basis row";
        }
      }
      std::string site = ck.named ? ck.name : "check";
      if (!realizable) {
        diags.push_back(finding(ts, "lens.unrealizable-constraint",
                                "CHECK constraint " + site + " (" + expr_to_string(*ck.expr) + ") of logical table '" +
                                    ts.name + "' can be neither proved nor enforced: " + why,
                                true, site));
        continue;
      }
      if (read_only) continue;
      ExprPtr e = ast::clone(*ck.expr);
      int source = -1;
      bool ok = true;
      // Top level and correlated from inside a subquery alike, a written-row column becomes
      // new.<its basis term>; what a nested FROM binds stays (lens.md "Row-local").
      WriteRowWalk::Hooks hooks = write_row_hooks();
      hooks.on_ref = [&](const ast::ColumnRef& r) -> ExprPtr {
        ExprPtr t = new_term(ts.find_column(r.column), "new", source);
        if (!t) ok = false;
        return t;
      };
      WriteRowWalk(ts.name, std::move(hooks)).run(e);
      // A CHECK reading no column of the row rides the writes of the body's first relation.
      if (ok && cols.empty() && !body.sources.empty()) source = 0;
      if (!ok || source < 0) {
        std::string spans_why;
        if (!attach_spanning_check(ck, cols, site, spans_why))
          diags.push_back(finding(ts, "lens.unrealizable-constraint",
                                  "CHECK constraint " + site + " (" + expr_to_string(*ck.expr) + ") of logical table '" +
                                      ts.name + "' reads columns of several basis members and cannot be enforced: " +
                                      spans_why,
                                  true, site));
        continue;
      }
      LensCheck lc;
      lc.table = relation_key(source);
      lc.name = ck.name;
      lc.text = expr_to_string(*ck.expr);
      lc.expr = std::shared_ptr<const ast::Expr>(e.release());
      lc.on_insert = ck.on_insert;
      lc.on_update = ck.on_update;
      lc.on_delete = ck.on_delete;
      slot->checks.push_back(std::move(lc));
      if (!cols.empty() && padded(source) && !passes_when_absent(ck)) attach_absent_member_check(ck, source);
    }
  }

  // Whether body source `s` is an outer join's padded side (an optional member): a logical
  // row may have no row of it, and then no write of it carries its CHECKs.
  bool padded(int s) {
    bool found = false;
    std::function<void(const ast::TableSource&)> walk = [&](const ast::TableSource& t) {
      if (t.kind != ast::TableSource::Kind::kJoin) return;
      walk(*t.left);
      const ast::TableSource& r = *t.right;
      if (t.join == ast::JoinKind::kLeft && r.kind == ast::TableSource::Kind::kTable &&
          iequals(r.alias.empty() ? r.table.name : r.alias, body.sources[s].qualifier))
        found = true;
      walk(r);
    };
    if (sel().core.from) walk(*sel().core.from);
    return found;
  }

  // The (member column, anchor column) equalities of the join ON that stitches body
  // source `s` to the anchor (source 0); empty when there is none.
  std::vector<std::pair<std::string, std::string>> stitch_to_anchor(int s) {
    std::vector<std::pair<std::string, std::string>> out;
    if (s == 0) return out;
    const std::string& mq = body.sources[s].qualifier;
    const std::string& aq = body.sources[0].qualifier;
    std::function<void(const ast::TableSource&)> walk = [&](const ast::TableSource& t) {
      if (t.kind != ast::TableSource::Kind::kJoin) return;
      walk(*t.left);
      const ast::TableSource& r = *t.right;
      if (r.kind == ast::TableSource::Kind::kTable && iequals(r.alias.empty() ? r.table.name : r.alias, mq) && t.on) {
        std::function<void(const ast::Expr&)> conj = [&](const ast::Expr& e) {
          if (e.kind != ast::ExprKind::kBinary) return;
          auto& b = static_cast<const ast::BinaryExpr&>(e);
          if (b.op == ast::BinaryOp::kAnd) {
            conj(*b.left);
            conj(*b.right);
            return;
          }
          if (b.op != ast::BinaryOp::kEq || b.left->kind != ast::ExprKind::kColumn ||
              b.right->kind != ast::ExprKind::kColumn)
            return;
          auto& l = static_cast<const ast::ColumnRef&>(*b.left);
          auto& rr = static_cast<const ast::ColumnRef&>(*b.right);
          if (iequals(l.table, mq) && iequals(rr.table, aq)) out.emplace_back(l.column, rr.column);
          else if (iequals(rr.table, mq) && iequals(l.table, aq)) out.emplace_back(rr.column, l.column);
        };
        conj(*t.on);
      }
      walk(r);
    };
    if (sel().core.from) walk(*sel().core.from);
    return out;
  }

  // Whether a CHECK holds (or is unknown, which passes) when every column it reads is NULL:
  // the image of a logical row whose optional member is absent.
  bool passes_when_absent(const CheckSchema& ck) {
    ExprPtr e = ast::clone(*ck.expr);
    WriteRowWalk::Hooks hooks = write_row_hooks();
    hooks.on_ref = [&](const ast::ColumnRef&) -> ExprPtr { return ast::null_literal(); };
    WriteRowWalk(ts.name, std::move(hooks)).run(e);
    std::optional<Value> r = eval_const(db, *e);
    bool null = false;
    return r && (r->truthy(&null) || null);
  }

  // A CHECK over an optional member's columns that an absent member would violate
  // (`check (coalesce(c, 0) > 0)`): the member's own writes do not see a logical row that
  // leaves the member absent — an INSERT that supplies none of its columns writes no row
  // of it, an UPDATE setting them all NULL deletes its row. Such a row is checked over the
  // logical row at COMMIT (lens.md "Row-local": the CHECK "fires on every insert/update
  // through the lens"): on the anchor's INSERT (written for every logical row) and on the
  // member's DELETE (an emptied member; a logical DELETE leaves no row to check):
  //   not exists (select 1 from x.T as _c where _c.<k> = new.<anchor k> / old.<member k> … and not (<check>))
  void attach_absent_member_check(const CheckSchema& ck, int member) {
    if (ts.primary_key.empty() || !ck.on_insert) return;
    const std::vector<LensRelationBacking> backing = relation_backing();
    auto attach = [&](int source, const char* image, bool on_insert, bool on_delete) {
      ExprPtr where;
      const std::vector<std::pair<std::string, std::string>> stitch = stitch_to_anchor(source);
      for (const KeyColumn& k : ts.primary_key) {
        const std::string& logical_name = ts.columns[k.column].name;
        std::string basis_column, anchor_column;
        for (const auto& [b, l] : backing[source].columns)
          if (iequals(l, logical_name)) basis_column = b;
        for (const auto& [b, l] : backing[0].columns)
          if (iequals(l, logical_name)) anchor_column = b;
        ExprPtr term;
        if (!basis_column.empty()) {
          term = ast::column_ref(image, basis_column);
        } else if (!anchor_column.empty() && !stitch.empty() && body.sources[0].table) {
          // A member without the logical key (a surrogate stitch): the key is read from the
          // anchor row the member's stitch key names —
          //   (select <anchor column> from <anchor> as _k where _k.<stitch> = old.<member stitch> …)
          ExprPtr on;
          for (const auto& [mc, ac] : stitch)
            on = ast::conjoin(std::move(on), ast::binary(ast::BinaryOp::kEq, ast::column_ref("_k", ac),
                                                          ast::column_ref(image, mc)));
          std::vector<ast::ResultColumn> rc;
          rc.push_back(ast::result_column(ast::column_ref("_k", anchor_column)));
          term = ast::scalar_subquery(ast::select(
              std::move(rc), ast::table_source({body.sources[0].schema, body.sources[0].name, {}}, "_k"), std::move(on)));
        } else {
          return;
        }
        where = ast::conjoin(std::move(where),
                             ast::binary(ast::BinaryOp::kEq, ast::column_ref("_c", logical_name), std::move(term)));
      }
      slot->checks.push_back(
          logical_row_check(ck, std::move(where), relation_key(source), on_insert, /*on_update=*/false, on_delete));
    };
    attach(0, "new", true, false);
    if (ck.on_update) attach(member, "old", false, true);
  }

  // The CHECK judged on the logical row that `where` finds (over `_c`, the logical table),
  // attached to `relation`:
  //   not exists (select 1 from x.T as _c where <where> and not (<the CHECK over _c>))
  // NOT (NULL) selects nothing: a CHECK that is unknown passes, as a CHECK does.
  LensCheck logical_row_check(const CheckSchema& ck, ExprPtr where, std::string relation, bool on_insert,
                              bool on_update, bool on_delete) {
    ExprPtr e = ast::clone(*ck.expr);
    WriteRowWalk::Hooks hooks = write_row_hooks();
    hooks.on_ref = [&](const ast::ColumnRef& r) -> ExprPtr {
      return ast::column_ref("_c", ts.columns[ts.find_column(r.column)].name);
    };
    WriteRowWalk(ts.name, std::move(hooks)).run(e);
    where = ast::conjoin(std::move(where), ast::logical_not(std::move(e)));
    std::vector<ast::ResultColumn> rcs;
    rcs.push_back(ast::result_column(ast::integer_literal(1)));
    auto q = ast::select(std::move(rcs), ast::table_source({x, ts.name, {}}, "_c"), std::move(where));
    LensCheck lc;
    lc.table = std::move(relation);
    lc.name = ck.name;
    lc.text = expr_to_string(*ck.expr);
    lc.expr = std::shared_ptr<const ast::Expr>(ast::logical_not(ast::exists(std::move(q))).release());
    lc.on_insert = on_insert;
    lc.on_update = on_update;
    lc.on_delete = on_delete;
    return lc;
  }

  // A CHECK reading columns of several members: no member's row holds them all, so it is
  // evaluated over the logical row after the statement's writes to every member — a
  // check with a subquery, which the engine defers to commit — attached to each member
  // that backs one of its columns (a write to any of them re-checks the row):
  //   not exists (select 1 from x.T as _c where _c.<k> = new.<the member's copy of k> …
  //               and not (<the CHECK over _c>))
  // False, with `why`, when a member does not carry the logical primary key.
  bool attach_spanning_check(const CheckSchema& ck, const std::set<int>& cols, const std::string& site,
                             std::string& why) {
    if (ts.primary_key.empty()) {
      why = "the logical table has no primary key to find the written row by";
      return false;
    }
    std::set<int> members;
    for (int c : cols)
      if (facts[c].source >= 0) members.insert(facts[c].source);
    if (members.size() < 2) {
      why = "its columns do not map to basis columns";
      return false;
    }
    const std::vector<LensRelationBacking> backing = relation_backing();
    std::vector<LensCheck> attached;
    for (int m : members) {
      ExprPtr where;
      for (const KeyColumn& k : ts.primary_key) {
        const std::string& logical_name = ts.columns[k.column].name;
        std::string basis_column;
        for (const auto& [b, l] : backing[m].columns)
          if (iequals(l, logical_name)) {
            basis_column = b;
            break;
          }
        if (basis_column.empty()) {
          why = "basis member '" + relation_key(m) + "' does not carry the primary key column '" + logical_name + "'";
          return false;
        }
        where = ast::conjoin(std::move(where), ast::binary(ast::BinaryOp::kEq, ast::column_ref("_c", logical_name),
                                                           ast::column_ref("new", basis_column)));
      }
      attached.push_back(
          logical_row_check(ck, std::move(where), relation_key(m), ck.on_insert, ck.on_update, ck.on_delete));
    }
    for (LensCheck& lc : attached) slot->checks.push_back(std::move(lc));
    return true;
  }

  // Keys: proved by the body or by bijection transport onto a declared basis key;
  // otherwise enforced at commit by a count over the logical table.
  void attach_keys() {
    std::vector<Key> keys;
    if (ts.primary_key_declared) {
      Key k;
      for (const KeyColumn& c : ts.primary_key) k.cols.push_back(c.column);
      k.action = ts.pk_conflict;
      keys.push_back(std::move(k));
    }
    for (const IndexSchema& ix : ts.indexes) {
      if (!ix.unique || !ix.constraint) continue;
      Key k;
      for (const IndexColumn& c : ix.columns) k.cols.push_back(c.column);
      k.ix = &ix;
      k.action = ix.on_conflict;
      keys.push_back(std::move(k));
    }
    for (const Key& key : keys) attach_key(key);
  }

  struct Key {
    std::vector<int> cols;
    const IndexSchema* ix = nullptr;  // null: the primary key
    std::optional<qrs_conflict> action;
  };
  static bool resolves(const std::optional<qrs_conflict>& a) {
    return a && (*a == QRS_CONFLICT_REPLACE || *a == QRS_CONFLICT_IGNORE);
  }

  void attach_key(const Key& key) {
    const std::string site = key_site(key.ix);
    std::string names;
    for (int c : key.cols) names += (names.empty() ? "" : ", ") + ts.columns[c].name;
    // Realizable: every key column has a write path (an authored one proved bijective).
    bool realizable = true;
    for (int c : key.cols)
      if (facts[c].inverse == LensColumn::Inverse::kNone ||
          (facts[c].inverse == LensColumn::Inverse::kAuthored && !facts[c].bijective))
        realizable = false;
    if (!realizable) {
      if (key.ix)
        diags.push_back(finding(ts, "lens.unrealizable-constraint",
                                "UNIQUE (" + names + ") of logical table '" + ts.name +
                                    "' reads a column with no proven write path, so it can be neither proved nor "
                                    "enforced",
                                true, site));
      return;  // a primary key: the table is read-only (above)
    }
    if (read_only) return;  // nothing is written through it: no enforcement to classify
    // The basis columns the key writes, all in one relation.
    std::shared_ptr<TableEntry> target;
    std::vector<int> mapped;
    bool one_relation = true;
    for (int c : key.cols) {
      if (!facts[c].table || facts[c].column < 0 || (target && facts[c].table != target) || !reconstructible(c))
        one_relation = false;
      else {
        target = facts[c].table;
        mapped.push_back(facts[c].column);
      }
    }
    // The declared basis keys over those columns: (columns, action, not null).
    struct BasisKey {
      std::vector<int> cols;
      std::optional<qrs_conflict> action;
      bool not_null = true;
    };
    std::vector<BasisKey> basis_keys;
    if (one_relation && target) {
      const TableSchema& bs = target->schema;
      if (bs.primary_key_declared) {
        BasisKey bk;
        for (const KeyColumn& c : bs.primary_key) {
          bk.cols.push_back(c.column);
          bk.not_null = bk.not_null && bs.columns[c.column].not_null;
        }
        bk.action = bs.pk_conflict;
        basis_keys.push_back(bk);
      }
      for (const IndexSchema& ix : bs.indexes)
        if (ix.unique && !ix.where) {
          BasisKey bk;
          for (const IndexColumn& c : ix.columns) {
            bk.cols.push_back(c.column);
            bk.not_null = bk.not_null && bs.columns[c.column].not_null;
          }
          bk.action = ix.on_conflict;
          basis_keys.push_back(bk);
        }
    }
    std::set<int> mapped_set(mapped.begin(), mapped.end());
    std::vector<const BasisKey*> governing;
    bool transport = false;
    // A nullable basis UNIQUE within the key's columns enforces it at row time (its index,
    // NULL-distinct as the logical key is) without proving it unconditionally — when a
    // logical NULL is exactly a basis NULL: no key column through an authored inverse
    // (which may store NULL for a value, or read a value from NULL).
    bool row_time = false;
    const bool nulls_match = std::none_of(key.cols.begin(), key.cols.end(),
                                          [&](int c) { return facts[c].inverse == LensColumn::Inverse::kAuthored; });
    for (const BasisKey& bk : basis_keys) {
      std::set<int> s(bk.cols.begin(), bk.cols.end());
      const bool within = std::includes(mapped_set.begin(), mapped_set.end(), s.begin(), s.end());
      if (!bk.not_null) {
        row_time = row_time || (within && nulls_match);
        continue;
      }
      if (within) governing.push_back(&bk);
      if (s == mapped_set) transport = true;
    }
    bool body_proved = props.is_unique(key.cols, attrs.size()) &&
                       std::all_of(key.cols.begin(), key.cols.end(), [&](int c) { return !attrs[c].nullable; });
    const bool proved = transport || body_proved || !governing.empty();
    if (!proved && row_time) return;
    // A proved key the body's facts lose is asserted at the boundary — only over one
    // plain source (a join could fan rows out) and NOT NULL columns (an unconditional key).
    if (proved && !body_proved && single && target &&
        std::none_of(key.cols.begin(), key.cols.end(), [&](int c) { return attrs[c].nullable || !ts.columns[c].not_null; })) {
      LensSlot::AssertedKey ak;
      for (int c : key.cols) ak.columns.push_back(ts.columns[c].name);
      ak.basis_schema = target->schema.schema_name;
      ak.basis_table = target->schema.name;
      ak.facts = key_proof_facts(target->schema);
      slot->asserted_keys.push_back(std::move(ak));
    }
    if (proved) {
      if (resolves(key.action)) {
        bool agrees = !governing.empty() || !one_relation ? !governing.empty() : true;
        for (const BasisKey* g : governing)
          if (!g->action || *g->action != *key.action) agrees = false;
        if (!agrees)
          diags.push_back(finding(ts, "lens.unenforceable-conflict-action",
                                  site + " (" + names + ") of logical table '" + ts.name +
                                      "' declares an ON CONFLICT action that the basis key governing its writes does "
                                      "not carry; declare the same action on the basis key, or drop it here",
                                  true, site));
      }
      for (const BasisKey* g : governing)
        if (g->cols.size() < mapped_set.size()) {
          std::string gcols;
          for (int c : g->cols) gcols += (gcols.empty() ? "" : ", ") + target->schema.columns[c].name;
          LensAdvisory a = finding(ts, "lens.over-restrictive-basis-key",
                                   site + " (" + names + ") of logical table '" + ts.name +
                                       "' is stricter in the basis: basis key (" + gcols + ") of '" +
                                       target->qualified_name() + "' refuses rows the logical key admits",
                                   false, site);
          a.facts = a.code + "|" + ts.name + "|" + site + "|" + gcols;
          diags.push_back(std::move(a));
          break;
        }
      return;
    }
    // Commit-time: a count over the logical table, after the statement's writes.
    if (resolves(key.action)) {
      diags.push_back(finding(ts, "lens.unenforceable-conflict-action",
                              site + " (" + names + ") of logical table '" + ts.name +
                                  "' is enforced by a commit-time scan, which can only abort: ON CONFLICT " +
                                  (*key.action == QRS_CONFLICT_REPLACE ? "REPLACE" : "IGNORE") +
                                  " cannot be honored (add a basis key with that action)",
                              true, site));
      return;
    }
    LensAdvisory a = finding(ts, "lens.no-backing-index",
                             site + " (" + names + ") of logical table '" + ts.name +
                                 "' has no basis structure answering it: it is enforced by an O(n) scan at commit "
                                 "(add a basis UNIQUE over its columns: its index, or a covering materialized view over it, "
                                 "answers it at row time); INSERT OR REPLACE / OR IGNORE and upserts on it need that "
                                 "and are refused",
                             false, site, key.ix && key.cols.size() == 1 ? ts.columns[key.cols[0]].name : "");
    a.facts = a.code + "|" + ts.name + "|" + names + "|none|" + band(target.get()) + "|" +
              (target ? target->qualified_name() : "");
    diags.push_back(std::move(a));
    if (read_only) return;
    // (select count(*) from x.T as _u where _u.k = <new term> …) <= 1
    ExprPtr where;
    int source = -1;
    bool ok = true;
    for (int c : key.cols) {
      ExprPtr t = new_term(c, "new", source);
      if (!t) {
        ok = false;
        break;
      }
      where = ast::conjoin(std::move(where),
                           ast::binary(ast::BinaryOp::kEq, ast::column_ref("_u", ts.columns[c].name), std::move(t)));
    }
    if (!ok) return;
    // The empty key (`primary key ()`, at most one row): the count rides the writes of
    // the body's first relation, the existence anchor.
    if (key.cols.empty()) source = 0;
    if (source < 0 || source >= static_cast<int>(body.sources.size())) return;
    auto count = std::make_unique<ast::FunctionCall>();
    count->name = "count";
    count->star = true;
    std::vector<ast::ResultColumn> rcs;
    rcs.push_back(ast::result_column(std::move(count)));
    auto q = ast::select(std::move(rcs), ast::table_source({x, ts.name, {}}, "_u"), std::move(where));
    LensCheck lc;
    lc.table = relation_key(source);
    lc.name = site == "primary key" ? "lens:pk" : "lens:" + site;
    lc.text = site + " (" + names + ")";
    lc.expr = std::shared_ptr<const ast::Expr>(
        ast::binary(ast::BinaryOp::kLe, ast::scalar_subquery(std::move(q)), ast::integer_literal(1)).release());
    lc.commit_time_key = true;
    for (int c : key.cols) lc.key_columns.push_back(ts.columns[c].name);
    slot->checks.push_back(std::move(lc));
  }

  // Parent-side foreign keys (NO ACTION / RESTRICT): a write through this table that
  // deletes a row, or moves its key, must not leave a logical child row referencing the
  // old key. A check on the member that holds the key, deferred to commit (it reads other
  // tables), over the old image:
  //   not exists (select 1 from x.C as _r where _r.<fk col> = old.<key term> …)
  //   or exists (select 1 from x.T as _p where _p.<key col> = old.<key term> …)
  // (the second: the key is still there — an update that kept it, a delete and re-insert).
  // CASCADE / SET NULL / SET DEFAULT propagate writes, which the lens boundary does not do
  // yet: such a key does not deploy rather than run as something it is not.
  void attach_parent_keys() {
    for (const auto& item : logical.items) {
      if (item->kind != ast::StmtKind::kCreateTable) continue;
      const auto& child = static_cast<const ast::CreateTableStmt&>(*item);
      // Only tables whose declaration names this one as a parent are bound.
      bool names_us = false;
      for (const auto& cd : child.columns)
        for (const auto& cc : cd.constraints)
          names_us = names_us ||
                     (cc.kind == ast::ColumnConstraint::Kind::kForeignKey && iequals(cc.fk_table.name, ts.name));
      for (const auto& tc : child.constraints)
        names_us = names_us ||
                   (tc.kind == ast::TableConstraint::Kind::kForeignKey && iequals(tc.fk_table.name, ts.name));
      if (!names_us) continue;
      const TableSchema cs = iequals(child.table.name, ts.name) ? ts : build_table_schema(db, child, x);
      for (const ForeignKeySchema& fk : cs.foreign_keys) {
        if (!iequals(fk.referenced_table, ts.name)) continue;
        const std::string site = fk.name;
        auto propagates = [](ReferentialAction a) {
          return a == ReferentialAction::kCascade || a == ReferentialAction::kSetNull ||
                 a == ReferentialAction::kSetDefault;
        };
        const bool del_prop = propagates(fk.on_delete), upd_prop = propagates(fk.on_update);
        if (del_prop || upd_prop) {
          std::string why;
          const bool self = iequals(cs.name, ts.name);
          if (self && fk.columns.size() > 1)
            why = "a composite self-referencing key whose action propagates";
          else if (!self && cascade_cycle(cs.name, ts.name))
            why = "a cycle of foreign keys whose actions propagate (" + ts.name + " → " + cs.name + " → … → " +
                  ts.name + ")";
          if (!why.empty()) {
            diags.push_back(finding(ts, "lens.unrealizable-constraint",
                                    "FOREIGN KEY " + site + " of logical table '" + cs.name + "' declares " + why +
                                        ", which writes through a lens do not carry out; declare it NO ACTION or "
                                        "RESTRICT (and the action on the basis foreign key)",
                                    true, site));
            continue;
          }
          if (!read_only) {
            auto action = [](ReferentialAction a) {
              using A = LensCascade::Action;
              return a == ReferentialAction::kCascade   ? A::kCascade
                     : a == ReferentialAction::kSetNull ? A::kSetNull
                     : a == ReferentialAction::kSetDefault ? A::kSetDefault
                                                           : A::kNone;
            };
            LensCascade lc;
            lc.child = cs.name;
            lc.self = self;
            lc.on_delete = action(fk.on_delete);
            lc.on_update = action(fk.on_update);
            for (int c : fk.columns) {
              lc.child_columns.push_back(cs.columns[c].name);
              lc.defaults.push_back(cs.columns[c].default_expr ? expr_to_sql(*cs.columns[c].default_expr) : "");
            }
            if (fk.referenced_columns.empty())
              for (const KeyColumn& k : ts.primary_key) lc.parent_columns.push_back(ts.columns[k.column].name);
            else
              lc.parent_columns = fk.referenced_columns;
            if (lc.parent_columns.size() == lc.child_columns.size()) slot->cascades.push_back(std::move(lc));
          }
          // The check below stays for both operations: after a propagating action no
          // child references the old key, so it passes; it catches what no action ran for
          // (an INSERT OR REPLACE evicting a referenced parent row).
        }
        if (read_only) continue;
        std::vector<int> parent_cols;
        if (fk.referenced_columns.empty())
          for (const KeyColumn& k : ts.primary_key) parent_cols.push_back(k.column);
        else
          for (const std::string& c : fk.referenced_columns) parent_cols.push_back(ts.find_column(c));
        if (parent_cols.size() != fk.columns.size() ||
            std::any_of(parent_cols.begin(), parent_cols.end(), [](int c) { return c < 0; }))
          continue;  // the child-side compile reports the mismatch
        ExprPtr refs, still;
        int source = -1;
        bool ok = true;
        for (size_t i = 0; i < parent_cols.size() && ok; ++i) {
          ExprPtr t = new_term(parent_cols[i], "old", source);
          ExprPtr t2 = t ? new_term(parent_cols[i], "old", source) : nullptr;
          if (!t || !t2) {
            ok = false;
            break;
          }
          refs = ast::conjoin(std::move(refs), ast::binary(ast::BinaryOp::kEq,
                                                           ast::column_ref("_r", cs.columns[fk.columns[i]].name),
                                                           std::move(t)));
          still = ast::conjoin(std::move(still), ast::binary(ast::BinaryOp::kEq,
                                                             ast::column_ref("_p", ts.columns[parent_cols[i]].name),
                                                             std::move(t2)));
        }
        if (!ok) {
          diags.push_back(finding(ts, "lens.unrealizable-constraint",
                                  "FOREIGN KEY " + site + " of logical table '" + cs.name + "' references columns of '" +
                                      ts.name + "' that no one basis member holds, so a delete through '" + ts.name +
                                      "' cannot check its children",
                                  true, site));
          continue;
        }
        // A basis foreign key onto the key member whose action propagates would change the
        // children before the commit-time check looks: the logical action wins by a check
        // before the parent's writes (rewrite/view_writes.cc lens_cascades).
        auto basis_propagates = [&](bool del) {
          const Source& src = body.sources[source];
          for (const auto& bt : db.catalog().tables()) {
            if (!iequals(bt->schema.schema_name, src.schema)) continue;
            for (const ForeignKeySchema& bfk : bt->schema.foreign_keys) {
              if (!iequals(bfk.referenced_table, src.name) ||
                  (!bfk.referenced_schema.empty() && !iequals(bfk.referenced_schema, src.schema)))
                continue;
              if (propagates(del ? bfk.on_delete : bfk.on_update)) return true;
            }
          }
          return false;
        };
        const bool guard_delete = !del_prop && basis_propagates(true);
        const bool guard_update = !upd_prop && basis_propagates(false);
        if (guard_delete || guard_update) {
          LensCascade g;
          g.child = cs.name;
          g.self = iequals(cs.name, ts.name);
          g.on_delete = guard_delete ? LensCascade::Action::kRestrict : LensCascade::Action::kNone;
          g.on_update = guard_update ? LensCascade::Action::kRestrict : LensCascade::Action::kNone;
          for (size_t i = 0; i < fk.columns.size(); ++i) {
            g.child_columns.push_back(cs.columns[fk.columns[i]].name);
            g.parent_columns.push_back(ts.columns[parent_cols[i]].name);
            g.defaults.push_back("");
          }
          slot->cascades.push_back(std::move(g));
        }
        std::vector<ast::ResultColumn> r1, r2;
        r1.push_back(ast::result_column(ast::integer_literal(1)));
        r2.push_back(ast::result_column(ast::integer_literal(1)));
        auto children = ast::select(std::move(r1), ast::table_source({x, cs.name, {}}, "_r"), std::move(refs));
        auto kept = ast::select(std::move(r2), ast::table_source({x, ts.name, {}}, "_p"), std::move(still));
        LensCheck lc;
        lc.table = relation_key(source);
        lc.name = site;
        lc.text = "rows of " + cs.name + " still reference " + ts.name;
        lc.foreign_key = true;
        lc.expr = std::shared_ptr<const ast::Expr>(
            ast::disjoin(ast::logical_not(ast::exists(std::move(children))), ast::exists(std::move(kept))).release());
        lc.on_insert = false;
        lc.on_update = true;
        lc.on_delete = true;
        slot->checks.push_back(std::move(lc));
      }
    }
  }

  // Whether a write propagating from `child` (a parent of others) reaches `parent` again
  // through foreign keys whose actions propagate: the generated writes would not end.
  bool cascade_cycle(const std::string& child, const std::string& parent) {
    if (propagating_.empty()) {
      propagating_[""] = {};  // computed
      for (const auto& item : logical.items) {
        if (item->kind != ast::StmtKind::kCreateTable) continue;
        const auto& t = static_cast<const ast::CreateTableStmt&>(*item);
        auto acts = [](ast::FkAction a) {
          return a == ast::FkAction::kCascade || a == ast::FkAction::kSetNull || a == ast::FkAction::kSetDefault;
        };
        auto edge = [&](const std::string& to, ast::FkAction d, ast::FkAction u) {
          if ((acts(d) || acts(u)) && !iequals(to, t.table.name))
            propagating_[to_lower(to)].push_back(to_lower(t.table.name));
        };
        for (const auto& cd : t.columns)
          for (const auto& cc : cd.constraints)
            if (cc.kind == ast::ColumnConstraint::Kind::kForeignKey) edge(cc.fk_table.name, cc.fk_on_delete, cc.fk_on_update);
        for (const auto& tc : t.constraints)
          if (tc.kind == ast::TableConstraint::Kind::kForeignKey) edge(tc.fk_table.name, tc.fk_on_delete, tc.fk_on_update);
      }
    }
    std::set<std::string> seen;
    std::vector<std::string> todo{to_lower(child)};
    while (!todo.empty()) {
      std::string at = todo.back();
      todo.pop_back();
      if (at == to_lower(parent)) return true;
      if (!seen.insert(at).second) continue;
      for (const std::string& next : propagating_[at]) todo.push_back(next);
    }
    return false;
  }
  std::map<std::string, std::vector<std::string>> propagating_;

  // Child-side foreign keys: an existence check against the logical parent.
  void attach_foreign_keys() {
    for (const ForeignKeySchema& fk : ts.foreign_keys) {
      bool realizable = true;
      for (int c : fk.columns)
        if (facts[c].inverse == LensColumn::Inverse::kNone) realizable = false;
      std::string site = fk.name;
      if (!realizable) {
        diags.push_back(finding(ts, "lens.unrealizable-constraint",
                                "FOREIGN KEY " + site + " of logical table '" + ts.name +
                                    "' reads a computed column with no write path",
                                true, site));
        continue;
      }
      if (read_only) continue;
      // The parent's columns: as written, or the parent's primary key from its declaration.
      std::vector<std::string> parent_cols = fk.referenced_columns;
      if (parent_cols.empty())
        for (const auto& item : logical.items) {
          if (item->kind != ast::StmtKind::kCreateTable) continue;
          auto& pt = static_cast<const ast::CreateTableStmt&>(*item);
          if (!iequals(pt.table.name, fk.referenced_table)) continue;
          for (const auto& cd : pt.columns)
            for (const auto& cc : cd.constraints)
              if (cc.kind == ast::ColumnConstraint::Kind::kPrimaryKey) parent_cols.push_back(cd.name);
          for (const auto& tc : pt.constraints)
            if (tc.kind == ast::TableConstraint::Kind::kPrimaryKey)
              for (const auto& ic : tc.columns) parent_cols.push_back(ic.name);
        }
      if (parent_cols.size() != fk.columns.size()) continue;
      ExprPtr nulls, match;
      int source = -1;
      bool ok = true;
      for (size_t i = 0; i < fk.columns.size(); ++i) {
        ExprPtr t = new_term(fk.columns[i], "new", source);
        ExprPtr t2 = t ? new_term(fk.columns[i], "new", source) : nullptr;
        if (!t || !t2) {
          ok = false;
          break;
        }
        nulls = ast::disjoin(std::move(nulls), ast::logical_not(ast::is_not_null(std::move(t))));
        match = ast::conjoin(std::move(match),
                             ast::binary(ast::BinaryOp::kEq, ast::column_ref("_p", parent_cols[i]), std::move(t2)));
      }
      if (!ok) continue;
      std::vector<ast::ResultColumn> rcs;
      rcs.push_back(ast::result_column(ast::integer_literal(1)));
      auto q = ast::select(std::move(rcs), ast::table_source({x, fk.referenced_table, {}}, "_p"), std::move(match));
      LensCheck lc;
      lc.table = relation_key(source);
      lc.name = site;
      lc.text = "foreign key references " + fk.referenced_table;
      lc.foreign_key = true;
      lc.expr = std::shared_ptr<const ast::Expr>(ast::disjoin(std::move(nulls), ast::exists(std::move(q))).release());
      slot->checks.push_back(std::move(lc));
    }
  }

  // Declared access patterns (`quereus.lens.access.<column>` = 'lookup' | 'range' |
  // 'order', a comma list): each needs a basis structure ordered by the column's basis
  // column — the relation's primary key or an index leading with it, or a live
  // materialized view over the relation keyed by it — else reads will scan
  // (lens.no-answering-structure, an advisory).
  void check_access_patterns() {
    static const std::string prefix = "quereus.lens.access.";
    for (const auto& [key, value] : ts.tags.entries()) {
      if (key.size() <= prefix.size() || !iequals(std::string_view(key).substr(0, prefix.size()), prefix)) continue;
      const std::string col = key.substr(prefix.size());
      auto invalid = [&](const std::string& why) {
        LensAdvisory e = finding(ts, "lens.invalid-access-tag", "tag '" + key + "' of logical table '" + ts.name + "' " + why,
                                 true);
        diags.push_back(std::move(e));
      };
      const int c = ts.find_column(col);
      if (c < 0) {
        invalid("names no column of the table");
        continue;
      }
      std::vector<std::string> forms = split_trim(tag_text(value), ',');
      bool ok = !forms.empty();
      for (std::string& f : forms) {
        f = to_lower(f);
        ok = ok && (f == "lookup" || f == "range" || f == "order");
      }
      if (!ok) {
        invalid("must be a comma list of lookup, range, order (got '" + tag_text(value) + "')");
        continue;
      }
      const ColumnFacts& f = facts[c];
      std::string answered_by;
      if (f.table && f.column >= 0) {
        const TableSchema& bs = f.table->schema;
        const std::string& bcol = bs.columns[f.column].name;
        if (!bs.primary_key.empty() && bs.primary_key[0].column == f.column) answered_by = "primary key";
        for (const IndexSchema& ix : bs.indexes)
          if (answered_by.empty() && !ix.where && !ix.columns.empty() && ix.columns[0].column == f.column)
            answered_by = "index " + ix.name;
        for (const auto& t : db.catalog().tables()) {
          if (!answered_by.empty()) break;
          if (!t->schema.derivation || !t->stale.empty() || t->schema.primary_key.empty()) continue;
          bool over = false;
          for (const auto& [sch, name] : t->schema.derivation->sources)
            over = over || (iequals(sch, bs.schema_name) && iequals(name, bs.name));
          if (over && iequals(t->schema.columns[t->schema.primary_key[0].column].name, bcol))
            answered_by = "materialized view " + t->qualified_name();
        }
      }
      if (!answered_by.empty()) continue;
      std::string relation = f.table ? f.table->qualified_name() : "";
      LensAdvisory a = finding(ts, "lens.no-answering-structure",
                               "column '" + ts.columns[c].name + "' of logical table '" + ts.name + "' is declared for " +
                                   tag_text(value) + " access, but no basis structure is ordered by " +
                                   (f.table && f.column >= 0 ? "'" + relation + "." +
                                                                   f.table->schema.columns[f.column].name + "'"
                                                             : std::string("it (it has no basis column)")) +
                                   ": reads will scan (add an index, or a materialized view ordered by it)",
                               false, "", ts.columns[c].name);
      a.facts = a.code + "|" + ts.name + "|" + ts.columns[c].name + "|" + to_lower(tag_text(value)) + "|none|" +
                band(f.table.get()) + "|" + relation;
      diags.push_back(std::move(a));
    }
  }

  // The partial-override note: which columns the default mapper filled in.
  void note_partial_override() {
    if (ov) {
      std::string gaps;
      for (size_t i = 0; i < n; ++i)
        if (!body.covered[i]) gaps += (gaps.empty() ? "" : ", ") + ts.columns[i].name;
      if (!gaps.empty()) {
        LensAdvisory a = finding(ts, "lens.partial-override",
                                 "the lens override of '" + ts.name + "' covers some columns; gap-filled by the default "
                                     "mapper: " + gaps,
                                 false);
        a.facts = a.code + "|" + ts.name + "|" + gaps;
        diags.push_back(std::move(a));
      }
    }
  }

  // The slot's column dispositions.
  void record_dispositions() {
    for (size_t i = 0; i < n; ++i) {
      LensColumn c;
      c.name = ts.columns[i].name;
      c.covered = body.covered[i];
      c.inverse = facts[i].inverse;
      c.member = body.member[i];
      if (facts[i].table && facts[i].column >= 0) {
        c.basis_table = facts[i].table->schema.schema_name + "." + to_lower(facts[i].table->schema.name);
        c.basis_column = facts[i].table->schema.columns[facts[i].column].name;
      }
      slot->columns.push_back(std::move(c));
    }
  }

  // This table's part of the deployment snapshot: which basis columns back which logical
  // columns, a join key shared with a backed column backing the same one.
  void record_snapshot() {
    slot->snapshot.logical_table = ts.name;
    slot->snapshot.get_body = slot->effective_sql;
    for (const ColumnSchema& c : ts.columns) slot->snapshot.logical_columns.push_back(c.name);
    for (auto& r : relation_backing())
      if (!r.columns.empty()) slot->snapshot.relations.push_back(std::move(r));
  }

  // Per body source, the (basis column, logical column) pairs it backs: the columns the
  // body reads from it, and the join keys the ON equalities and USING lists equate with
  // them (a member's copy of the shared key backs the same logical column).
  std::vector<LensRelationBacking> relation_backing() {
    // (source, basis column) pairs equated by the joins' ON equalities and USING lists.
    using Site = std::pair<int, std::string>;
    std::vector<std::pair<Site, Site>> equal;
    auto site_of = [&](const ast::Expr* e) -> std::optional<Site> {
      if (!e || e->kind != ast::ExprKind::kColumn) return std::nullopt;
      auto& r = static_cast<const ast::ColumnRef&>(*e);
      for (size_t i = 0; i < body.sources.size(); ++i) {
        const Source& src = body.sources[i];
        if (!r.table.empty() && !iequals(r.table, src.qualifier)) continue;
        for (const std::string& c : src.columns)
          if (iequals(c, r.column)) return Site{static_cast<int>(i), c};
      }
      return std::nullopt;
    };
    std::function<void(const ast::TableSource&)> joins = [&](const ast::TableSource& t) {
      if (t.kind != ast::TableSource::Kind::kJoin) return;
      joins(*t.left);
      joins(*t.right);
      std::vector<const ast::Expr*> conj;
      std::function<void(const ast::Expr*)> split = [&](const ast::Expr* e) {
        if (!e) return;
        if (e->kind == ast::ExprKind::kBinary && static_cast<const ast::BinaryExpr&>(*e).op == ast::BinaryOp::kAnd) {
          split(static_cast<const ast::BinaryExpr&>(*e).left.get());
          split(static_cast<const ast::BinaryExpr&>(*e).right.get());
          return;
        }
        conj.push_back(e);
      };
      split(t.on.get());
      for (const ast::Expr* e : conj) {
        if (e->kind != ast::ExprKind::kBinary) continue;
        auto& b = static_cast<const ast::BinaryExpr&>(*e);
        if (b.op != ast::BinaryOp::kEq && b.op != ast::BinaryOp::kEqEq) continue;
        auto l = site_of(b.left.get()), r = site_of(b.right.get());
        if (l && r) equal.push_back({*l, *r});
      }
      for (const std::string& u : t.using_columns) {
        std::vector<Site> sites;
        for (size_t i = 0; i < body.sources.size(); ++i)
          for (const std::string& c : body.sources[i].columns)
            if (iequals(c, u)) sites.push_back({static_cast<int>(i), c});
        for (size_t k = 1; k < sites.size(); ++k) equal.push_back({sites[0], sites[k]});
      }
    };
    if (sel().core.from) joins(*sel().core.from);
    std::vector<LensRelationBacking> rels(body.sources.size());
    for (size_t i = 0; i < body.sources.size(); ++i) {
      rels[i].schema = body.sources[i].schema;
      rels[i].table = body.sources[i].name;
    }
    auto add = [&](const Site& s, const std::string& logical) {
      auto& cols = rels[s.first].columns;
      for (auto& [b, l] : cols)
        if (iequals(b, s.second)) return false;
      cols.emplace_back(s.second, logical);
      return true;
    };
    for (size_t i = 0; i < n; ++i) {
      if (facts[i].source < 0 || !facts[i].table || facts[i].column < 0) continue;
      add({facts[i].source, facts[i].table->schema.columns[facts[i].column].name}, ts.columns[i].name);
    }
    for (bool grew = true; grew;) {
      grew = false;
      for (auto& [a, b] : equal)
        for (const Site* from : {&a, &b}) {
          const Site& to = from == &a ? b : a;
          for (auto [bc, lc] : std::vector<std::pair<std::string, std::string>>(rels[from->first].columns))
            if (iequals(bc, from->second) && add(to, lc)) grew = true;
        }
    }
    return rels;
  }

  ast::Select& sel() { return *body.select; }

  // A column whose body term is a bare basis column (under COLLATE at most).
  bool bare(int col) {
    const ast::Expr* e = sel().core.columns[col].expr.get();
    while (e && e->kind == ast::ExprKind::kCollate) e = static_cast<const ast::CollateExpr&>(*e).operand.get();
    return e && e->kind == ast::ExprKind::kColumn;
  }
  // Whether a written value of the column maps back to one basis value.
  bool reconstructible(int col) {
    return (facts[col].inverse == LensColumn::Inverse::kInferred && bare(col)) ||
           (facts[col].inverse == LensColumn::Inverse::kAuthored && facts[col].bijective);
  }
  // The logical column's term over the basis write row (`<image>.<col>`), setting `source`
  // to the body source it reads; null when it reads no single source.
  ExprPtr new_term(int col, const char* image, int& source) {
    ExprPtr e = ast::clone(*sel().core.columns[col].expr);
    bool ok = true;
    substitute(e, [&](const ast::ColumnRef& r) -> ExprPtr {
      int owner = -1;
      for (size_t s = 0; s < body.sources.size(); ++s) {
        const Source& src = body.sources[s];
        bool named = r.table.empty() ? std::any_of(src.columns.begin(), src.columns.end(),
                                                   [&](const std::string& c) { return iequals(c, r.column); })
                                     : iequals(r.table, src.qualifier);
        if (named) {
          owner = static_cast<int>(s);
          break;
        }
      }
      if (owner < 0 || (source >= 0 && owner != source)) {
        ok = false;
        return nullptr;
      }
      source = owner;
      return ast::column_ref(image, r.column);
    });
    if (!ok || source < 0) return nullptr;
    return e;
  }
  // How a logical CHECK's subqueries resolve for the written-row walk: a source naming a
  // logical table of this schema reads that logical table (qualified with the schema, as
  // the check runs beside a basis write); another exposes its catalog columns (an
  // unqualified one is looked up in the basis schema, where the check is bound).
  WriteRowWalk::Hooks write_row_hooks() {
    WriteRowWalk::Hooks h;
    h.is_row_column = [this](const std::string& c) { return ts.find_column(c) >= 0; };
    h.table_columns = [this](ast::QualifiedName& n) -> std::optional<std::vector<std::string>> {
      if (n.schema.empty() || iequals(n.schema, x))
        for (const auto& item : logical.items) {
          if (item->kind != ast::StmtKind::kCreateTable) continue;
          const auto& t = static_cast<const ast::CreateTableStmt&>(*item);
          if (!iequals(t.table.name, n.name)) continue;
          n.schema = logical.name;
          std::vector<std::string> cols;
          for (const auto& cd : t.columns) cols.push_back(cd.name);
          return cols;
        }
      const std::string schema = n.schema.empty() ? to_lower(basis) : to_lower(n.schema);
      std::vector<std::string> cols;
      if (auto t = db.catalog().find(schema, n.name)) {
        for (const ColumnSchema& c : t->schema.columns) cols.push_back(c.name);
        return cols;
      }
      if (auto v = db.catalog().find_view(schema, n.name); v && !v->columns.empty()) return v->columns;
      return std::nullopt;
    };
    return h;
  }
  // "schema.table" of a body source.
  std::string relation_key(int source) {
    if (source < 0 || source >= static_cast<int>(body.sources.size()))
      throw Error(StatusCode::kInternal, "lens compiler: a constraint of '" + ts.name + "' rides no body relation");
    const Source& s = body.sources[source];
    return s.schema + "." + to_lower(s.name);
  }

  DatabaseImpl& db;
  const ast::DeclareSchemaStmt& logical;
  const ast::CreateTableStmt& table;
  const ast::DeclareLensStmt* lens;
  const std::string& basis;
  const std::string x;  // the logical schema, lower-case
  TableSchema ts;
  const size_t n;
  CompiledLensTable out;
  std::vector<LensAdvisory>& diags = out.diagnostics;
  const ast::DeclareLensStmt::View* ov = nullptr;  // the override, if any
  Body body;
  std::shared_ptr<LensSlot> slot;
  std::shared_ptr<ViewEntry> view;
  bool single = false;  // one plain source, no grouping or limits
  std::vector<ColumnFacts> facts;
  std::vector<Attribute> attrs;
  RelProperties props;
  bool read_only = false;
};

}  // namespace

CompiledLensTable compile_lens_table(DatabaseImpl& db, const ast::DeclareSchemaStmt& logical,
                                     const ast::CreateTableStmt& table, const ast::DeclareLensStmt* lens,
                                     const std::string& basis) {
  return LensTableCompiler(db, logical, table, lens, basis).run();
}

}  // namespace quereus
