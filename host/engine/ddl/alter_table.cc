// ALTER TABLE, every arm (sql-alter.md §2.7), carried to the module through the
// alter_table hook (abi.h qrs_schema_change, ABI 1.2).
//
// Shape: each arm is one function `plan_<arm>` returning an AlterPlan — the
// table's new schema, the change the module sees, whether the arm rewrites
// stored rows, and the rewrite of dependents to run after the swap. `commit`
// then calls the module and, only when it succeeded, swaps the catalog entry,
// rewrites dependents and bumps the schema version. Engine-side validations
// (existing rows against a new CHECK, a default that does not convert) run
// inside `plan_<arm>`, before anything changes.
//
// Secondary structures (indexes, UNIQUE companions) that follow an arm belong
// in `commit`, right after the module call (see the marked spot).
#include "ddl/alter_table.h"

#include "catalog/ddl_names.h"
#include "catalog/derivation.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "transaction/assertions.h"
#include "catalog/registry.h"
#include "ddl/ddl_context.h"
#include "ddl/index_ddl.h"
#include "ddl/schema_expressions.h"
#include "ddl/tags.h"
#include "parser/ast.h"
#include "parser/ast_clone.h"
#include "parser/ast_printer.h"
#include "parser/ast_visit.h"
#include "parser/ast_walk.h"
#include "planner/planner.h"
#include "planner/scalar_expr.h"
#include "write/dml_writer.h"
#include "write/foreign_keys.h"
#include "ddl/ddl_common.h"
#include "eval/exec_context.h"
#include "write/indexes.h"
#include "catalog/catalog.h"
#include "types/compare.h"

namespace quereus {
namespace {

using Action = ast::AlterTableStmt::Action;
using ColumnAction = ast::AlterTableStmt::ColumnAction;

// A UNIQUE constraint's backing structure would take a name an index of its own table
// already holds (sql-vtab.md 6.3, in the reference's words).
std::string backing_index_collision(const std::string& table, const std::string& constraint,
                                    const std::string& index) {
  return "Cannot add constraint '" + constraint + "' to table '" + table + "': its backing index '" + constraint +
         "' would collide with existing index '" + index + "' on the same table. Rename the constraint or the index.";
}

struct AlterPlan {
  TableSchema schema;           // the whole table after the change
  SchemaChange change;          // what the module is told
  bool rewrites_rows = false;   // the module must implement the arm (else UNSUPPORTED)
  std::function<void()> after;  // dependents rewritten after the swap; may be empty
  // The table's rows as they will be (for the UNIQUE pre-check); null: unchanged.
  std::function<Row(const Row&)> to_new;
};

struct AlterCtx {
  DdlContext& db;
  std::shared_ptr<TableEntry> entry;
  ExecContext& ctx;
  const ast::AlterTableStmt& s;
  const TableSchema& old() const { return entry->schema; }
  const std::string& table() const { return entry->schema.name; }
};

[[noreturn]] void fail(StatusCode code, const std::string& message) { throw Error(code, message); }

// A backfill (an added column's DEFAULT or generated body, SET NOT NULL's default) whose
// expression holds a subquery may read the altered table itself — and the module fills its
// rows while it holds that table (mem: its lock; a re-entrant read was an INTERNAL
// "Resource deadlock avoided"). Such a fill is computed for every row first, over the rows
// as the statement sees them, and the module's calls read the values back.
void compute_fill_first(AlterCtx& c, const ast::Expr* body,
                        std::function<Value(std::span<const Value> old_row)>& fill) {
  if (!body || !ast::contains_subquery(*body)) return;
  struct Less {
    bool operator()(const Row& a, const Row& b) const {
      for (size_t i = 0; i < a.size() && i < b.size(); ++i)
        if (int d = compare_values(a[i], b[i])) return d < 0;
      return a.size() < b.size();
    }
  };
  auto values = std::make_shared<std::map<Row, Value, Less>>();
  for (const Row& r : scan_rows(*c.entry)) values->emplace(r, fill(r));
  fill = [values, direct = fill](std::span<const Value> old_row) {
    auto it = values->find(Row(old_row.begin(), old_row.end()));
    return it != values->end() ? it->second : direct(old_row);
  };
}

// ---------------------------------------------------------------- AST helpers

// Visits every expression node of `e`, including those inside subqueries'
// selects (through `on_select`).
void walk_expr(ast::Expr& e, const std::function<void(ast::Expr&)>& on_expr,
               const std::function<void(ast::Select&)>& on_select) {
  on_expr(e);
  ast::for_each_child(
      e, [&](ast::ExprPtr& x) { walk_expr(*x, on_expr, on_select); }, on_select);
}

// Rewrites references after a RENAME TO or RENAME COLUMN, following FROM
// scopes: a table source naming the renamed table (unqualified, or qualified
// with its schema) is renamed; a column reference is renamed when it binds the
// renamed table's column — bare, while a source over that table is in scope, or
// qualified by that source's alias / name.
class Renamer {
 public:
  // RENAME TO.
  static Renamer table(std::string schema, std::string from, std::string to) {
    Renamer r;
    r.schema_ = std::move(schema), r.old_table_ = std::move(from), r.new_table_ = std::move(to);
    return r;
  }
  // RENAME COLUMN of schema.table.
  static Renamer column(std::string schema, std::string table, std::string from, std::string to) {
    Renamer r;
    r.schema_ = std::move(schema), r.col_table_ = std::move(table);
    r.old_col_ = std::move(from), r.new_col_ = std::move(to);
    return r;
  }

  struct Scope {
    std::vector<std::string> qualifiers;  // qualifiers binding the column-renamed table
    bool bare = false;                    // bare names bind the column-renamed table
    bool table_unaliased = false;         // the renamed table is a source without alias
    std::vector<std::string> ctes;        // WITH names declared here: they shadow tables
    std::vector<bool> ctes_reexpose;      // per ctes entry: it passes the renamed column through
    std::vector<std::string> bound;       // qualifiers this level's FROM sources bind
    std::vector<std::string> from_names;  // every qualifier of this level's FROM (collected first)
    bool bare_elsewhere = false;          // another source here has a column of the old name
    const Scope* outer = nullptr;
  };

  // A CHECK / DEFAULT owned by `owner` (its columns bare, or through new. /
  // old.).
  bool owned_expr(ast::Expr& e, const std::string& owner_schema, const std::string& owner) {
    Scope root;
    bool own = iequals(owner_schema, schema_);
    if (own && !col_table_.empty() && iequals(owner, col_table_)) {
      root.bare = true;
      root.qualifiers = {owner, "new", "old"};
    }
    if (own && !old_table_.empty() && (iequals(owner, old_table_) || iequals(owner, new_table_))) root.table_unaliased = true;
    changed_ = false;
    expr(e, &root);
    return changed_;
  }
  // With the catalog, a bare name another FROM source of a subquery exposes binds that
  // source, not the renamed table (sql-alter.md "DROP COLUMN": detection is scope-aware).
  Renamer& with_catalog(const Catalog& catalog) {
    catalog_ = &catalog;
    return *this;
  }
  // Pinning: every source naming schema.table (bare ones included) is qualified with the
  // schema, so a table that takes the name nearer on the search path does not capture it.
  static Renamer pin(std::string schema, const std::string& table) {
    Renamer r = Renamer::table(std::move(schema), table, table);
    r.pin_ = true;
    return r;
  }
  // An expression whose home schema has its own table of the target's name: there a
  // bare name binds that table, so only a qualified name reaches the target.
  void set_bare_binds_elsewhere(bool v) { bare_binds_elsewhere_ = v; }
  // A body whose home path reaches a relation of the new name before the target's schema:
  // a bare reference it rewrites is qualified with the target's schema, so the new name
  // does not re-bind it there (sql-alter.md "RENAME TABLE": "it adds one only then").
  void set_qualify_new_name(bool v) { qualify_ = v; }
  // The renamed table (its old name for RENAME TO) and its schema.
  const std::string& target_schema() const { return schema_; }
  const std::string& target_table() const { return old_table_.empty() ? col_table_ : old_table_; }
  // A table rename (not a column rename), and the table's new name.
  bool renames_table() const { return !old_table_.empty(); }
  const std::string& new_table() const { return new_table_; }
  const std::string& old_column() const { return old_col_; }
  const std::string& new_column() const { return new_col_; }
  // Whether the top-level FROM of `s` names the column-renamed table.
  bool reads_target_table(const ast::Select& s) const { return reads_target(s.core.from.get()); }
  bool view_body(ast::Select& s) {
    changed_ = false;
    select(s, nullptr);
    for (auto& d : s.defaults)
      if (d.value) expr(*d.value, nullptr);
    // `with defaults (c = …)` names a column of the body's sources (or the view column
    // passing it through): a renamed source column renames the entry.
    if (!old_col_.empty() && reads_target(s.core.from.get()))
      for (auto& d : s.defaults)
        if (iequals(d.name, old_col_)) {
          d.name = new_col_;
          changed_ = true;
        }
    return changed_;
  }

 private:
  // Whether the FROM tree `t` names the column-renamed table.
  bool reads_target(const ast::TableSource* t) const {
    if (!t) return false;
    if (t->kind == ast::TableSource::Kind::kTable) return is_target(t->table, col_table_);
    if (t->kind == ast::TableSource::Kind::kJoin) return reads_target(t->left.get()) || reads_target(t->right.get());
    return false;
  }
  bool is_target(const ast::QualifiedName& n, const std::string& name) const {
    if (n.schema.empty() && bare_binds_elsewhere_) return false;
    return iequals(n.name, name) && (n.schema.empty() || iequals(n.schema, schema_));
  }
  bool bare_binds(const Scope* s) const {
    for (; s; s = s->outer) {
      if (s->bare) return true;
      if (s->bare_elsewhere) return false;
    }
    return false;
  }
  // Whether the (non-target) source `n` exposes a column named like the renamed one: a
  // table's column, or a view's column list / named result column.
  bool exposes_old_column(const ast::QualifiedName& n) const {
    if (!catalog_ || old_col_.empty()) return false;
    const std::string schema = n.schema.empty() ? schema_ : to_lower(n.schema);
    if (auto t = catalog_->find(schema, n.name)) return t->schema.find_column(old_col_) >= 0;
    if (auto v = catalog_->find_view(schema, n.name)) {
      if (!v->columns.empty())
        return std::any_of(v->columns.begin(), v->columns.end(), [&](const std::string& c) { return iequals(c, old_col_); });
      if (!v->definition || !v->definition->select) return false;
      for (const ast::ResultColumn& rc : v->definition->select->core.columns) {
        if (!rc.alias.empty() ? iequals(rc.alias, old_col_)
                              : rc.expr && rc.expr->kind == ast::ExprKind::kColumn &&
                                    iequals(static_cast<const ast::ColumnRef&>(*rc.expr).column, old_col_))
          return true;
      }
    }
    return false;
  }
  // Whether qualifier `q` reaches the column-renamed table: the innermost level binding
  // it decides, so an inner source named or aliased `new` shadows the row image.
  bool qualifier_binds(const Scope* s, const std::string& q) const {
    for (; s; s = s->outer) {
      for (auto& x : s->qualifiers)
        if (iequals(x, q)) return true;
      for (auto& x : s->bound)
        if (iequals(x, q)) return false;
    }
    return false;
  }
  // An unqualified source naming a CTE in scope reads the CTE, not the table
  // (sql-alter.md "RENAME TABLE": the rewrite is scope-aware).
  bool cte_shadows(const Scope* s, const ast::QualifiedName& n) const {
    if (!n.schema.empty()) return false;
    for (; s; s = s->outer)
      for (auto& x : s->ctes)
        if (iequals(x, n.name)) return true;
    return false;
  }
  // Whether the CTE an unqualified source names (the innermost of that name) re-exposes
  // the renamed column under its old name: no column list, and a passthrough of it
  // (sql-alter.md "RENAME COLUMN"). Its readers then follow the rename.
  bool cte_reexposes(const Scope* s, const ast::QualifiedName& n) const {
    for (; s; s = s->outer)
      for (size_t i = s->ctes.size(); i-- > 0;)
        if (iequals(s->ctes[i], n.name)) return i < s->ctes_reexpose.size() && s->ctes_reexpose[i];
    return false;
  }
  bool table_visible(const Scope* s) const {
    for (; s; s = s->outer)
      if (s->table_unaliased) return true;
    return false;
  }

  void expr(ast::Expr& e, const Scope* sc) {
    walk_expr(
        e,
        [&](ast::Expr& x) {
          if (x.kind != ast::ExprKind::kColumn) return;
          auto& c = static_cast<ast::ColumnRef&>(x);
          if (!old_table_.empty() && !c.table.empty() && iequals(c.table, old_table_) && table_visible(sc)) {
            c.table = new_table_;
            changed_ = true;
          }
          if (!old_col_.empty() && iequals(c.column, old_col_) &&
              (c.table.empty() ? bare_binds(sc) : qualifier_binds(sc, c.table))) {
            c.column = new_col_;
            changed_ = true;
          }
        },
        [&](ast::Select& q) { select(q, sc); });
  }

  void source(ast::TableSource& t, Scope& sc) {
    using K = ast::TableSource::Kind;
    switch (t.kind) {
      case K::kTable:
        sc.bound.push_back(t.alias.empty() ? t.table.name : t.alias);
        if (cte_shadows(&sc, t.table)) {
          if (cte_reexposes(&sc, t.table)) {
            sc.bare = true;
            sc.qualifiers.push_back(t.alias.empty() ? t.table.name : t.alias);
          }
          break;
        }
        if (!old_table_.empty() && is_target(t.table, old_table_)) {
          // An unaliased source whose new name another source of the FROM already uses
          // as its qualifier keeps its old name as an alias: both qualifiers stay bound.
          const bool collides =
              t.alias.empty() && !pin_ &&
              std::any_of(sc.from_names.begin(), sc.from_names.end(), [&](const std::string& q) { return iequals(q, new_table_); });
          if (collides) t.alias = t.table.name;
          t.table.name = new_table_;
          if (pin_ || (qualify_ && t.table.schema.empty())) t.table.schema = schema_;
          changed_ = true;
          if (t.alias.empty()) sc.table_unaliased = true;
        }
        if (!col_table_.empty() && is_target(t.table, col_table_)) {
          sc.bare = true;
          sc.qualifiers.push_back(t.alias.empty() ? t.table.name : t.alias);
        } else if (exposes_old_column(t.table)) {
          sc.bare_elsewhere = true;
        }
        break;
      case K::kSubquery:
        if (!t.alias.empty()) sc.bound.push_back(t.alias);
        // A derived table that passes the renamed column through (no column list)
        // re-exposes it, as a CTE does.
        if (t.subquery && select(*t.subquery, sc.outer) && t.alias_columns.empty()) {
          sc.bare = true;
          if (!t.alias.empty()) sc.qualifiers.push_back(t.alias);
        }
        break;
      case K::kJoin:
        if (t.left) source(*t.left, sc);
        if (t.right) source(*t.right, sc);
        if (t.on) expr(*t.on, &sc);
        break;
      case K::kFunction:
        if (!t.alias.empty()) sc.bound.push_back(t.alias);
        for (auto& a : t.function_args)
          if (a) expr(*a, sc.outer);
        break;
    }
  }

  static void qualifiers_of(const ast::TableSource& t, std::vector<std::string>& out) {
    using K = ast::TableSource::Kind;
    if (t.kind == K::kJoin) {
      if (t.left) qualifiers_of(*t.left, out);
      if (t.right) qualifiers_of(*t.right, out);
    } else if (!t.alias.empty()) {
      out.push_back(t.alias);
    } else if (t.kind == K::kTable) {
      out.push_back(t.table.name);
    }
  }

  // Returns whether the core's output name for the renamed column shifts.
  bool core(ast::SelectCore& c, const Scope* outer, std::vector<ast::OrderingTerm>* order_by) {
    if (c.nested) return select(*c.nested, outer);
    for (auto& row : c.values)
      for (auto& v : row)
        if (v) expr(*v, outer);
    Scope sc;
    sc.outer = outer;
    if (c.from) {
      qualifiers_of(*c.from, sc.from_names);
      source(*c.from, sc);
    }
    const bool shifts = output_name_shifts(c, sc);
    for (auto& rc : c.columns)
      if (rc.expr) expr(*rc.expr, &sc);
    for (auto& rc : c.columns)
      for (auto& put : rc.inverse) inverse_put(put, sc, shifts);
    for (auto* x : {&c.where, &c.having})
      if (*x) expr(**x, &sc);
    for (auto& g : c.group_by)
      if (g) expr(*g, &sc);
    if (order_by)
      for (auto& o : *order_by)
        if (o.expr) expr(*o.expr, &sc);
    return shifts;
  }

  // RENAME COLUMN: whether the select's own output name for the column changes — an
  // unaliased bare projection of it, or a star over its table — while no other result
  // column still exposes the old name. Decided before the select list is rewritten.
  bool output_name_shifts(const ast::SelectCore& c, const Scope& sc) const {
    if (old_col_.empty()) return false;
    bool shifts = false, keeps = false;
    auto binds_here = [&](const std::string& q) {
      return std::any_of(sc.qualifiers.begin(), sc.qualifiers.end(), [&](const std::string& x) { return iequals(x, q); });
    };
    for (const ast::ResultColumn& rc : c.columns) {
      using RK = ast::ResultColumn::Kind;
      if (rc.kind == RK::kStar) {
        shifts = shifts || sc.bare;
      } else if (rc.kind == RK::kTableStar) {
        shifts = shifts || binds_here(rc.table);
      } else if (!rc.alias.empty()) {
        keeps = keeps || iequals(rc.alias, old_col_);
      } else if (rc.expr && rc.expr->kind == ast::ExprKind::kColumn) {
        auto& ref = static_cast<const ast::ColumnRef&>(*rc.expr);
        if (!iequals(ref.column, old_col_)) continue;
        if (ref.table.empty() ? sc.bare : binds_here(ref.table)) shifts = true;
        else keeps = true;
      }
    }
    return shifts && !keeps;
  }

  // A result column's `WITH INVERSE (target = put)` (vu-inverses.md): the target is a base
  // column of this select's FROM; the put's subqueries rename like any expression; and
  // its `new.<column>` references follow the select's own output names.
  void inverse_put(ast::NamedExpr& put, const Scope& sc, bool shifts) {
    if (!old_col_.empty() && sc.bare && iequals(put.name, old_col_)) {
      put.name = new_col_;
      changed_ = true;
    }
    if (!put.value) return;
    expr(*put.value, &sc);
    if (!shifts) return;
    // The walk only reads; the matched references are this put's own nodes.
    ast::any_expr_deep(*put.value, [&](const ast::Expr& x) {
      if (x.kind != ast::ExprKind::kColumn) return false;
      auto& ref = const_cast<ast::ColumnRef&>(static_cast<const ast::ColumnRef&>(x));
      if (ref.schema.empty() && iequals(ref.table, "new") && iequals(ref.column, old_col_)) {
        ref.column = new_col_;
        changed_ = true;
      }
      return false;
    });
  }

  // Returns whether the select's output name for the renamed column shifts (its
  // first core names the columns).
  bool select(ast::Select& s, const Scope* outer) {
    Scope with_scope;
    if (s.with) {
      // A CTE's body sees the members declared before it (and itself when recursive).
      with_scope.outer = outer;
      for (auto& cte : s.with->ctes) {
        if (s.with->recursive) {
          with_scope.ctes.push_back(cte.name);
          with_scope.ctes_reexpose.push_back(false);
        }
        const bool shifts = cte.select && select(*cte.select, &with_scope);
        if (!s.with->recursive) {
          with_scope.ctes.push_back(cte.name);
          with_scope.ctes_reexpose.push_back(shifts && cte.columns.empty());
        }
      }
      outer = &with_scope;
    }
    const bool shifts = core(s.core, outer, s.compounds.empty() ? &s.order_by : nullptr);
    for (auto& leg : s.compounds) core(leg.core, outer, nullptr);
    if (!s.compounds.empty())
      for (auto& o : s.order_by)
        if (o.expr) expr(*o.expr, outer);
    return shifts;
  }

  std::string schema_;
  const Catalog* catalog_ = nullptr;
  bool bare_binds_elsewhere_ = false;
  bool pin_ = false;  // a matched table source is qualified with schema_
  bool qualify_ = false;  // a matched bare table source is qualified with schema_
  std::string old_table_, new_table_;
  std::string col_table_, old_col_, new_col_;
  bool changed_ = false;
};

// Rewrites every dependent of a rename across the catalog: CHECK expressions
// and column DEFAULTs of every table, view bodies and assertion bodies. (Foreign keys are
// handled by the caller: they name tables and columns, not expressions.)
void propagate_rename(DdlContext& db, Renamer renamer, int depth = 0) {
  // A rename also creates a name. A body whose home path reaches the renamed table's
  // schema before the schema its bare `<new name>` used to bind (`temp.other` renamed to
  // `k` under a temp view reading `main.k`) would now bind the renamed table: such
  // references are pinned to the schema they read (qualified) first, and only those
  // (sql-alter.md "RENAME TABLE"). CHECK, DEFAULT, generated and partial-index
  // expressions resolve in their own schema, which held no table of the new name.
  if (renamer.renames_table()) {
    const std::string& target = renamer.target_schema();
    const std::string& name = renamer.new_table();
    auto holds = [&](const std::string& schema) {
      return schema != target && (db.catalog().find(schema, name) || db.catalog().find_view(schema, name));
    };
    // The schema a captured bare name used to read, when the rename captures it.
    auto captured_from = [&](const std::string& own) -> std::optional<std::string> {
      std::vector<std::string> home{to_lower(own)};
      for (const std::string& x : db.options().schema_path)
        if (std::find(home.begin(), home.end(), to_lower(x)) == home.end()) home.push_back(to_lower(x));
      bool target_seen = false;
      for (const std::string& x : home) {
        if (x == target) target_seen = true;
        else if (holds(x)) return target_seen ? std::optional<std::string>(x) : std::nullopt;
      }
      return std::nullopt;
    };
    for (auto& v : db.catalog().views()) {
      if (!v->definition) continue;
      auto from = captured_from(v->schema_name);
      if (!from) continue;
      auto copy = ast::clone(*v->definition);
      std::shared_ptr<ast::CreateViewStmt> def(static_cast<ast::CreateViewStmt*>(copy.release()));
      if (!def->select || !Renamer::pin(*from, name).view_body(*def->select)) continue;
      auto nv = std::make_shared<ViewEntry>(*v);
      nv->sql = statement_to_string(*def);
      nv->definition = std::move(def);
      db.catalog().remove_view(v->schema_name, v->name);
      db.persist_view(*nv);
      db.catalog().add_view(std::move(nv));
    }
    for (auto& t : db.catalog().tables()) {
      if (!t->schema.derivation) continue;
      auto from = captured_from(t->schema.schema_name);
      if (!from) continue;
      auto body = ast::clone(*t->schema.derivation->body);
      if (!Renamer::pin(*from, name).view_body(*body)) continue;
      auto d = std::make_shared<Derivation>(*t->schema.derivation);
      d->body = std::shared_ptr<const ast::Select>(std::move(body));
      t->schema.derivation = std::move(d);
      db.persist_table(*t);
    }
    for (const auto& a : db.assertions().list()) {
      auto from = captured_from(a->schema_name);
      if (!from) continue;
      auto e = ast::clone(*a->check);
      if (Renamer::pin(*from, name).owned_expr(*e, "", "")) db.assertions().set_check(db, *a, std::move(e));
    }
  }
  std::vector<std::shared_ptr<TableEntry>> shifted;  // maintained tables whose column followed
  std::vector<std::pair<std::string, std::string>> shifted_views;  // views whose output followed
  // Whether a bare name in an expression resolving along `home` binds some other relation
  // than the renamed table (or nothing): the first schema on the path that is the target's
  // or holds a relation of that name decides.
  auto binds_elsewhere = [&](const std::vector<std::string>& home) {
    const std::string& name = renamer.target_table();
    for (const std::string& s : home) {
      if (s == renamer.target_schema()) return false;
      if (db.catalog().find(s, name) || db.catalog().find_view(s, name)) return true;
    }
    return true;
  };
  // A view, materialized-view or assertion body resolves a bare name along its home path:
  // its own schema, then the session's schema_path (sql-alter.md "RENAME TABLE"); CHECK,
  // DEFAULT, generated and partial-index expressions in their table's schema alone.
  auto home_path = [&](const std::string& own) {
    std::vector<std::string> path{to_lower(own)};
    for (const std::string& s : db.options().schema_path)
      if (std::find(path.begin(), path.end(), to_lower(s)) == path.end()) path.push_back(to_lower(s));
    return path;
  };
  // Whether the table's new name is taken, on `home`, by a schema searched before the
  // target's: a rewritten bare reference must then name the target's schema.
  auto new_name_captured = [&](const std::vector<std::string>& home) {
    if (!renamer.renames_table()) return false;
    for (const std::string& s : home) {
      if (s == renamer.target_schema()) return false;
      if (db.catalog().find(s, renamer.new_table()) || db.catalog().find_view(s, renamer.new_table())) return true;
    }
    return false;
  };
  auto resolve_along = [&](const std::vector<std::string>& home) {
    renamer.set_bare_binds_elsewhere(binds_elsewhere(home));
    renamer.set_qualify_new_name(new_name_captured(home));
  };
  for (auto& t : db.catalog().tables()) {
    // Schema-authored expressions resolve in their table's own schema only.
    resolve_along({t->schema.schema_name});
    // Each expression is renamed on a private copy, installed only when it changed.
    bool rewritten_expr = false;
    for (CheckSchema& ck : t->schema.checks) {
      auto e = ast::clone(*ck.expr);
      if (renamer.owned_expr(*e, t->schema.schema_name, t->schema.name)) {
        ck.expr = std::move(e);
        rewritten_expr = true;
      }
    }
    for (ColumnSchema& col : t->schema.columns)
      for (auto* owned : {&col.default_expr, &col.generated_expr}) {
        if (!*owned) continue;
        auto e = ast::clone(**owned);
        if (renamer.owned_expr(*e, t->schema.schema_name, t->schema.name)) {
          *owned = std::move(e);
          rewritten_expr = true;
        }
      }
    for (IndexSchema& ix : t->schema.indexes) {
      if (!ix.where) continue;
      auto e = ast::clone(*ix.where);
      if (renamer.owned_expr(*e, t->schema.schema_name, t->schema.name)) {
        ix.where = std::move(e);
        t->index_runtime.reset();  // the predicate is bound again
        rewritten_expr = true;
      }
    }
    // The stored catalog follows, as for a view: another table left with its old CHECK /
    // DEFAULT / generated / predicate text would come back naming what no longer exists.
    // (The altered table itself is persisted by its ALTER, once its rename is complete.)
    const bool altered = iequals(t->schema.schema_name, renamer.target_schema()) &&
                         (iequals(t->schema.name, renamer.target_table()) ||
                          (renamer.renames_table() && iequals(t->schema.name, renamer.new_table())));
    if (rewritten_expr && !altered) db.persist_table(*t);
    // A maintained table's body, like a view's (its stored columns keep their names).
    if (t->schema.derivation) {
      resolve_along(home_path(t->schema.schema_name));
      auto body = ast::clone(*t->schema.derivation->body);
      const bool rewritten = renamer.view_body(*body);
      // A star over the renamed table shifts an output name with no text to rewrite.
      const bool star = !renamer.renames_table() && renamer.reads_target_table(*body) &&
                        std::any_of(body->core.columns.begin(), body->core.columns.end(), [](const ast::ResultColumn& rc) {
                          return rc.kind == ast::ResultColumn::Kind::kStar ||
                                 rc.kind == ast::ResultColumn::Kind::kTableStar;
                        });
      if (rewritten || star) {
        // A column rename that shifts an implicit output name (a bare projection of the
        // column, or a star) renames the maintained table's column too, as a view's
        // output name follows it.
        if (!renamer.renames_table() && t->schema.derivation->columns.empty() && body->compounds.empty()) {
          bool shifts = false;
          for (const ast::ResultColumn& rc : body->core.columns) {
            using RK = ast::ResultColumn::Kind;
            if (rc.kind == RK::kStar || rc.kind == RK::kTableStar) shifts = true;
            else if (rc.alias.empty() && rc.expr && rc.expr->kind == ast::ExprKind::kColumn &&
                     iequals(static_cast<const ast::ColumnRef&>(*rc.expr).column, renamer.new_column()))
              shifts = true;
          }
          int col = t->schema.find_column(renamer.old_column());
          if (shifts && col >= 0 && t->schema.find_column(renamer.new_column()) < 0) {
            t->schema.columns[col].name = renamer.new_column();
            // Whatever reads the maintained table by that name follows it in turn.
            shifted.push_back(t);
          }
        }
        auto d = std::make_shared<Derivation>(*t->schema.derivation);
        d->body = std::shared_ptr<const ast::Select>(std::move(body));
        for (auto& [schema, name] : d->sources)
          if (schema == renamer.target_schema() && iequals(name, renamer.target_table()) && renamer.renames_table())
            name = to_lower(renamer.new_table());
        t->schema.derivation = std::move(d);
        db.persist_table(*t);
      }
    }
  }
  for (auto& v : db.catalog().views()) {
    resolve_along(home_path(v->schema_name));  // a body resolves along its view's home path
    // A copy of the catalog's definition (`sql` is its printed text), renamed in place.
    auto copy = ast::clone(*v->definition);
    std::shared_ptr<ast::CreateViewStmt> def(static_cast<ast::CreateViewStmt*>(copy.release()));
    if (!def->select || !renamer.view_body(*def->select)) continue;
    // A view whose output name followed the column (a bare projection of it, no column
    // list) renames that output for what reads the view, in the next round.
    if (!renamer.renames_table() && def->columns.empty() && def->select->compounds.empty())
      for (const ast::ResultColumn& rc : def->select->core.columns)
        if (rc.kind == ast::ResultColumn::Kind::kExpr && rc.alias.empty() && rc.expr &&
            rc.expr->kind == ast::ExprKind::kColumn &&
            iequals(static_cast<const ast::ColumnRef&>(*rc.expr).column, renamer.new_column())) {
          shifted_views.emplace_back(v->schema_name, v->name);
          break;
        }
    auto nv = std::make_shared<ViewEntry>(*v);
    nv->sql = statement_to_string(*def);
    nv->definition = std::move(def);
    db.catalog().remove_view(v->schema_name, v->name);
    // The stored catalog follows, in the same schema-change scope: a view left with its
    // old text would not reload (its body names a column that no longer exists).
    db.persist_view(*nv);
    db.catalog().add_view(std::move(nv));
  }
  // Assertion bodies, like view bodies, after the views they may read are rewritten.
  for (const auto& a : db.assertions().list()) {
    // An assertion body resolves in its own schema, then the session path.
    resolve_along(home_path(a->schema_name));
    auto e = ast::clone(*a->check);
    if (renamer.owned_expr(*e, "", "")) db.assertions().set_check(db, *a, std::move(e));
  }
  // A maintained table's renamed column is a rename of its own, for the views and
  // maintained tables over it (bounded: views form a DAG).
  if (depth < 64) {
    for (const auto& t : shifted)
      propagate_rename(db, Renamer::column(t->schema.schema_name, t->schema.name, renamer.old_column(),
                                           renamer.new_column()),
                       depth + 1);
    for (const auto& [schema, name] : shifted_views)
      propagate_rename(db, Renamer::column(schema, name, renamer.old_column(), renamer.new_column()), depth + 1);
  }
}

// ---------------------------------------------------------------- rows and
// expressions

// A scope over a schema that is not (yet) in the catalog: its columns bare and,
// through the outer scope, as `new.` / `old.` images of the same row.
struct RowScope {
  TableEntry shadow;
  Scope scope, images;
  RowScope(Planner& planner, const TableSchema& schema) {
    shadow.schema = schema;
    scope = planner.table_scope(shadow, "");
    for (const char* q : {"new", "old"})
      for (Scope::Column c : scope.columns) {
        c.table = q;
        c.schema.clear();
        c.attr.nullable = true;
        images.columns.push_back(c);
      }
    scope.outer = &images;
  }
  RowScope(const RowScope&) = delete;
  RowScope& operator=(const RowScope&) = delete;
};

Value eval_on_row(const ScalarExpr& e, const Row& row, ExecContext& ctx) {
  EvalEnv images{&row, nullptr, &ctx};
  EvalEnv env{&row, &images, &ctx};
  return e.eval(env);
}

// A column's DEFAULT as the fill of existing rows: folded once when it reads
// nothing of the row and no table (then a value that does not convert is
// refused even on an empty table), else evaluated per row over the old row.
// Both convert to the column's type.
struct DefaultFill {
  std::shared_ptr<const ScalarExpr> expr;  // per-row, or null
  Value folded;

  static DefaultFill make(AlterCtx& c, const ast::Expr* def, const ColumnSchema& col, const TableSchema& ns) {
    DefaultFill f;
    if (!def) return f;
    Planner planner(c.db);
    planner.set_schema_authored(c.old().schema_name);
    RowScope rs(planner, c.old());
    bool reads_row = false;
    walk_expr(
        const_cast<ast::Expr&>(*def),
        [&](ast::Expr& x) {
          if (x.kind == ast::ExprKind::kColumn) reads_row = true;
        },
        [&](ast::Select&) { reads_row = true; });
    f.expr = planner.bind_expr(*def, rs.scope);
    if (!reads_row) {
      f.folded = DmlWriter::coerce(eval_on_row(*f.expr, Row{}, c.ctx), col, ns);
      f.expr.reset();
    }
    return f;
  }
  Value value(std::span<const Value> old_row, const ColumnSchema& col, const TableSchema& ns, ExecContext& ctx) const {
    if (!expr) return folded;
    Row row(old_row.begin(), old_row.end());
    return DmlWriter::coerce(eval_on_row(*expr, row, ctx), col, ns);
  }
};

// A generated column's value for the existing rows: its body, bound over the new
// layout (the row itself, bare and as `new.c`), evaluated over the old row extended
// by the new column and converted to the column's type.
struct GeneratedFill {
  std::shared_ptr<TableEntry> shadow;  // the new schema, not in the catalog
  std::shared_ptr<const ScalarExpr> expr;
  int column = 0;

  static GeneratedFill make(AlterCtx& c, const TableSchema& ns, int column) {
    GeneratedFill f;
    f.shadow = std::make_shared<TableEntry>();
    f.shadow->schema = ns;
    f.column = column;
    resolve_generated(c.db, *f.shadow);
    Planner planner(c.db);
    planner.set_schema_authored(ns.schema_name);
    for (BoundGenerated& g : bind_generated(c.db, planner, *f.shadow))
      if (g.column == column) f.expr = g.expr;
    if (!f.expr) fail(StatusCode::kInternal, "generated column '" + ns.columns[column].name + "' was not bound");
    return f;
  }
  Value value(std::span<const Value> old_row, ExecContext& ctx) const {
    Row row(old_row.begin(), old_row.end());
    row.resize(shadow->schema.columns.size());
    const TableSchema& ts = shadow->schema;
    return DmlWriter::coerce(eval_on_row(*expr, row, ctx), ts.columns[column], ts);
  }
};

// Refuses the ALTER when an existing row (in the new layout) fails one of
// `checks`.
void validate_checks(AlterCtx& c, const TableSchema& ns, const std::vector<const CheckSchema*>& checks,
                     const std::function<Row(const Row&)>& to_new_layout) {
  if (checks.empty()) return;
  std::vector<Row> rows = scan_rows(*c.entry);
  if (rows.empty()) return;
  Planner planner(c.db);
  planner.set_schema_authored(ns.schema_name);
  RowScope rs(planner, ns);
  int n = static_cast<int>(ns.columns.size());
  for (auto& col : rs.images.columns)
    if (col.table == "old") col.slot += n;
  for (const CheckSchema* ck : checks) {
    // Evaluating it over the rows would run a nested data-changing statement (directly or
    // through a view): refused as a write refuses it. Its functions are judged at the
    // first write (determinism.md "Validation Timing").
    if (!c.db.options().nondeterministic_schema)
      require_deterministic(c.db.registry(), *ck->expr, "CHECK", "constraint '" + ck->name + "'", false, true,
                            BodySite::kStored, &ns, nullptr, &c.db.catalog());
    auto bound = planner.bind_expr(*ck->expr, rs.scope);
    for (const Row& old_row : rows) {
      Row row = to_new_layout ? to_new_layout(old_row) : old_row;
      Row both = row;
      both.resize(2 * n);
      EvalEnv images{&both, nullptr, &c.ctx};
      EvalEnv env{&row, &images, &c.ctx};
      bool is_null = false;
      if (bound->eval(env).truthy(&is_null) || is_null) continue;
      fail(StatusCode::kConstraint, "CHECK constraint failed: " + ck->name + " (" + expr_to_string(*ck->expr) +
                                        ") — an existing row of '" + c.table() + "' violates it");
    }
  }
}

// Refuses the ALTER when an existing row (in the new layout) has a foreign key
// value of `fks` that no parent row holds (MATCH SIMPLE: a row with a NULL in
// the key passes). Only with `pragma foreign_keys` on; a parent not declared
// yet is not checked.
void validate_foreign_keys(AlterCtx& c, const TableSchema& ns, const std::vector<const ForeignKeySchema*>& fks,
                           const std::function<Row(const Row&)>& to_new_layout) {
  // A child and a parent column that both DECLARE a collation must agree (a
  // defaulted one yields to a declared one). Unconditional: it is a property of
  // the declaration.
  for (const ForeignKeySchema* fk : fks) {
    bool self = fk->referenced_schema == ns.schema_name && iequals(fk->referenced_table, c.table());
    auto parent = self ? nullptr : c.db.catalog().find(fk->referenced_schema, fk->referenced_table);
    const TableSchema* ps = self ? &ns : parent ? &parent->schema : nullptr;
    if (!ps) continue;
    for (size_t i = 0; i < fk->columns.size() && i < fk->referenced_columns.size(); ++i) {
      int pc = ps->find_column(fk->referenced_columns[i]);
      if (pc < 0) continue;
      const ColumnSchema& child = ns.columns[fk->columns[i]];
      const ColumnSchema& par = ps->columns[pc];
      if (child.collation_declared && par.collation_declared && child.collation && par.collation &&
          !iequals(child.collation->name(), par.collation->name()))
        fail(StatusCode::kError, "FK constraint '" + fk->name + "' on table '" + ns.name +
                                     "': conflicting collations for column '" + child.name + "' (" +
                                     child.collation->name() + ") and parent column '" + ps->name + "." + par.name +
                                     "' (" + par.collation->name() + ")");
    }
  }
  if (fks.empty() || !c.db.options().foreign_keys) return;
  std::vector<Row> rows;
  bool read = false;
  for (const ForeignKeySchema* fk : fks) {
    bool self = fk->referenced_schema == ns.schema_name && iequals(fk->referenced_table, c.table());
    auto parent = self ? c.entry : c.db.catalog().find(fk->referenced_schema, fk->referenced_table);
    if (!read) {
      for (Row& r : scan_rows(*c.entry)) rows.push_back(to_new_layout ? to_new_layout(r) : std::move(r));
      read = true;
    }
    if (!parent) {  // no parent table: every row with a whole key is an orphan
      for (const Row& row : rows)
        if (std::none_of(fk->columns.begin(), fk->columns.end(), [&](int col) { return row[col].is_null(); }))
          fail(StatusCode::kConstraint, "FOREIGN KEY constraint failed: " + fk->name + " — an existing row of '" +
                                            c.table() + "' references table '" + fk->referenced_table +
                                            "', which does not exist");
      continue;
    }
    const TableSchema& ps = self ? ns : parent->schema;
    std::vector<int> pcols;
    if (fk->referenced_columns.empty()) {
      for (auto& k : ps.primary_key) pcols.push_back(k.column);
    } else {
      for (auto& name : fk->referenced_columns) {
        int idx = ps.find_column(name);
        if (idx < 0)
          fail(StatusCode::kError,
               "FK constraint '" + fk->name + "': column '" + name + "' not found in table '" + ps.name + "'");
        pcols.push_back(idx);
      }
    }
    if (pcols.size() != fk->columns.size()) continue;
    if (rows.empty()) return;
    std::vector<Row> parents = self ? rows : scan_rows(*parent);
    for (const Row& row : rows) {
      bool has_null = false;
      for (int col : fk->columns) has_null = has_null || row[col].is_null();
      if (has_null) continue;
      bool found = std::any_of(parents.begin(), parents.end(), [&](const Row& pr) {
        for (size_t i = 0; i < pcols.size(); ++i)
          if (compare_values(row[fk->columns[i]], pr[pcols[i]], ps.columns[pcols[i]].collation.get()) != 0)
            return false;
        return true;
      });
      if (!found)
        fail(StatusCode::kConstraint, "FOREIGN KEY constraint failed: " + fk->name + " — an existing row of '" +
                                          c.table() + "' references a missing row of '" + ps.name + "'");
    }
  }
}

// ---------------------------------------------------------------- constraints

bool constraint_exists(const TableSchema& ts, std::string_view name) {
  for (auto& ck : ts.checks)
    if (iequals(ck.name, name)) return true;
  for (auto& fk : ts.foreign_keys)
    if (iequals(fk.name, name)) return true;
  for (auto& ix : ts.indexes)
    if (ix.constraint && iequals(ix.name, name)) return true;
  return false;
}

// `base`, or `base_<N>` (N = 2, 3, …) for the first name not on the table.
std::string mint(const TableSchema& ts, const std::string& base) {
  std::string name = base;
  for (int n = 2; constraint_exists(ts, name); ++n) name = base + "_" + std::to_string(n);
  return name;
}

// Adds the index enforcing UNIQUE (`columns`) to `ts`, named `name` or `_uc_<cols>`.
// `spelled`: the column names as the statement wrote them (for the message);
// `statement_from`: the first of ts.indexes this statement added (its own constraints).
void add_unique(TableSchema& ts, const std::string& name, std::vector<IndexColumn> columns, ast::ConflictClause on_conflict,
                const std::vector<std::string>& spelled = {}, size_t statement_from = SIZE_MAX) {
  std::set<int> wanted;
  std::string list, minted = "_uc";
  for (size_t i = 0; i < columns.size(); ++i) {
    const IndexColumn& c = columns[i];
    wanted.insert(c.column);
    list += (list.empty() ? "" : ", ") + (i < spelled.size() ? spelled[i] : ts.columns[c.column].name);
    minted += "_" + ts.columns[c.column].name;
  }
  // Two unnamed UNIQUEs over one column set are one rule declared twice; a named one is
  // its own identity (addressable and droppable by name), so it may sit beside either.
  for (const IndexSchema& ix : ts.indexes) {
    std::set<int> have;
    for (const IndexColumn& c : ix.columns) have.insert(c.column);
    if (name.empty() && ix.constraint && !ix.constraint_named && have == wanted)
      fail(StatusCode::kConstraint, "an equivalent UNIQUE constraint on (" + list + ") already exists");
  }
  // The backing structure takes the constraint's name, or the derived `_uc_<cols>`: an
  // index of that name on the table would be silently taken over.
  const std::string derived = name.empty() ? minted : name;
  // Two constraints deriving one structure name would share one structure, keyed on the
  // other's columns (checked ahead of the index names).
  IndexSchema probe;
  probe.constraint_named = !name.empty();
  probe.columns = columns;
  for (size_t i = 0; i < ts.indexes.size(); ++i) {
    const IndexSchema& other = ts.indexes[i];
    if (!derives_same_structure(other, name, derived)) continue;
    if (i >= statement_from)
      fail(StatusCode::kError, describe_unique(ts, other) + " and " +
                                   (name.empty() ? describe_unique(ts, probe) : "the UNIQUE constraint '" + name + "'") +
                                   " both derive backing structure name '" + derived + "'. Rename one of them.");
    fail(StatusCode::kError, "UNIQUE constraint '" + derived + "' would collide with the backing structure of " +
                                 describe_unique(ts, other));
  }
  for (const IndexSchema& other : ts.indexes)
    if (!other.constraint && iequals(other.name, derived))
      fail(StatusCode::kError, backing_index_collision(ts.name, derived, other.name));
  IndexSchema ix;
  ix.unique = true;
  ix.constraint = true;
  ix.constraint_named = !name.empty();
  ix.name = name;
  if (name.empty()) {
    ix.name = mint(ts, minted);
    for (int n = 2; std::any_of(ts.indexes.begin(), ts.indexes.end(), [&](const IndexSchema& o) { return iequals(o.name, ix.name); }); ++n)
      ix.name = minted + "_" + std::to_string(n);
  }
  if (on_conflict != ast::ConflictClause::kNone) ix.on_conflict = declared_conflict(on_conflict);
  ix.columns = std::move(columns);
  ts.indexes.push_back(std::move(ix));
}


CheckSchema make_check(const std::string& name, const ast::Expr& e, const std::vector<ast::RowOp>& ops,
                       ast::ConflictClause on_conflict, const std::string& table) {
  // Anywhere in it, a subquery's clauses too (as CREATE TABLE judges it).
  if (ast::contains_parameter(e))
    fail(StatusCode::kError,
         "CHECK constraint '" + name + "' on table '" + table + "' may not reference bind parameters.");
  CheckSchema ck;
  ck.name = name;
  ck.expr = own_expr(e);
  if (on_conflict != ast::ConflictClause::kNone) ck.on_conflict = declared_conflict(on_conflict);
  set_check_ops(ck, ops);
  return ck;
}

int require_column(const TableSchema& ts, const std::string& name) {
  int idx = ts.find_column(name);
  if (idx < 0) fail(StatusCode::kError, "Column '" + name + "' not found in table '" + ts.name + "'");
  return idx;
}

// A column's collation, as CREATE TABLE checks it (takes_binary_only).
void require_collation_supported(const ColumnSchema& col) {
  if (takes_binary_only(col.logical_type) && col.collation && !iequals(col.collation->name(), "BINARY"))
    fail(StatusCode::kError, "Unknown collation '" + col.collation->name() + "' for type '" + to_upper(col.type_name) +
                                 "' (it supports BINARY only)");
}

bool is_key_member(const TableSchema& ts, int column) {
  for (auto& k : ts.primary_key)
    if (k.column == column) return true;
  return false;
}

// ---------------------------------------------------------------- the arms

AlterPlan plan_rename_table(AlterCtx& c) {
  const std::string& to = c.s.new_name;
  std::string schema = c.old().schema_name, from = c.table();
  // sql-alter.md "RENAME TABLE": "Fails if the new name already exists" — the table's own
  // name too, in any case (names are case-insensitive; SQLite refuses both).
  if (c.db.catalog().find(schema, to) || c.db.catalog().find_view(schema, to))
    fail(StatusCode::kError, "Table '" + to + "' already exists in schema '" + schema + "'");
  c.db.catalog().check_unreserved("table", schema, to);
  AlterPlan p{c.old(), {}, false, {}, {}};
  p.schema.name = to;
  p.change.kind = QRS_CHANGE_RENAME_TABLE;
  p.change.name = from;
  p.change.new_name = to;
  DdlContext& db = c.db;
  p.after = [&db, schema, from, to] {
    for (auto& t : db.catalog().tables()) {
      bool retargeted = false;
      for (ForeignKeySchema& fk : t->schema.foreign_keys)
        if (fk.referenced_schema == schema && iequals(fk.referenced_table, from)) {
          fk.referenced_table = to;
          retargeted = true;
        }
      // The stored catalog follows; the renamed table itself is persisted by its ALTER.
      if (retargeted && !(iequals(t->schema.schema_name, schema) && iequals(t->schema.name, to))) db.persist_table(*t);
    }
    propagate_rename(db, Renamer::table(schema, from, to));
  };
  return p;
}

AlterPlan plan_rename_column(AlterCtx& c) {
  int idx = require_column(c.old(), c.s.name);
  const std::string& to = c.s.new_name;
  int other = c.old().find_column(to);
  if (other >= 0 && other != idx)
    fail(StatusCode::kError, "Column '" + to + "' already exists in table '" + c.table() + "'");
  // A materialized view republishing the column under its own name (a bare projection
  // or a star) would then publish `to` twice: refused before anything changes.
  // Whether a dependent body over the table (no column list, no compound) publishes the
  // renamed column under its own name: a bare projection of it, or a star.
  auto republishes = [&](const ast::Select& body) {
    if (!body.compounds.empty()) return false;
    Renamer probe = Renamer::column(c.old().schema_name, c.table(), c.old().columns[idx].name, to);
    if (!probe.reads_target_table(body)) return false;
    for (const ast::ResultColumn& rc : body.core.columns)
      if (rc.kind != ast::ResultColumn::Kind::kExpr ||
          (rc.alias.empty() && rc.expr && rc.expr->kind == ast::ExprKind::kColumn &&
           iequals(static_cast<const ast::ColumnRef&>(*rc.expr).column, c.old().columns[idx].name)))
        return true;
    return false;
  };
  for (const auto& t : c.db.catalog().tables()) {
    if (!t->schema.derivation || !t->schema.derivation->columns.empty() || t->schema.find_column(to) < 0) continue;
    if (republishes(*t->schema.derivation->body))
      fail(StatusCode::kError, "Cannot rename column '" + c.old().columns[idx].name + "' of '" + c.table() +
                                   "' to '" + to + "': materialized view '" + t->schema.name +
                                   "' republishes it and already publishes a column named '" + to + "'");
  }
  // A plain view likewise (sql-alter.md "RENAME COLUMN": the dependent would publish two
  // columns of the new name); an explicit column list pins its names.
  for (const auto& v : c.db.catalog().views()) {
    if (!v->definition || !v->definition->select || !v->columns.empty()) continue;
    const ast::Select& body = *v->definition->select;
    if (!republishes(body)) continue;
    std::vector<std::string> published;
    try {
      Planner planner(c.db);
      published = planner.plan_view_body(body, v->schema_name).names;
    } catch (const Error&) {
      continue;  // a view that no longer plans publishes nothing to collide with
    }
    if (std::any_of(published.begin(), published.end(), [&](const std::string& n) { return iequals(n, to); }))
      fail(StatusCode::kError, "Cannot rename column '" + c.old().columns[idx].name + "' of '" + c.table() +
                                   "' to '" + to + "': view '" + v->name +
                                   "' republishes it and already publishes a column named '" + to + "'");
  }
  // A view (plain or maintained) reading the table beside another source that names `to`
  // bare would find it ambiguous once the table has a `to` too: refused (qualify the
  // reference in the view first), as SQLite refuses a rename that breaks the schema.
  {
    Renamer probe = Renamer::column(c.old().schema_name, c.table(), c.old().columns[idx].name, to);
    auto breaks = [&](const ast::Select& body) {
      if (!probe.reads_target_table(body)) return false;
      std::vector<const ast::QualifiedName*> names;
      ast::named_sources(body, names);
      if (names.size() < 2) return false;
      return ast::any_expr_in_select(body, [&](const ast::Expr& e) {
        return e.kind == ast::ExprKind::kColumn && static_cast<const ast::ColumnRef&>(e).table.empty() &&
               iequals(static_cast<const ast::ColumnRef&>(e).column, to);
      });
    };
    for (const auto& v : c.db.catalog().views())
      if (v->definition && v->definition->select && breaks(*v->definition->select))
        fail(StatusCode::kError, "Cannot rename column '" + c.old().columns[idx].name + "' of '" + c.table() + "' to '" +
                                     to + "': view '" + v->name + "' names '" + to +
                                     "' unqualified beside another source, which the rename would make ambiguous "
                                     "(qualify it in the view first)");
    for (const auto& t : c.db.catalog().tables())
      if (t->schema.derivation && t->schema.derivation->body && breaks(*t->schema.derivation->body))
        fail(StatusCode::kError, "Cannot rename column '" + c.old().columns[idx].name + "' of '" + c.table() + "' to '" +
                                     to + "': materialized view '" + t->schema.name + "' names '" + to +
                                     "' unqualified beside another source, which the rename would make ambiguous "
                                     "(qualify it in the view first)");
  }
  AlterPlan p{c.old(), {}, false, {}, {}};
  std::string from = p.schema.columns[idx].name;
  p.schema.columns[idx].name = to;
  // An unnamed UNIQUE's structure is named after its columns' current names
  // (`_uc_<cols>`), so it moves with the column — refused when an index of the table
  // already holds the new name.
  for (IndexSchema& ix : p.schema.indexes) {
    bool covers = std::any_of(ix.columns.begin(), ix.columns.end(), [idx](const IndexColumn& k) { return k.column == idx; });
    if (!ix.constraint || ix.constraint_named || !covers) continue;
    std::string derived = "_uc";
    for (const IndexColumn& k : ix.columns) derived += "_" + p.schema.columns[k.column].name;
    for (const IndexSchema& other : p.schema.indexes)
      if (&other != &ix && other.constraint && iequals(other.name, derived))
        fail(StatusCode::kError, "UNIQUE constraint '" + derived + "' would collide with the backing structure of " +
                                     describe_unique(p.schema, other));
    for (const IndexSchema& other : p.schema.indexes)
      if (!other.constraint && iequals(other.name, derived))
        fail(StatusCode::kError, backing_index_collision(p.schema.name, derived, other.name));
    ix.name = derived;
  }
  p.change.kind = QRS_CHANGE_RENAME_COLUMN;
  p.change.column = idx;
  p.change.name = from;
  p.change.new_name = to;
  DdlContext& db = c.db;
  std::string schema = c.old().schema_name, table = c.table();
  p.after = [&db, schema, table, from, to] {
    for (auto& t : db.catalog().tables()) {
      bool retargeted = false;
      for (ForeignKeySchema& fk : t->schema.foreign_keys)
        if (fk.referenced_schema == schema && iequals(fk.referenced_table, table))
          for (std::string& rc : fk.referenced_columns)
            if (iequals(rc, from)) {
              rc = to;
              retargeted = true;
            }
      // The stored catalog follows; the altered table itself is persisted by its ALTER.
      if (retargeted && !(iequals(t->schema.schema_name, schema) && iequals(t->schema.name, table))) db.persist_table(*t);
    }
    propagate_rename(db, Renamer::column(schema, table, from, to).with_catalog(db.catalog()));
    db.note_column_rename(schema, table, from, to);
  };
  return p;
}

AlterPlan plan_add_column(AlterCtx& c) {
  const ast::ColumnDef& cd = *c.s.column;
  if (c.old().find_column(cd.name) >= 0)
    fail(StatusCode::kError, "Column '" + cd.name + "' already exists in table '" + c.table() + "'");
  validate_column_tags(cd);
  AlterPlan p{c.old(), {}, true, {}, {}};
  TableSchema& ns = p.schema;
  ColumnSchema col = build_column(c.db, cd);
  const ast::Expr* def = nullptr;
  std::vector<CheckSchema> checks;
  std::vector<ForeignKeySchema> fks;
  std::vector<const ast::ColumnConstraint*> uniques;
  int idx = static_cast<int>(ns.columns.size());
  for (auto& k : cd.constraints) {
    using K = ast::ColumnConstraint::Kind;
    switch (k.kind) {
      case K::kPrimaryKey:
        fail(StatusCode::kError,
             "Cannot add a PRIMARY KEY column with ALTER "
             "TABLE ADD COLUMN (use ALTER PRIMARY KEY)");
      case K::kUnique:
        uniques.push_back(&k);
        break;
      case K::kDefault:
        def = k.expr.get();
        break;
      case K::kCheck: {
        std::string name = k.name;
        if (name.empty()) {
          TableSchema probe = ns;
          probe.checks.insert(probe.checks.end(), checks.begin(), checks.end());
          name = mint(probe, "_check_" + cd.name);
        }
        checks.push_back(make_check(name, *k.expr, k.check_on, k.on_conflict, c.table()));
        break;
      }
      case K::kForeignKey: {
        TableSchema probe = ns;
        probe.foreign_keys.insert(probe.foreign_keys.end(), fks.begin(), fks.end());
        std::string name = k.name.empty() ? mint(probe, "_fk_" + ns.name + "_" + cd.name) : k.name;
        fks.push_back(foreign_key_of(k, {idx}, name, ns.schema_name, ns.name));
        break;
      }
      default: break;  // the column's own clauses: build_column
    }
  }
  // The column's constraints may collide with the table's or with each other.
  std::vector<std::string> added_names;
  for (auto& ck : checks) added_names.push_back(ck.name);
  for (auto& fk : fks) added_names.push_back(fk.name);
  for (const ast::ColumnConstraint* u : uniques)
    if (!u->name.empty()) added_names.push_back(u->name);
  std::set<std::string> claimed;
  for (const std::string& name : added_names)
    if (constraint_exists(ns, name) || !claimed.insert(to_lower(name)).second)
      fail(StatusCode::kConstraint, "duplicate constraint name '" + name +
                                   "': a constraint with that name already exists on table '" + c.table() + "'");
  if (def && col.generated())
    fail(StatusCode::kError, "Column '" + cd.name + "' cannot have both DEFAULT and GENERATED ALWAYS AS");
  ns.columns.push_back(col);
  // A generated body takes no bind parameters, as CREATE TABLE refuses them (its
  // determinism is judged with the fill below).
  if (col.generated() &&
      ast::contains_parameter(*col.generated_expr))
    fail(StatusCode::kError, "GENERATED ALWAYS AS for column '" + cd.name + "' may not reference bind parameters");
  // The DEFAULT obeys CREATE TABLE's rules (no bare column, deterministic, no bind
  // parameters): the catalog reloads the table from its CREATE text.
  if (def) {
    validate_schema_expressions(c.db, ns);
    TableEntry probe;
    probe.schema = ns;
    resolve_default(c.db, probe, idx);
  }
  // A generated column: names, determinism and dependency order as at CREATE TABLE,
  // over the new layout; existing rows get the computed value.
  std::shared_ptr<GeneratedFill> generated;
  if (col.generated()) {
    generated = std::make_shared<GeneratedFill>(GeneratedFill::make(c, ns, idx));
    ns.generated_order = generated->shadow->schema.generated_order;
  }
  const size_t statement_from = ns.indexes.size();
  for (const ast::ColumnConstraint* u : uniques)
    add_unique(ns, u->name, {IndexColumn{idx, false, ns.columns[idx].collation}}, u->on_conflict, {}, statement_from);
  size_t first_check = ns.checks.size();
  ns.checks.insert(ns.checks.end(), checks.begin(), checks.end());
  ns.foreign_keys.insert(ns.foreign_keys.end(), fks.begin(), fks.end());
  attach_column_tags(cd, ns, idx);

  auto fill = std::make_shared<DefaultFill>(DefaultFill::make(c, def, ns.columns[idx], ns));
  ExecContext* ctx = &c.ctx;
  auto schema = std::make_shared<TableSchema>(ns);
  p.change.kind = QRS_CHANGE_ADD_COLUMN;
  p.change.column = idx;
  p.change.name = cd.name;
  if (generated)
    p.change.fill = [generated, ctx](std::span<const Value> old_row) { return generated->value(old_row, *ctx); };
  else
    p.change.fill = [fill, schema, idx, ctx](std::span<const Value> old_row) {
      return fill->value(old_row, schema->columns[idx], *schema, *ctx);
    };
  compute_fill_first(c, generated ? ns.columns[idx].generated_expr.get() : def, p.change.fill);
  std::vector<const CheckSchema*> added;
  for (size_t i = first_check; i < ns.checks.size(); ++i) added.push_back(&ns.checks[i]);
  // By value: the plan (and this frame) move on before the arm's commit calls it.
  auto extend = [fill_row = p.change.fill](const Row& r) {
    Row out = r;
    out.push_back(fill_row(r));
    return out;
  };
  validate_checks(c, ns, added, extend);
  std::vector<const ForeignKeySchema*> added_fks;
  for (size_t i = ns.foreign_keys.size() - fks.size(); i < ns.foreign_keys.size(); ++i)
    added_fks.push_back(&ns.foreign_keys[i]);
  validate_foreign_keys(c, ns, added_fks, extend);
  if (!uniques.empty()) p.to_new = extend;
  return p;
}

// DROP COLUMN: another table's CHECK that reaches the column through a view chain (its
// own text need not name the table at all) is found the way assertions are: each CHECK
// reaching the table through views is bound again against the narrowed table, alone.
void refuse_checks_reaching_through_views(AlterCtx& c, const TableSchema& narrowed, const std::string& col) {
  for (auto& t : c.db.catalog().tables()) {
    const std::string owner =
        t->schema.schema_name == c.old().schema_name ? t->schema.name : t->schema.schema_name + "." + t->schema.name;
    for (size_t i = 0; i < t->schema.checks.size(); ++i) {
      const CheckSchema ck = t->schema.checks[i];
      auto refs = expression_references(c.db, *ck.expr, t->schema.schema_name);
      const AssertionReference* hit = table_reference(refs, c.old().schema_name, c.table());
      if (!hit || hit->through.empty()) continue;
      if (t == c.entry) {
        // The table's own CHECK: what it reaches through the chain must still plan.
        if (plan_failure_when_narrowed(*c.entry, narrowed, [&] { plan_path_bodies(c.db, *hit); }).empty()) continue;
        fail(StatusCode::kError, "Cannot drop column '" + col + "' from '" + c.table() + "': CHECK constraint '" +
                                     ck.name + "' reaches it" + describe_view_chain(*hit));
      }
      // Bind this CHECK alone (the table's other CHECKs set aside meanwhile).
      std::vector<CheckSchema> all = std::move(t->schema.checks);
      t->schema.checks = {ck};
      std::string failure;
      try {
        failure = plan_failure_when_narrowed(*c.entry, narrowed, [&] {
          Planner planner(c.db);
          planner.set_schema_authored(t->schema.schema_name);
          std::set<int> read;
          plan_path_bodies(c.db, *hit);
          bind_checks(c.db, planner, *t, {}, read);
        });
      } catch (...) {
        t->schema.checks = std::move(all);
        throw;
      }
      t->schema.checks = std::move(all);
      if (failure.empty()) continue;
      fail(StatusCode::kError, "Cannot drop column '" + col + "' from '" + c.table() + "': CHECK constraint '" +
                                   ck.name + "' on table '" + owner + "' reaches it" + describe_view_chain(*hit) +
                                   " (" + failure + ")");
    }
    // A DEFAULT or generated expression reaching the table through a chain fails when a
    // body on that chain no longer plans against the narrowed table.
    for (const ColumnSchema& oc : t->schema.columns) {
      const ast::Expr* e = oc.generated() ? oc.generated_expr.get() : oc.default_expr.get();
      if (!e) continue;
      auto refs = expression_references(c.db, *e, t->schema.schema_name);
      const AssertionReference* hit = table_reference(refs, c.old().schema_name, c.table());
      if (!hit || hit->through.empty()) continue;
      // The expression's own subqueries too (a star view republishes the column): judged
      // only when they plan against the table as it is.
      std::function<void(const ast::Expr&)> plan_subqueries = [&](const ast::Expr& x) {
        ast::for_each_child(
            x, [&](const ast::ExprPtr& child) { plan_subqueries(*child); },
            [&](const ast::Select& q) {
              Planner planner(c.db);
              planner.plan_view_body(q, t->schema.schema_name);
            });
      };
      auto probe = [&] {
        plan_path_bodies(c.db, *hit);
        plan_subqueries(*e);
      };
      bool plans_now = true;
      try {
        plan_subqueries(*e);
      } catch (const Error&) {
        plans_now = false;  // correlated to its row: the chain's bodies alone decide
      }
      if (plan_failure_when_narrowed(*c.entry, narrowed, plans_now ? std::function<void()>(probe) : [&] {
            plan_path_bodies(c.db, *hit);
          }).empty())
        continue;
      fail(StatusCode::kError, "Cannot drop column '" + col + "' from '" + c.table() + "': the " +
                                   (oc.generated() ? "GENERATED expression" : "DEFAULT") + " of column '" + oc.name +
                                   "' on table '" + owner + "' reaches it" + describe_view_chain(*hit));
    }
  }
}

}  // namespace

std::string expression_dependent_of(DdlContext& db, const TableEntry& target) {
  const std::string& schema = target.schema.schema_name;
  const std::string& name = target.schema.name;
  auto reads = [&](const ast::Expr& e, const TableEntry& owner) {
    auto probe = ast::clone(e);  // the walker rewrites what it visits: run it on a copy
    Renamer r = Renamer::table(schema, name, name + "\x01");
    r.set_bare_binds_elsewhere(owner.schema.schema_name != schema &&
                               db.catalog().find(owner.schema.schema_name, name) != nullptr);
    return r.owned_expr(*probe, owner.schema.schema_name, owner.schema.name);
  };
  for (auto& t : db.catalog().tables()) {
    if (t.get() == &target) continue;
    const std::string tname = t->schema.schema_name == schema ? t->schema.name : t->qualified_name();
    for (const CheckSchema& ck : t->schema.checks)
      if (reads(*ck.expr, *t)) return "it is referenced by CHECK constraint '" + ck.name + "' on table '" + tname + "'";
    for (const ColumnSchema& c : t->schema.columns) {
      if (c.default_expr && reads(*c.default_expr, *t))
        return "it is referenced by the DEFAULT of column '" + c.name + "' on table '" + tname + "'";
      if (c.generated() && reads(*c.generated_expr, *t))
        return "it is referenced by the GENERATED expression of column '" + c.name + "' on table '" + tname + "'";
    }
  }
  return {};
}

std::string expression_dependent_via_views(DdlContext& db, bool view, const std::string& schema,
                                           const std::string& name, const TableEntry* self) {
  const std::string lschema = to_lower(schema);
  for (auto& t : db.catalog().tables()) {
    if (t.get() == self) continue;
    const std::string tname = t->schema.schema_name == schema ? t->schema.name : t->qualified_name();
    auto describe = [&](const ast::Expr& e, const std::string& what) -> std::string {
      const AssertionReference* hit = nullptr;
      const std::vector<AssertionReference> refs = expression_references(db, e, t->schema.schema_name);
      for (const AssertionReference& r : refs) {
        if (r.is_view != view || r.schema != lschema || !iequals(r.name, name)) continue;
        if (!hit || r.through.size() < hit->through.size()) hit = &r;
      }
      if (!hit) return {};
      // A table read directly is expression_dependent_of's (its walk is scope-exact).
      if (hit->through.empty()) return view ? "it is referenced by " + what : std::string();
      return what + " reaches it" + describe_view_chain(*hit);
    };
    std::string why;
    for (const CheckSchema& ck : t->schema.checks)
      if (!(why = describe(*ck.expr, "CHECK constraint '" + ck.name + "' on table '" + tname + "'")).empty()) return why;
    for (const ColumnSchema& c : t->schema.columns) {
      if (c.default_expr &&
          !(why = describe(*c.default_expr, "the DEFAULT of column '" + c.name + "' on table '" + tname + "'")).empty())
        return why;
      if (c.generated() &&
          !(why = describe(*c.generated_expr,
                           "the GENERATED expression of column '" + c.name + "' on table '" + tname + "'"))
               .empty())
        return why;
    }
  }
  return {};
}

bool rename_in_view_body(DdlContext& db, const std::string& view_schema, ast::Select& body,
                         const std::string& schema, const std::string& table, const std::string& column_from,
                         const std::string& to) {
  Renamer renamer = column_from.empty() ? Renamer::table(schema, table, to)
                                        : Renamer::column(schema, table, column_from, to).with_catalog(db.catalog());
  // As propagate_rename: a bare name in the body binds the target only when the view lives
  // in the target's schema.
  renamer.set_bare_binds_elsewhere(view_schema != schema);
  return renamer.view_body(body);
}

namespace {

AlterPlan plan_drop_column(AlterCtx& c) {
  int idx = c.old().find_column(c.s.name);
  if (idx < 0) fail(StatusCode::kError, "Column '" + c.s.name + "' not found in table '" + c.table() + "'");
  const std::string col = c.old().columns[idx].name;
  auto refuse = [&](const std::string& why) {
    fail(StatusCode::kError, "Cannot drop column '" + col + "' from '" + c.table() + "': " + why);
  };
  if (is_key_member(c.old(), idx)) refuse("Cannot drop PRIMARY KEY column '" + col + "'");
  if (c.old().columns.size() == 1) refuse("a table must keep at least one column");
  // The table's own expressions, scope-aware: a qualifier an inner FROM rebinds (a table
  // called "new") names that source, not the written row (sql-alter.md "DROP COLUMN").
  auto reads_column = [&](const ast::Expr& e, const std::string&, const std::string&) {
    auto probe = ast::clone(e);  // the walker rewrites what it visits: run it on a copy
    Renamer r = Renamer::column(c.old().schema_name, c.table(), col, col + "\x01");
    r.with_catalog(c.db.catalog());
    return r.owned_expr(*probe, c.old().schema_name, c.table());
  };
  for (auto& other : c.old().columns)
    if (other.generated() && !iequals(other.name, col) && reads_column(*other.generated_expr, c.table(), col))
      refuse("it is referenced by generated column '" + other.name + "'");
  for (auto& ck : c.old().checks) {
    if (!reads_column(*ck.expr, c.table(), col)) continue;
    // An unnamed table-level CHECK (minted `_check_<n>`) has no name the user
    // knows: quote its expression instead.
    bool minted = ck.name.rfind("_check_", 0) == 0 &&
                  std::all_of(ck.name.begin() + 7, ck.name.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    refuse(minted ? "it is referenced by the CHECK constraint (" + expr_to_string(*ck.expr) + ")"
                  : "CHECK constraint '" + ck.name + "' on table '" + c.table() + "' references it");
  }
  for (auto& other : c.old().columns)
    if (other.default_expr && !iequals(other.name, col) && reads_column(*other.default_expr, c.table(), col))
      refuse("it is referenced by the DEFAULT of column '" + other.name + "'");
  // A partial index could not evaluate its predicate (sql-alter.md "DROP COLUMN"); a key
  // column alone is fine (the index narrows).
  for (const IndexSchema& ix : c.old().indexes)
    if (ix.where && reads_column(*ix.where, c.table(), col))
      refuse("it is referenced by the WHERE clause of partial index '" + ix.name + "' — drop the index first");
  // Another table's CHECK, DEFAULT or generated column reading the column through a
  // subquery (a scope-aware probe: the rename walker reports whether it would rewrite).
  auto reads_through_subquery = [&](const ast::Expr& e, const TableEntry& owner) {
    auto probe = ast::clone(e);  // the walker rewrites what it visits: run it on a copy
    Renamer r = Renamer::column(c.old().schema_name, c.table(), col, col + "\x01");
    r.with_catalog(c.db.catalog());
    r.set_bare_binds_elsewhere(owner.schema.schema_name != c.old().schema_name &&
                               c.db.catalog().find(owner.schema.schema_name, c.table()) != nullptr);
    return r.owned_expr(*probe, owner.schema.schema_name, owner.schema.name);
  };
  for (auto& t : c.db.catalog().tables()) {
    if (t == c.entry) continue;
    // Named as the user would: qualified when it lives in another schema.
    const std::string tname =
        t->schema.schema_name == c.old().schema_name ? t->schema.name : t->schema.schema_name + "." + t->schema.name;
    for (const CheckSchema& ck : t->schema.checks)
      if (reads_through_subquery(*ck.expr, *t))
        refuse("CHECK constraint '" + ck.name + "' on table '" + tname + "' references it");
    for (const ColumnSchema& d : t->schema.columns)
      if (d.default_expr && reads_through_subquery(*d.default_expr, *t))
        refuse("it is referenced by the DEFAULT of column '" + d.name + "' on table '" + tname + "'");
    for (const ColumnSchema& g : t->schema.columns) {
      if (!g.generated()) continue;
      if (reads_through_subquery(*g.generated_expr, *t))
        refuse("it is referenced by the GENERATED expression of column '" + g.name + "' on table '" + tname + "'");
    }
  }
  // A foreign key (of any table) naming the column as a parent column would dangle; the
  // table's own key whose child column this is goes away with it instead.
  for (auto& t : c.db.catalog().tables())
    for (const ForeignKeySchema& fk : t->schema.foreign_keys) {
      if (fk.referenced_schema != c.old().schema_name || !iequals(fk.referenced_table, c.table())) continue;
      bool names = std::any_of(fk.referenced_columns.begin(), fk.referenced_columns.end(),
                               [&](const std::string& rc) { return iequals(rc, col); });
      bool own_child = t == c.entry && std::find(fk.columns.begin(), fk.columns.end(), idx) != fk.columns.end();
      if (names && !own_child)
        refuse("it is referenced by FOREIGN KEY '" + fk.name + "' on table '" + t->schema.name + "'");
    }
  AlterPlan p{c.old(), {}, true, {}, {}};
  TableSchema& ns = p.schema;
  ns.columns.erase(ns.columns.begin() + idx);
  for (auto& k : ns.primary_key)
    if (k.column > idx) --k.column;
  // A foreign key naming the column goes with it; the others are renumbered.
  std::vector<ForeignKeySchema> kept;
  for (auto& fk : ns.foreign_keys) {
    if (std::find(fk.columns.begin(), fk.columns.end(), idx) != fk.columns.end()) continue;
    for (int& x : fk.columns)
      if (x > idx) --x;
    kept.push_back(fk);
  }
  ns.foreign_keys = std::move(kept);
  // A UNIQUE constraint or unique index naming the column goes with it; a plain index
  // loses the column (and goes when nothing is left); the others are renumbered.
  std::vector<IndexSchema> indexes;
  for (IndexSchema ix : ns.indexes) {
    bool names = std::any_of(ix.columns.begin(), ix.columns.end(), [idx](const IndexColumn& k) { return k.column == idx; });
    if (names && (ix.unique || ix.where)) continue;
    std::vector<IndexColumn> cols;
    for (IndexColumn k : ix.columns) {
      if (k.column == idx) continue;
      if (k.column > idx) --k.column;
      cols.push_back(k);
    }
    if (cols.empty()) continue;
    ix.columns = std::move(cols);
    indexes.push_back(std::move(ix));
  }
  ns.indexes = std::move(indexes);
  // The generated columns keep their dependency order, renumbered past the gap.
  std::vector<int> order;
  for (int g : ns.generated_order)
    if (g != idx) order.push_back(g > idx ? g - 1 : g);
  ns.generated_order = std::move(order);
  refuse_checks_reaching_through_views(c, ns, col);
  c.db.assertions().guard_column_drop(c.db, *c.entry, ns, col);
  p.change.kind = QRS_CHANGE_DROP_COLUMN;
  p.change.column = idx;
  p.change.name = col;
  return p;
}

AlterPlan plan_alter_primary_key(AlterCtx& c) {
  AlterPlan p{c.old(), {}, true, {}, {}};
  TableSchema& ns = p.schema;
  std::vector<KeyColumn> key;
  std::set<int> seen;
  for (auto& ic : c.s.key) {
    int idx = require_column(ns, ic.name);
    if (!seen.insert(idx).second)
      fail(StatusCode::kError, "Column '" + ic.name + "' appears twice in the PRIMARY KEY of '" + ns.name + "'");
    key.push_back({idx, ic.desc});
  }
  for (auto& col : ns.columns) col.primary_key = false;
  for (auto& k : key) ns.columns[k.column].primary_key = true;
  ns.primary_key = std::move(key);
  ns.primary_key_declared = true;
  p.change.kind = QRS_CHANGE_ALTER_PRIMARY_KEY;
  return p;
}

AlterPlan plan_alter_column(AlterCtx& c) {
  int idx = require_column(c.old(), c.s.name);
  AlterPlan p{c.old(), {}, false, {}, {}};
  TableSchema& ns = p.schema;
  ColumnSchema& col = ns.columns[idx];
  p.change.column = idx;
  p.change.name = col.name;
  ExecContext* ctx = &c.ctx;
  switch (c.s.column_action) {
    case ColumnAction::kDropNotNull:
      col.not_null = false;
      p.change.kind = QRS_CHANGE_DROP_NOT_NULL;
      break;
    case ColumnAction::kSetNotNull: {
      col.not_null = true;
      p.change.kind = QRS_CHANGE_SET_NOT_NULL;
      p.rewrites_rows = true;
      auto fill = std::make_shared<DefaultFill>(DefaultFill::make(c, col.default_expr.get(), col, ns));
      auto schema = std::make_shared<TableSchema>(ns);
      p.change.fill = [fill, schema, idx, ctx](std::span<const Value> old_row) {
        return fill->value(old_row, schema->columns[idx], *schema, *ctx);
      };
      compute_fill_first(c, col.default_expr.get(), p.change.fill);
      // UNIQUE is judged on the backfilled rows.
      p.to_new = [fill = p.change.fill, idx](const Row& r) {
        Row out = r;
        if (out[idx].is_null()) out[idx] = fill(r);
        return out;
      };
      break;
    }
    case ColumnAction::kSetDefault:
    case ColumnAction::kDropDefault: {
      p.change.kind = QRS_CHANGE_SET_DEFAULT;
      if (c.s.column_action == ColumnAction::kDropDefault) {
        col.default_expr.reset();
        break;
      }
      if (!c.s.default_value) fail(StatusCode::kInternal, "SET DEFAULT without an expression");
      // As CREATE TABLE refuses it: a generated column's value is its expression (and the
      // table's stored text, with both, would not read back).
      if (col.generated())
        fail(StatusCode::kError, "Column '" + col.name + "' cannot have both DEFAULT and GENERATED ALWAYS AS");
      // The scope checks of the CREATE TABLE validator stay active with
      // nondeterministic_schema on (determinism.md "Validation Timing").
      if (ast::contains_parameter(*c.s.default_value))
        throw Error(StatusCode::kError, "DEFAULT for column '" + col.name + "' may not reference bind parameters",
                    c.s.default_value->site);
      col.default_expr = own_expr(*c.s.default_value);
      {
        // The CREATE TABLE rules for the new default (names, `new.c` siblings, context
        // variables, determinism), judged on a shadow of the new schema.
        TableEntry shadow;
        shadow.schema = ns;
        resolve_schema_expressions(c.db, shadow);
      }
      // A default that reads nothing of the row must convert to the column's type now.
      bool reads = false;
      walk_expr(
          *c.s.default_value, [&](ast::Expr& x) { reads = reads || x.kind == ast::ExprKind::kColumn; },
          [&](ast::Select&) { reads = true; });
      if (!reads) DefaultFill::make(c, c.s.default_value.get(), col, ns);
      break;
    }
    case ColumnAction::kSetDataType: {
      if (is_key_member(ns, idx))
        fail(StatusCode::kError, "Cannot SET DATA TYPE on PRIMARY KEY column '" + col.name + "' of '" + ns.name + "'");
      qrs_logical_type before = col.logical_type;
      col.type_name = c.s.type_name;
      col.logical_type = logical_type_from_name(c.s.type_name);
      // The column keeps its collation; the temporal and JSON types accept BINARY only.
      require_collation_supported(col);
      p.change.kind = QRS_CHANGE_SET_DATA_TYPE;
      // The existing default must hold under the new type, as CREATE TABLE would
      // demand.
      if (col.default_expr) DefaultFill::make(c, col.default_expr.get(), col, ns);
      p.rewrites_rows = col.logical_type != before;  // an alias (text → varchar) is schema-only
      auto schema = std::make_shared<TableSchema>(ns);
      p.to_new = [schema, idx](const Row& r) {
        Row out = r;
        try {
          out[idx] = DmlWriter::coerce(r[idx], schema->columns[idx], *schema);
        } catch (const Error&) {
        }
        return out;
      };
      p.change.convert = [schema, idx](const Value& v) {
        const ColumnSchema& target = schema->columns[idx];
        try {
          return DmlWriter::coerce(v, target, *schema);
        } catch (const Error& e) {
          throw Error(StatusCode::kMismatch, "Cannot convert value '" + v.to_text() + "' of column " + schema->name +
                                                 "." + target.name + " to " + target.type_name + ": " +
                                                 e.raw_message());
        }
      };
      break;
    }
    case ColumnAction::kSetCollate: {
      auto coll = c.db.registry().find_collation(c.s.collation);
      if (!coll)
        fail(StatusCode::kError, "Unknown collation '" + c.s.collation + "' for type '" +
                                     (col.type_name.empty() ? std::string("ANY") : to_upper(col.type_name)) + "'");
      // Index members that compared under the column's collation follow it.
      for (IndexSchema& ix : ns.indexes)
        for (IndexColumn& k : ix.columns)
          if (k.column == idx && k.collation == col.collation) k.collation = coll;
      col.collation = coll;
      col.collation_declared = true;
      require_collation_supported(col);
      p.change.kind = QRS_CHANGE_SET_COLLATION;
      p.rewrites_rows = is_key_member(ns, idx);  // the key order changes
      break;
    }
  }
  return p;
}

AlterPlan plan_add_constraint(AlterCtx& c) {
  const ast::TableConstraint& tc = *c.s.constraint;
  validate_reserved_tags(tc.tags, TagSite::kPhysicalConstraint);
  AlterPlan p{c.old(), {}, false, {}, {}};
  TableSchema& ns = p.schema;
  // A UNIQUE named like an unnamed one's derived structure is refused as that collision
  // (ahead of the name rule, which would blame a name the user never wrote).
  if (tc.kind == ast::TableConstraint::Kind::kUnique && !tc.name.empty())
    for (const IndexSchema& other : ns.indexes)
      if (derives_same_structure(other, "", tc.name) && !other.constraint_named)
        fail(StatusCode::kError, "UNIQUE constraint '" + tc.name + "' would collide with the backing structure of " +
                                     describe_unique(ns, other));
  if (!tc.name.empty() && constraint_exists(ns, tc.name))
    fail(StatusCode::kConstraint, "duplicate constraint name '" + tc.name +
                                 "': a constraint with that name already exists on table '" + ns.name + "'");
  p.change.kind = QRS_CHANGE_ADD_CONSTRAINT;
  using K = ast::TableConstraint::Kind;
  switch (tc.kind) {
    case K::kCheck: {
      std::string name = tc.name;
      for (size_t n = ns.checks.size(); name.empty(); ++n) {
        std::string candidate = "check_" + std::to_string(n);
        if (!constraint_exists(ns, candidate)) name = candidate;
      }
      ns.checks.push_back(make_check(name, *tc.expr, tc.check_on, tc.on_conflict, ns.name));
      ns.checks.back().tags = tag_set(tc.tags);
      p.change.name = name;
      validate_checks(c, ns, {&ns.checks.back()}, {});
      break;
    }
    case K::kForeignKey: {
      std::vector<int> cols;
      std::string base = "_fk_" + ns.name;
      for (auto& ic : tc.columns) {
        int idx = ns.find_column(ic.name);
        if (idx < 0) fail(StatusCode::kError, "FK column '" + ic.name + "' not found in table '" + ns.name + "'");
        cols.push_back(idx);
        base += "_" + ic.name;
      }
      std::string name = tc.name.empty() ? mint(ns, base) : tc.name;
      ns.foreign_keys.push_back(foreign_key_of(tc, std::move(cols), name, ns.schema_name, ns.name));
      ns.foreign_keys.back().tags = tag_set(tc.tags);
      p.change.name = name;
      validate_foreign_keys(c, ns, {&ns.foreign_keys.back()}, {});
      break;
    }
    case K::kUnique: {
      std::vector<IndexColumn> cols;
      for (auto& ic : tc.columns) {
        int idx = require_column(ns, ic.name);
        IndexColumn k{idx, ic.desc, ns.columns[idx].collation};
        if (!ic.collation.empty()) {
          k.collation = c.db.registry().find_collation(ic.collation);
          if (!k.collation) fail(StatusCode::kError, "Unknown collation: " + ic.collation);
        }
        cols.push_back(k);
      }
      std::vector<std::string> spelled;
      for (auto& ic : tc.columns) spelled.push_back(ic.name);
      add_unique(ns, tc.name, std::move(cols), tc.on_conflict, spelled);
      ns.indexes.back().tags = tag_set(tc.tags);
      p.change.name = ns.indexes.back().name;
      break;
    }
    case K::kPrimaryKey:
      fail(StatusCode::kError, "Table '" + ns.name + "' already has a primary key; use ALTER PRIMARY KEY to change it");
  }
  return p;
}

AlterPlan plan_drop_constraint(AlterCtx& c) {
  AlterPlan p{c.old(), {}, false, {}, {}};
  TableSchema& ns = p.schema;
  auto check = std::find_if(ns.checks.begin(), ns.checks.end(), [&](auto& x) { return iequals(x.name, c.s.name); });
  auto fk =
      std::find_if(ns.foreign_keys.begin(), ns.foreign_keys.end(), [&](auto& x) { return iequals(x.name, c.s.name); });
  if (check != ns.checks.end()) {
    p.change.name = check->name;
    ns.checks.erase(check);
  } else if (fk != ns.foreign_keys.end()) {
    p.change.name = fk->name;
    ns.foreign_keys.erase(fk);
  } else if (auto ix = std::find_if(ns.indexes.begin(), ns.indexes.end(),
                                    [&](auto& x) { return x.constraint && iequals(x.name, c.s.name); });
             ix != ns.indexes.end()) {
    p.change.name = ix->name;
    ns.indexes.erase(ix);
  } else {
    fail(StatusCode::kNotFound, "Constraint '" + c.s.name + "' not found on table '" + ns.name + "'");
  }
  p.change.kind = QRS_CHANGE_DROP_CONSTRAINT;
  return p;
}

AlterPlan plan_rename_constraint(AlterCtx& c) {
  AlterPlan p{c.old(), {}, false, {}, {}};
  TableSchema& ns = p.schema;
  std::string* slot = nullptr;
  for (auto& ck : ns.checks)
    if (iequals(ck.name, c.s.name)) slot = &ck.name;
  for (auto& fk : ns.foreign_keys)
    if (!slot && iequals(fk.name, c.s.name)) slot = &fk.name;
  IndexSchema* renamed_index = nullptr;
  for (auto& ix : ns.indexes)
    if (!slot && ix.constraint && iequals(ix.name, c.s.name)) {
      slot = &ix.name;
      renamed_index = &ix;
    }
  if (renamed_index) {
    for (const IndexSchema& other : ns.indexes)
      if (&other != renamed_index && other.constraint && !other.constraint_named && iequals(other.name, c.s.new_name))
        fail(StatusCode::kError, "UNIQUE constraint '" + c.s.new_name + "' would collide with the backing structure of " +
                                     describe_unique(ns, other));
    renamed_index->constraint_named = true;
    for (const IndexSchema& other : ns.indexes)
      if (!other.constraint && iequals(other.name, c.s.new_name))
        fail(StatusCode::kError, backing_index_collision(ns.name, c.s.new_name, other.name));
  }
  if (!slot) fail(StatusCode::kNotFound, "Constraint '" + c.s.name + "' not found on table '" + ns.name + "'");
  if (!iequals(*slot, c.s.new_name) && constraint_exists(ns, c.s.new_name))
    fail(StatusCode::kConstraint, "duplicate constraint name '" + c.s.new_name +
                                 "': a constraint with that name already exists on table '" + ns.name + "'");
  p.change.name = *slot;
  p.change.new_name = c.s.new_name;
  *slot = c.s.new_name;
  p.change.kind = QRS_CHANGE_RENAME_CONSTRAINT;
  return p;
}

const char* arm_name(qrs_schema_change_kind k) {
  switch (k) {
    case QRS_CHANGE_ADD_COLUMN:
      return "ADD COLUMN";
    case QRS_CHANGE_DROP_COLUMN:
      return "DROP COLUMN";
    case QRS_CHANGE_RENAME_COLUMN:
      return "RENAME COLUMN";
    case QRS_CHANGE_SET_DATA_TYPE:
      return "ALTER COLUMN … SET DATA TYPE";
    case QRS_CHANGE_SET_NOT_NULL:
      return "ALTER COLUMN … SET NOT NULL";
    case QRS_CHANGE_DROP_NOT_NULL:
      return "ALTER COLUMN … DROP NOT NULL";
    case QRS_CHANGE_SET_DEFAULT:
      return "ALTER COLUMN … SET/DROP DEFAULT";
    case QRS_CHANGE_SET_COLLATION:
      return "ALTER COLUMN … SET COLLATE";
    case QRS_CHANGE_ALTER_PRIMARY_KEY:
      return "ALTER PRIMARY KEY";
    case QRS_CHANGE_ADD_CONSTRAINT:
      return "ADD CONSTRAINT";
    case QRS_CHANGE_DROP_CONSTRAINT:
      return "DROP CONSTRAINT";
    case QRS_CHANGE_RENAME_CONSTRAINT:
      return "RENAME CONSTRAINT";
    case QRS_CHANGE_RENAME_TABLE:
      return "RENAME TO";
  }
  return "ALTER TABLE";
}

// The module first; the catalog only once it succeeded.
// Whether an arm changes what the table's index entries hold (keys, values, storage
// names) or which indexes exist.
bool touches_indexes(const AlterPlan& p, const TableSchema& before) {
  if (before.indexes.empty() && p.schema.indexes.empty()) return false;
  switch (p.change.kind) {
    case QRS_CHANGE_SET_DEFAULT:
    case QRS_CHANGE_DROP_NOT_NULL:
      return false;
    case QRS_CHANGE_RENAME_COLUMN:
    case QRS_CHANGE_RENAME_CONSTRAINT:
      // A UNIQUE constraint's structure is stored under its name (`<table>$idx$<name>`),
      // an unnamed one's derived from its columns' names (`_uc_<cols>`): a rename that
      // changes it moves the structure, or the catalog would name storage that is not
      // there and the next open would fail.
      for (size_t i = 0; i < before.indexes.size() && i < p.schema.indexes.size(); ++i)
        if (!iequals(before.indexes[i].name, p.schema.indexes[i].name)) return true;
      return false;
    case QRS_CHANGE_SET_NOT_NULL:
      return p.rewrites_rows;
    case QRS_CHANGE_ADD_CONSTRAINT:
    case QRS_CHANGE_DROP_CONSTRAINT:
      return before.indexes.size() != p.schema.indexes.size();
    default:
      return true;
  }
}

// An event image recorded before the ALTER, as the altered table holds it (best effort:
// a cell the arm cannot convert keeps its value).
Row reshape_image(const SchemaChange& change, const Row& row) {
  Row out = row;
  size_t col = change.column < 0 ? out.size() : static_cast<size_t>(change.column);
  switch (change.kind) {
    case QRS_CHANGE_ADD_COLUMN:
      if (col <= out.size()) out.insert(out.begin() + static_cast<std::ptrdiff_t>(col), change.fill ? change.fill(row) : Value());
      break;
    case QRS_CHANGE_DROP_COLUMN:
      if (col < out.size()) out.erase(out.begin() + static_cast<std::ptrdiff_t>(col));
      break;
    case QRS_CHANGE_SET_DATA_TYPE:
      if (col < out.size() && change.convert) out[col] = change.convert(out[col]);
      break;
    case QRS_CHANGE_SET_NOT_NULL:
      if (col < out.size() && out[col].is_null() && change.fill) out[col] = change.fill(row);
      break;
    default:
      break;
  }
  return out;
}

// The arm's one schema event (usage.md "What each ALTER TABLE arm reports"), and the
// transaction's recorded data events of the table brought to its new shape.
void announce(AlterCtx& c, const SchemaChange& change) {
  ChangeLog& log = c.db.changes();
  if (!log.capturing()) return;
  const TableSchema& now = c.entry->schema;
  if (change.kind == QRS_CHANGE_RENAME_TABLE)
    log.rename_table(now.schema_name, c.s.table.name, now.name);
  else
    log.reshape_table(now, [&change](const Row& r) { return reshape_image(change, r); });
  SchemaChangeEvent e = schema_event(SchemaChangeKind::kAlter, SchemaObjectKind::kTable, now,
                                     statement_to_string(c.s, now.schema_name));
  switch (c.s.action) {
    case Action::kRenameTable:
      e.old_object_name = c.s.table.name;
      break;
    case Action::kRenameColumn:
      e.object_type = SchemaObjectKind::kColumn;
      e.column_name = c.s.new_name;
      e.old_column_name = c.s.name;
      break;
    case Action::kAddColumn:
      e.object_type = SchemaObjectKind::kColumn;
      e.column_name = c.s.column ? c.s.column->name : std::string();
      break;
    case Action::kDropColumn:
      e.type = SchemaChangeKind::kDrop;
      e.object_type = SchemaObjectKind::kColumn;
      e.column_name = c.s.name;
      break;
    case Action::kAlterColumn:
      e.object_type = SchemaObjectKind::kColumn;
      e.column_name = c.s.name;
      break;
    default:
      break;
  }
  log.record_schema(std::move(e));
}

// A value-semantics ALTER (SET DATA TYPE that changes the type, SET COLLATE) of a column
// a maintained table's body reads — projected or only in a WHERE, join, group or order
// position, directly or through a generated column — can change which rows the body
// gives while its shape stays: the stored rows are no longer provably its rows. Such a
// view is marked stale (tag quereus.mv.stale, persisted with it): it serves its last rows
// and maintenance skips it until REFRESH. A view whose body never reads the column stays
// live (materialized views, mv-schema-change.md).
void stale_maintained_readers(AlterCtx& c, const std::string& column, const std::string& what) {
  const TableSchema& src = c.entry->schema;
  std::vector<std::string> read_as{column};
  for (const ColumnSchema& g : src.columns) {
    if (!g.generated() || iequals(g.name, column)) continue;
    auto probe = ast::clone(*g.generated_expr);
    if (Renamer::column(src.schema_name, src.name, column, column + "\x01").owned_expr(*probe, src.schema_name, src.name))
      read_as.push_back(g.name);
  }
  // The name probe only sees what a body spells at its own level. A body it cannot judge
  // — a star, a CTE, a subquery (in FROM or in an expression), a view or table function
  // among its sources — counts as reading the column: freezing is the safe direction.
  auto expr_opaque = [](const ast::Expr& e) { return ast::contains_subquery(e); };
  std::set<std::string> view_names;
  for (const auto& v : c.db.catalog().views()) view_names.insert(to_lower(v->name));
  std::function<bool(const ast::TableSource&)> source_opaque = [&](const ast::TableSource& t) {
    using K = ast::TableSource::Kind;
    switch (t.kind) {
      case K::kTable: return view_names.count(to_lower(t.table.name)) > 0;
      case K::kJoin:
        return (t.left && source_opaque(*t.left)) || (t.right && source_opaque(*t.right)) || (t.on && expr_opaque(*t.on));
      default: return true;
    }
  };
  auto core_opaque = [&](const ast::SelectCore& core) {
    if (core.nested || !core.values.empty()) return true;
    for (const ast::ResultColumn& rc : core.columns)
      if (rc.kind != ast::ResultColumn::Kind::kExpr || (rc.expr && expr_opaque(*rc.expr))) return true;
    if (core.from && source_opaque(*core.from)) return true;
    if (core.where && expr_opaque(*core.where)) return true;
    for (const auto& g : core.group_by)
      if (expr_opaque(*g)) return true;
    return core.having && expr_opaque(*core.having);
  };
  auto opaque_body = [&](const ast::Select& b) {
    if (b.with || core_opaque(b.core)) return true;
    for (const auto& leg : b.compounds)
      if (core_opaque(leg.core)) return true;
    for (const auto& o : b.order_by)
      if (o.expr && expr_opaque(*o.expr)) return true;
    return false;
  };
  for (auto& t : c.db.catalog().tables()) {
    const auto& d = t->schema.derivation;
    if (!d || !d->body || t == c.entry || t->schema.tags.contains(kStaleTag)) continue;
    if (std::none_of(d->sources.begin(), d->sources.end(), [&](const auto& s) {
          return s.first == src.schema_name && iequals(s.second, src.name);
        }))
      continue;
    bool reads = opaque_body(*d->body);
    for (size_t i = 0; !reads && i < read_as.size(); ++i) {
      auto probe = ast::clone(*d->body);
      reads = Renamer::column(src.schema_name, src.name, read_as[i], read_as[i] + "\x01").view_body(*probe);
    }
    if (!reads) continue;
    t->schema.tags.set(std::string(kStaleTag),
                       what == "drop" ? "column '" + src.name + "." + column + "' its body reads was dropped"
                                      : "the " + what + " of column '" + src.name + "." + column +
                                            "' its body reads changed");
    spdlog::warn("materialized view '{}' is stale: {}; it serves its last rows until REFRESH", t->qualified_name(),
                 tag_text(*t->schema.tags.find(kStaleTag)));
    c.db.persist_table(*t);
  }
}

// Each foreign key the new definition takes part in — its own, and every other table's
// that names it as the parent — passes the collation check CREATE TABLE applies (a parent
// column's collation changed under a child column that declares another: found by the
// store-mode grammar fuzzer, whose next open refused the child). Only a conflict the ALTER
// introduces refuses it: a pair that already conflicted (a child declared before its
// parent, which the corpus's 41.1 §10 accepts until the first write) does not block
// unrelated ALTERs. A rename that brings a table under a forward-declared child's parent
// name is that same forward case, checked at the first write.
void check_fk_collations(AlterCtx& c, const TableSchema& ns) {
  const TableSchema& old = c.old();
  auto introduced = [](const std::function<void()>& now, const std::function<void()>& before) {
    try {
      now();
    } catch (const Error&) {
      try {
        before();
      } catch (const Error&) {
        return;  // it conflicted already
      }
      throw;
    }
  };
  for (const ForeignKeySchema& fk : ns.foreign_keys) {
    const bool self = fk.referenced_schema == ns.schema_name &&
                      (iequals(fk.referenced_table, ns.name) || iequals(fk.referenced_table, old.name));
    auto parent = self ? nullptr : c.db.catalog().find(fk.referenced_schema, fk.referenced_table);
    if (!self && !parent) continue;
    const TableSchema& ps = self ? ns : parent->schema;
    introduced([&] { validate_fk_collations(ns, fk, ps); },
               [&] {
                 for (const ForeignKeySchema& ofk : old.foreign_keys)
                   if (iequals(ofk.name, fk.name)) validate_fk_collations(old, ofk, self ? old : ps);
               });
  }
  for (const auto& t : c.db.catalog().tables()) {
    if (t == c.entry) continue;
    for (const ForeignKeySchema& fk : t->schema.foreign_keys) {
      if (fk.referenced_schema != ns.schema_name) continue;
      if (!iequals(fk.referenced_table, old.name)) continue;
      introduced([&] { validate_fk_collations(t->schema, fk, ns); },
                 [&] { validate_fk_collations(t->schema, fk, old); });
    }
  }
}

void commit(AlterCtx& c, AlterPlan& p) {
  TableEntry& entry = *c.entry;
  check_fk_collations(c, p.schema);
  bool indexes = touches_indexes(p, entry.schema);
  // UNIQUE holds on the rows as they will be, before anything changes.
  if (indexes) {
    std::vector<Row> before = scan_rows(entry);
    std::vector<Row> rows = before;
    if (p.to_new)
      for (Row& r : rows) r = p.to_new(r);
    // A partial index's membership is judged on the row as it is now, under the
    // predicate of the index of the same name (a new partial index cannot appear here).
    IndexWriter current(c.db, entry, &c.ctx, /*join=*/false);
    auto member = [&](size_t i, size_t r) {
      for (size_t k = 0; k < entry.schema.indexes.size(); ++k)
        if (iequals(entry.schema.indexes[k].name, p.schema.indexes[i].name)) return current.member(k, before[r]);
      return true;
    };
    check_unique_rows(p.schema, rows, member);
  }
  bool done = entry.table->alter_table(p.change, p.schema);
  if (!done && p.rewrites_rows)
    fail(StatusCode::kUnsupported, "Module '" + entry.schema.module_name + "' does not support ALTER TABLE " +
                                       arm_name(p.change.kind) + " (it changes the stored rows of '" +
                                       entry.schema.name + "')");
  // Secondary structures keyed by the table's columns (indexes, UNIQUE
  // companions) are brought to p.schema here, per p.change.kind, before the
  // catalog swap.
  if (p.change.kind == QRS_CHANGE_RENAME_TABLE) {
    c.db.catalog().remove(entry.schema.schema_name, entry.schema.name);
    entry.schema = std::move(p.schema);
    c.db.catalog().add(c.entry);
  } else {
    entry.schema = std::move(p.schema);
  }
  if (p.after) p.after();
  if (indexes) {
    rebuild_indexes(c.db, entry, c.ctx);
    repair_indexes_after_rollback(c.db, entry);
  }
  c.db.bump_schema_version();
  if (p.change.kind == QRS_CHANGE_RENAME_TABLE) c.db.unpersist_table(entry, c.s.table.name);
  c.db.persist_table(entry);
  if (p.change.kind == QRS_CHANGE_DROP_COLUMN) {
    // A body reading the column no longer plans; should a column of that name come back,
    // its rows are not the stored ones: stale until REFRESH.
    stale_maintained_readers(c, p.change.name, "drop");
    c.db.bump_schema_version();
  }
  if ((p.change.kind == QRS_CHANGE_SET_DATA_TYPE && p.rewrites_rows) || p.change.kind == QRS_CHANGE_SET_COLLATION) {
    stale_maintained_readers(c, entry.schema.columns[p.change.column].name,
                             p.change.kind == QRS_CHANGE_SET_COLLATION ? "collation" : "type");
    c.db.bump_schema_version();
  }
  announce(c, p.change);
}

}  // namespace

namespace {

// The arm's plan (validations included) of `s`; `tags_only` set for the catalog-only tag
// arm, which has none.
AlterPlan plan_alter(DdlContext& db, const ast::AlterTableStmt& s, ExecContext& ctx, std::shared_ptr<TableEntry>& entry,
                     bool& tags_only) {
  tags_only = false;
  std::string schema = ddl_schema(s.table.schema);
  for (const std::string& in : ddl_lookup_schemas(s.table.schema))
    if ((entry = db.catalog().find(in, s.table.name))) break;
  if (!entry) {
    if (db.catalog().find_view(schema, s.table.name))
      fail(StatusCode::kError, "Cannot ALTER TABLE '" + s.table.name + "': it is a view");
    fail(StatusCode::kError, "Table '" + s.table.name + "' not found in schema '" + schema + "'");
  }
  // A maintained table's shape is its body's; it may only be renamed (its maintenance
  // follows the catalog).
  if (entry->schema.derivation && s.action != Action::kRenameTable && s.action != Action::kSetMaintained &&
      s.action != Action::kDropMaintained) {
    if (s.action == Action::kTags)
      fail(StatusCode::kError, "'" + s.table.name + "' is a materialized view: set its tags with ALTER MATERIALIZED VIEW");
    fail(StatusCode::kError, "ALTER TABLE " + s.table.name +
                                 ": cannot ALTER: it is a materialized view — its shape is defined by the view body "
                                 "(drop and recreate to change it; or detach it with DROP MAINTAINED, alter the "
                                 "table, and re-attach)");
  }
  AlterCtx c{db, entry, ctx, s};
  AlterPlan p;
  switch (s.action) {
    case Action::kRenameTable:
      p = plan_rename_table(c);
      break;
    case Action::kRenameColumn:
      p = plan_rename_column(c);
      break;
    case Action::kAddColumn:
      p = plan_add_column(c);
      break;
    case Action::kDropColumn:
      p = plan_drop_column(c);
      break;
    case Action::kAddConstraint:
      p = plan_add_constraint(c);
      break;
    case Action::kDropConstraint:
      p = plan_drop_constraint(c);
      break;
    case Action::kRenameConstraint:
      p = plan_rename_constraint(c);
      break;
    case Action::kAlterPrimaryKey:
      p = plan_alter_primary_key(c);
      break;
    case Action::kAlterColumn:
      p = plan_alter_column(c);
      break;
    case Action::kTags:
      tags_only = true;
      break;
    case Action::kSetMaintained:
    case Action::kDropMaintained:
      fail(StatusCode::kUnsupported, "ALTER TABLE … MAINTAINED is not supported yet");
  }
  return p;
}

}  // namespace

void alter_table(DdlContext& db, const ast::AlterTableStmt& s, ExecContext& ctx) {
  std::shared_ptr<TableEntry> entry;
  bool tags_only = false;
  AlterPlan p = plan_alter(db, s, ctx, entry, tags_only);
  if (tags_only) {
    alter_table_tags(db, *entry, s);  // catalog-only: no module call
    return;
  }
  AlterCtx c{db, entry, ctx, s};
  commit(c, p);
}

void check_alter_table(DdlContext& db, const ast::AlterTableStmt& s, ExecContext& ctx) {
  std::shared_ptr<TableEntry> entry;
  bool tags_only = false;
  plan_alter(db, s, ctx, entry, tags_only);
}

}  // namespace quereus
