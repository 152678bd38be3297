// Writing through views: the lowering of a view-targeted INSERT / UPDATE / DELETE into
// statements on the view's source (docs/view-updates.md).
//
// The lowering works on syntax: the user's statement is deep-copied (parser/ast_clone.h),
// view-column references are replaced by the view's base terms, and the copy is
// retargeted at the source; the statements a join view adds are built as syntax
// (parser/ast_build.h), never as SQL text. The ordinary DML builders then plan
// the copy, so constraints, indexes, foreign keys, conflict actions and RETURNING are the
// base table's own.
#include "rewrite/view_writes.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "common/status.h"
#include "catalog/registry.h"
#include "planner/planning_context.h"
#include "parser/ast_printer.h"
#include "parser/ast_build.h"
#include "parser/ast_clone.h"
#include "planner/lineage.h"
#include "planner/planner.h"
#include "planner/scalar_expr.h"
#include "catalog/catalog.h"
#include "catalog/derivation.h"
#include "catalog/reserved_tags.h"
#include "parser/ast_visit.h"
#include "parser/ast_walk.h"
#include "parser/parser.h"
#include "rewrite/view_shape.h"

namespace quereus {
namespace view_write {

// The refusal of an insert through a view that leaves a NOT NULL base column without a
// value or default: the reference's constraint text, then why.
std::string not_null_unsupplied(const std::string& table, const std::string& column) {
  return "NOT NULL constraint failed: " + table + "." + column + " (no-default — no default for NOT NULL column '" + table +
         "." + column + "'; the view does not supply it)";
}

// ------------------------------------------------------------------ substitution

// Replaces the view-column references of a user expression by their base terms.
// `target` is the name the statement calls the view by (its alias, or the view name).
// Calls `fn` on each source of a FROM tree that is not a join (tables, subqueries, table
// functions), left to right.
void for_each_leaf(const ast::TableSource& src, const std::function<void(const ast::TableSource&)>& fn) {
  if (src.kind == ast::TableSource::Kind::kJoin) {
    for_each_leaf(*src.left, fn);
    for_each_leaf(*src.right, fn);
    return;
  }
  fn(src);
}

class Substituter {
 public:
  // `self`: the correlation name the lowered UPDATE / DELETE gives its target, which every
  // substituted term is qualified by (so a user subquery reading the same base table
  // cannot capture it); empty for an INSERT.
  Substituter(const ViewShape& v, std::string target, std::string self = "")
      : v_(v), target_(std::move(target)), self_(std::move(self)) {}

  void operator()(ExprPtr& e) const {
    if (!e) return;
    walk(e, [this](ExprPtr& x, int depth) { return visit(x, depth); }, 0, cores_);
  }

  // The base term of `c` as seen from image `image` ("" for the statement's own row).
  ExprPtr term(const ViewColumn& c, const std::string& image, int depth) const {
    // A window function's result depends on other rows: a write cannot address, set or
    // return it through the base rows.
    if (c.term && has_window(*c.term))
      v_.refuse("column '" + c.name + "' is a window function's result: a write cannot read it (no-inverse)");
    ExprPtr t = v_.term(c);
    if (!image.empty()) {
      if (v_.join()) v_.refuse(image + ".* references through a join view are not supported yet");
      requalify(t, v_.qualifier, image);
    } else if (!self_.empty() && !v_.join()) {
      retarget(t, v_.qualifier, self_, cores_);
    } else if (depth > 0 && !v_.join()) {
      requalify(t, v_.qualifier, v_.qualifier);
    }
    return t;
  }

  const ViewColumn& column(const std::string& name) const {
    const ViewColumn* c = v_.find(name);
    // The encapsulation guard's refusal carries the reason code the docs give it
    // (vu-operators.md "The encapsulation guard", view-updateability.md "Diagnostics").
    if (!c)
      throw Error(StatusCode::kError,
                  "column '" + name + "' is not a column of view '" + v_.name + "' (unknown-view-column)");
    return *c;
  }
  // The column the body's select names `name` (an authored put's `new.<name>`).
  const ViewColumn* output(const std::string& name) const {
    const ViewColumn* c = v_.find_output(name);
    if (!c) v_.refuse("its WITH INVERSE reads 'new." + name + "', which is not an output column of its select");
    return c;
  }

 private:
  bool names_view(const ast::ColumnRef& c) const {
    return !c.table.empty() && (iequals(c.table, target_) || iequals(c.table, v_.name)) &&
           (c.schema.empty() || iequals(c.schema, v_.schema));
  }

  // Inside the user's subqueries: true when an unqualified `name` provably reaches the
  // view's row — no enclosing subquery's FROM defines it, and every source there has
  // known columns. A source whose columns are unknown (a CTE, a FROM subquery without a
  // column list, a table function) leaves the name as written.
  bool correlated(const std::string& name) const {
    if (!v_.db || !v_.find(name)) return false;
    for (auto it = cores_.rbegin(); it != cores_.rend(); ++it) {
      bool known = true, defines = false;
      std::function<void(const ast::TableSource&)> look = [&](const ast::TableSource& src) {
        using K = ast::TableSource::Kind;
        if (src.kind == K::kJoin) {
          look(*src.left);
          look(*src.right);
          return;
        }
        std::vector<std::string> cols;
        if (src.kind == K::kTable) {
          auto rel = v_.db->find_relation(src.table.schema, src.table.name, &v_.caller_path);
          if (!rel.table && !rel.view) {
            known = false;  // a CTE, or an unknown name the build reports
          } else {
            try {
              cols = relation_columns(*v_.db, rel);
            } catch (const Error&) {
              known = false;  // a view whose body no longer plans: the build reports it
            }
          }
        } else if (src.kind == K::kSubquery && !src.alias_columns.empty()) {
          cols = src.alias_columns;
        } else if (src.kind == K::kSubquery && src.subquery && !src.subquery->dml && src.subquery->compounds.empty() &&
                   !src.subquery->core.nested && src.subquery->core.values.empty()) {
          // A FROM subquery's columns are its select list's names; a `select *` one's
          // cannot be proved here, so whether a view-column name inside it reads the
          // written row is unprovable: refused (vu-operators.md, nested subquery descent).
          for (const ast::ResultColumn& rc : src.subquery->core.columns) {
            if (rc.kind != ast::ResultColumn::Kind::kExpr)
              v_.refuse("'" + name + "' inside a subquery reading '" + (src.alias.empty() ? "(select *)" : src.alias) +
                        "' (a select * source) cannot be proved to be the written row's column or the source's "
                        "(unsupported-subquery-correlation)");
            if (!rc.alias.empty()) cols.push_back(rc.alias);
            else if (rc.expr && rc.expr->kind == ast::ExprKind::kColumn)
              cols.push_back(static_cast<const ast::ColumnRef&>(*rc.expr).column);
          }
        } else {
          known = false;
        }
        for (auto& c : cols) defines = defines || iequals(c, name);
      };
      if ((*it)->from) look(*(*it)->from);
      if (defines || !known) return false;
    }
    return true;
  }

  bool visit(ExprPtr& x, int depth) const {
    if (x->kind != ast::ExprKind::kColumn) return false;
    auto& c = static_cast<ast::ColumnRef&>(*x);
    if (c.table.empty()) {
      if (depth > 0) {
        // A subquery's own name, unless it provably reads the view's row.
        if (c.schema.empty() && correlated(c.column)) x = term(column(c.column), "", depth);
        return true;
      }
      x = term(column(c.column), "", depth);
      return true;
    }
    if (c.schema.empty() && is_image(c.table)) {
      std::string image = c.table;
      x = term(column(c.column), image, depth);
      return true;
    }
    if (names_view(c) && !(depth > 0 && c.schema.empty() && shadowed(c.table))) x = term(column(c.column), "", depth);
    return true;
  }

  // Inside the user's subqueries: true when an enclosing subquery's FROM exposes a source
  // named `qualifier` (`select v.id from v as v …` inside a write through v): `qualifier.c`
  // then reads that source, not the written row.
  bool shadowed(const std::string& qualifier) const {
    // A derived table (a FROM subquery) does not see its enclosing core's FROM names.
    auto in_from = [](const ast::SelectCore& outer, const ast::SelectCore* inner) {
      bool hit = false;
      if (outer.from)
        for_each_leaf(*outer.from, [&](const ast::TableSource& src) {
          if (src.kind != ast::TableSource::Kind::kSubquery || !src.subquery) return;
          hit = hit || &src.subquery->core == inner;
          for (const auto& leg : src.subquery->compounds) hit = hit || &leg.core == inner;
        });
      return hit;
    };
    for (size_t idx = cores_.size(); idx-- > 0;) {
      if (idx + 1 < cores_.size() && in_from(*cores_[idx], cores_[idx + 1])) continue;
      bool found = false;
      if (cores_[idx]->from)
        for_each_leaf(*cores_[idx]->from, [&](const ast::TableSource& src) {
          found = found || iequals(!src.alias.empty() ? src.alias : src.table.name, qualifier);
        });
      if (found) return true;
    }
    return false;
  }

  const ViewShape& v_;
  std::string target_;
  std::string self_;
  // The cores enclosing the expression the walk is at (see CoreStack); a term retargeted
  // inside a subquery continues it.
  mutable CoreStack cores_;
};

constexpr const char* kSelf = "__vm_self";

// The view's WHERE as a conjunct of a lowered UPDATE / DELETE whose target is `kSelf`.
ExprPtr view_predicate(const ViewShape& v) {
  ExprPtr w = clone(*v.where);
  CoreStack cores;
  retarget(w, v.qualifier, kSelf, cores);
  return w;
}

// RETURNING in view columns: `*` expands to the view's columns, every item keeps its view
// spelling as its result name.
void lower_returning(std::vector<ast::ResultColumn>& cols, const ViewShape& v, const Substituter& sub,
                     const std::string& target) {
  std::vector<ast::ResultColumn> out;
  for (auto& rc : cols) {
    using RK = ast::ResultColumn::Kind;
    if (rc.kind != RK::kExpr) {
      std::string image;
      if (rc.kind == RK::kTableStar && is_image(rc.table)) image = rc.table;
      else if (rc.kind == RK::kTableStar && !iequals(rc.table, target) && !iequals(rc.table, v.name))
        throw Error(StatusCode::kError, "Table '" + rc.table + "' not found in RETURNING " + rc.table + ".*");
      for (auto& c : v.columns) {
        ast::ResultColumn r;
        r.expr = sub.term(c, image, 0);
        r.alias = c.name;
        out.push_back(std::move(r));
      }
      continue;
    }
    std::string name = rc.alias;
    if (name.empty()) {
      auto* ref = rc.expr->kind == ast::ExprKind::kColumn ? static_cast<const ast::ColumnRef*>(rc.expr.get()) : nullptr;
      if (ref && ref->schema.empty() && (iequals(ref->table, "old") || iequals(ref->table, "new")))
        name = ref->table + "." + ref->column;
      else
        name = Planner::column_name(rc);
    }
    sub(rc.expr);
    rc.alias = name;
    out.push_back(std::move(rc));
  }
  cols = std::move(out);
}

const std::string& base_of(const ViewShape& v, const Substituter& sub, const std::string& name) {
  const ViewColumn& c = sub.column(name);
  if (c.base.empty())
    v.refuse("column '" + c.name + "' is computed (" + expr_to_string(*c.term) +
             ") and read-only: it has no inverse (no-inverse)");
  return c.base;
}

// An authored put over the written view row of an UPDATE: `new.<x>` reads the value the
// statement writes to x when it writes one (`written`: view column → its value, already
// lowered, reading the pre-update row — so co-assigned columns are order-independent),
// else the row's current x; the rest of the expression is lowered like any user
// expression.
ExprPtr written_row(const ast::Expr& put, const Substituter& sub, const std::string& target,
                    const std::map<std::string, const ast::Expr*>& written) {
  constexpr const char* kWritten = "__vw_written";
  ExprPtr e = clone(put);
  std::vector<const ast::Expr*> slots;
  walk(e, [&](ExprPtr& x, int) {
    if (x->kind != ast::ExprKind::kColumn) return false;
    auto& ref = static_cast<ast::ColumnRef&>(*x);
    if (!ref.schema.empty() || !iequals(ref.table, "new")) return true;
    auto it = written.find(to_lower(ref.column));
    if (it != written.end()) {
      slots.push_back(it->second);
      x = ast::column_ref(kWritten, std::to_string(slots.size() - 1));
    } else {
      const ViewColumn* c = sub.output(ref.column);
      x = ast::column_ref(target, c->name);
    }
    return true;
  });
  sub(e);
  walk(e, [&](ExprPtr& x, int) {
    if (x->kind != ast::ExprKind::kColumn) return false;
    auto& ref = static_cast<ast::ColumnRef&>(*x);
    if (ref.table == kWritten) x = clone(*slots[std::stoul(ref.column)]);
    return true;
  });
  return e;
}

// The SET list of an UPDATE through a view, each value lowered (reading the pre-update
// row): (view column, value).
std::vector<std::pair<const ViewColumn*, ExprPtr>> assigned_values(ast::UpdateStmt& s, const ViewShape& v,
                                                                   const Substituter& sub,
                                                                   std::map<std::string, const ast::Expr*>& written) {
  std::vector<std::pair<const ViewColumn*, ExprPtr>> out;
  for (auto& a : s.assignments) {
    if (a.columns.size() != 1) v.refuse("row-value assignments through a view are not supported yet");
    const ViewColumn& c = sub.column(a.columns[0]);
    if (!c.writable())
      v.refuse("column '" + c.name + "' is computed (" + expr_to_string(*c.term) +
               ") and read-only: it has no inverse (no-inverse)");
    sub(a.value);
    out.emplace_back(&c, std::move(a.value));
  }
  for (auto& [c, value] : out) written[to_lower(c->output)] = value.get();
  return out;
}

// Two assigned view columns land on one base column (view-updateability.md,
// "conflicting-assignment"): named both.
[[noreturn]] void refuse_conflicting_assignment(const ViewShape& v, const std::string& first, const std::string& second,
                                                const std::string& base) {
  if (iequals(first, second))
    v.refuse("column '" + first + "' writes base column '" + base + "' twice (conflicting-assignment)");
  v.refuse("view columns '" + first + "' and '" + second + "' both write base column '" + base +
           "' (conflicting-assignment)");
}

void lower_update(ast::UpdateStmt& s, const ViewShape& v) {
  std::string target = s.alias.empty() ? s.table.name : s.alias;
  Substituter sub(v, target, kSelf);
  std::map<std::string, const ast::Expr*> written;
  auto assigned = assigned_values(s, v, sub, written);
  std::vector<ast::Assignment> out;
  std::map<std::string, std::string> seen;  // base column → the view column writing it
  auto put = [&](const std::string& view_column, const std::string& base, ExprPtr value) {
    auto [it, fresh] = seen.emplace(to_lower(base), view_column);
    if (!fresh) refuse_conflicting_assignment(v, it->second, view_column, base);
    out.push_back({{base}, std::move(value)});
  };
  for (auto& [c, value] : assigned) {
    if (c->authored) {  // authored wins over the registry's routing
      for (const ast::NamedExpr& p : *c->authored) put(c->name, p.name, written_row(*p.value, sub, target, written));
      continue;
    }
    put(c->name, c->base, c->to_base(clone(*value)));
  }
  s.assignments = std::move(out);
  sub(s.where);
  if (v.where) s.where = conjoin(std::move(s.where), view_predicate(v));
  lower_returning(s.returning, v, sub, target);
  s.table = v.source;
  s.alias = kSelf;
  s.target_query.reset();
  s.target_columns.clear();
}

void lower_delete(ast::DeleteStmt& s, const ViewShape& v) {
  std::string target = s.alias.empty() ? s.table.name : s.alias;
  Substituter sub(v, target, kSelf);
  sub(s.where);
  if (v.where) s.where = conjoin(std::move(s.where), view_predicate(v));
  lower_returning(s.returning, v, sub, target);
  s.table = v.source;
  s.alias = kSelf;
  s.target_query.reset();
  s.target_columns.clear();
}

// `select *, <extra…> from (<source>) as __vw_src`. The source moves in as syntax, so its
// parameters keep their positions.
std::unique_ptr<ast::Select> widen_source(std::unique_ptr<ast::Select> source, const std::vector<ExprPtr>& extra) {
  std::vector<ast::ResultColumn> cols;
  cols.push_back(ast::star());
  for (auto& e : extra) cols.push_back(ast::result_column(clone(*e)));
  return ast::select(std::move(cols), ast::subquery_source(std::move(source), "__vw_src"));
}

// A value for view column `name` that an INSERT does not supply, as an authored put's
// `new.<name>` reads it: the view's constant or WITH DEFAULTS entry for its base column,
// else NULL.
ExprPtr unsupplied_value(const ViewShape& v, const std::string& name) {
  const ViewColumn* c = v.find_output(name);
  const std::string base = c ? c->base : "";
  if (!base.empty())
    for (auto& [col, lit] : constant_bindings(v))
      if (iequals(col, base)) return clone(*lit);
  if (v.defaults)
    for (const ast::NamedExpr& d : *v.defaults)
      if (iequals(d.name, name) || (!base.empty() && iequals(d.name, base))) return clone(*d.value);
  return ast::null_literal();
}

// An INSERT … VALUES through authored-inverse columns: each row becomes the base row —
// a plain column's value (through its registry inverse), an authored column's puts over
// the supplied row (`new.<x>`: the value supplied for x, else unsupplied_value). An
// authored put target counts as supplied.
void authored_rows(ast::InsertStmt& s, const ViewShape& v, const Substituter& sub,
                   const std::vector<const ViewColumn*>& written, std::vector<std::string>& base_cols) {
  for (const ViewColumn* c : written) {
    if (!c->authored) {
      base_cols.push_back(base_of(v, sub, c->name));
      continue;
    }
    for (const ast::NamedExpr& p : *c->authored) base_cols.push_back(p.name);
  }
  for (size_t i = 0; i < base_cols.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (iequals(base_cols[i], base_cols[j])) v.refuse("two inserted columns write base column '" + base_cols[i] + "'");
  for (auto& row : s.source->core.values) {
    if (row.size() != written.size()) continue;  // the builder reports the count mismatch
    std::vector<ExprPtr> out;
    for (size_t i = 0; i < written.size(); ++i) {
      const ViewColumn* c = written[i];
      if (!c->authored) {
        out.push_back(c->to_base(clone(*row[i])));
        continue;
      }
      for (const ast::NamedExpr& p : *c->authored) {
        ExprPtr e = clone(*p.value);
        walk(e, [&](ExprPtr& x, int) {
          if (x->kind != ast::ExprKind::kColumn) return false;
          auto& ref = static_cast<ast::ColumnRef&>(*x);
          if (!ref.schema.empty() || !iequals(ref.table, "new")) return true;
          for (size_t j = 0; j < written.size(); ++j)
            if (iequals(written[j]->output, ref.column)) {
              x = clone(*row[j]);
              return true;
            }
          x = unsupplied_value(v, ref.column);
          return true;
        });
        out.push_back(std::move(e));
      }
    }
    row = std::move(out);
  }
}

[[noreturn]] void refuse_inverse_insert(const ViewShape& v, const ViewColumn& c) {
  v.refuse("column '" + c.name + "' is not insertable (no-inverse): its inverse of " + expr_to_string(*c.term) +
           " applies to UPDATE only; an INSERT writes values verbatim (author one WITH INVERSE to insert through it)");
}

// Refuses a VALUES row whose literal in column `at` contradicts the body's constant `lit`
// for base column `column` (predicate-contradiction); non-literal values pass.
void refuse_contradicting_values(const ast::InsertStmt& s, const ViewShape& v, size_t at, const std::string& column,
                                 const ast::Literal& lit) {
  const bool plain_values = s.source && s.source->compounds.empty() && !s.source->core.values.empty();
  if (!plain_values) return;
  for (const auto& row : s.source->core.values) {
    if (at >= row.size() || row[at]->kind != ast::ExprKind::kLiteral) continue;
    auto& value = static_cast<const ast::Literal&>(*row[at]);
    if (value.literal_kind == ast::LiteralKind::kNull || literals_equal(value, lit) == false)
      v.refuse("the inserted value " + expr_to_string(value) + " for column '" + column +
               "' contradicts its selection predicate (predicate-contradiction)");
  }
}

// Equivalence classes of the view's WHERE (`y = x`): an unsupplied member takes a
// supplied member's value, row by row (vu-operators.md, Projection, step 4). For a plain
// VALUES source: each row's cell is copied, and the column joins `base_cols`.
void propagate_equalities(ast::InsertStmt& s, const ViewShape& v, std::vector<std::string>& base_cols,
                          const std::vector<std::string>& extra_cols) {
  auto supplied = [&](const std::string& col) {
    return std::any_of(base_cols.begin(), base_cols.end(), [&](const std::string& b) { return iequals(b, col); });
  };
  std::vector<const ast::Expr*> cs;
  conjuncts(v.where, cs);
  auto source_column = [&](const ast::Expr* e) -> std::string {
    if (!e || e->kind != ast::ExprKind::kColumn) return "";
    auto& ref = static_cast<const ast::ColumnRef&>(*e);
    if (!ref.table.empty() && !iequals(ref.table, v.qualifier)) return "";
    for (auto& c : v.source_columns)
      if (iequals(c, ref.column)) return c;
    return "";
  };
  bool changed = true;
  while (changed) {  // a chain (z = y, y = x) settles in a few passes
    changed = false;
    for (const ast::Expr* c : cs) {
      if (c->kind != ast::ExprKind::kBinary) continue;
      auto& b = static_cast<const ast::BinaryExpr&>(*c);
      if (b.op != ast::BinaryOp::kEq && b.op != ast::BinaryOp::kEqEq) continue;
      std::string l = source_column(b.left.get()), r = source_column(b.right.get());
      if (l.empty() || r.empty() || iequals(l, r)) continue;
      if (supplied(l) == supplied(r)) continue;
      const std::string& from = supplied(l) ? l : r;
      const std::string& to = supplied(l) ? r : l;
      if (std::any_of(extra_cols.begin(), extra_cols.end(), [&](const std::string& x) { return iequals(x, to); }))
        continue;
      size_t at = 0;
      while (!iequals(base_cols[at], from)) ++at;
      for (auto& row : s.source->core.values)
        if (at < row.size()) row.push_back(clone(*row[at]));
      base_cols.push_back(to);
      changed = true;
    }
  }
}

// A VALUES row the view's WHERE provably excludes is refused (vu-operators.md, Selection:
// "if the inserted values contradict the selection (provable at plan time via constant
// folding …) the engine rejects"; VU-003): each conjunct that reads only columns whose
// value is known at plan time — a literal cell of matching type, a literal the write adds,
// or NULL for an omitted column with no DEFAULT — is folded, and false or NULL refuses.
// A conjunct with a subquery, a parameter or a function call is not judged.
void refuse_rows_outside_view(const ast::InsertStmt& s, const ViewShape& v, const std::vector<std::string>& base_cols,
                              const std::vector<std::string>& extra_cols, const std::vector<ExprPtr>& extra) {
  if (!v.where || !v.table || !v.db || !s.source || s.source->core.values.empty()) return;
  const TableSchema& ts = v.table->schema;
  std::vector<const ast::Expr*> cs;
  conjuncts(v.where, cs);
  Planner planner(*v.db);
  const Scope scope = planner.table_scope(*v.table, v.qualifier);
  // The literal `e` as the value column `col` stores, or nullopt when not provable.
  auto literal_value = [&](const ast::Expr* e, const ColumnSchema& col) -> std::optional<Value> {
    const ast::Expr* lit = e;
    if (lit->kind == ast::ExprKind::kUnary) lit = static_cast<const ast::UnaryExpr&>(*lit).operand.get();
    if (lit->kind != ast::ExprKind::kLiteral) return std::nullopt;
    const auto k = static_cast<const ast::Literal&>(*lit).literal_kind;
    const bool numeric_col = col.logical_type == QRS_LT_INTEGER || col.logical_type == QRS_LT_REAL;
    const bool numeric_lit = k == ast::LiteralKind::kInteger || k == ast::LiteralKind::kReal;
    if (k != ast::LiteralKind::kNull) {
      if (numeric_col != numeric_lit) return std::nullopt;
      if (!numeric_col && !(col.logical_type == QRS_LT_TEXT && k == ast::LiteralKind::kString)) return std::nullopt;
    }
    try {
      return planner.bind_expr(*e, scope)->eval(EvalEnv{});
    } catch (const Error&) {
      return std::nullopt;
    }
  };
  for (const ast::Expr* c : cs) {
    bool judged = true;
    std::vector<int> reads;
    std::function<void(const ast::Expr&)> look = [&](const ast::Expr& e) {
      if (e.kind == ast::ExprKind::kFunction || e.kind == ast::ExprKind::kParameter || e.kind == ast::ExprKind::kSubquery ||
          e.kind == ast::ExprKind::kExists)
        judged = false;
      if (e.kind == ast::ExprKind::kColumn) {
        auto& ref = static_cast<const ast::ColumnRef&>(e);
        const int col = (ref.table.empty() || iequals(ref.table, v.qualifier)) ? ts.find_column(ref.column) : -1;
        if (col < 0) judged = false;
        else reads.push_back(col);
      }
      ast::for_each_child(e, [&](const ExprPtr& x) { look(*x); }, [&](const ast::Select&) { judged = false; });
    };
    look(*c);
    if (!judged) continue;
    ScalarPtr bound;
    try {
      bound = planner.bind_expr(*c, scope);
    } catch (const Error&) {
      continue;
    }
    for (size_t r = 0; r < s.source->core.values.size(); ++r) {
      const auto& cells = s.source->core.values[r];
      Row row(ts.columns.size());
      bool known = true;
      for (int col : reads) {
        const ColumnSchema& cs_col = ts.columns[col];
        std::optional<Value> value;
        for (size_t i = 0; i < base_cols.size() && !value; ++i)
          if (iequals(base_cols[i], cs_col.name)) {
            if (i < cells.size()) value = literal_value(cells[i].get(), cs_col);
            if (!value) known = false;
          }
        for (size_t i = 0; i < extra_cols.size() && !value && known; ++i)
          if (iequals(extra_cols[i], cs_col.name)) {
            value = literal_value(extra[i].get(), cs_col);
            if (!value) known = false;
          }
        const bool named = std::any_of(base_cols.begin(), base_cols.end(), [&](auto& b) { return iequals(b, cs_col.name); }) ||
                           std::any_of(extra_cols.begin(), extra_cols.end(), [&](auto& b) { return iequals(b, cs_col.name); });
        if (!named) {
          if (cs_col.default_expr || cs_col.generated()) known = false;
          else value = Value();  // omitted, no DEFAULT: NULL
        }
        if (!known) break;
        row[col] = *value;
      }
      if (!known) continue;
      Value verdict;
      try {
        verdict = bound->eval(EvalEnv{&row, nullptr, nullptr});
      } catch (const Error&) {
        continue;
      }
      bool unknown = false;
      if (!verdict.truthy(&unknown) || unknown)
        v.refuse("the inserted row " + std::to_string(r + 1) + " does not satisfy the view's predicate " +
                 expr_to_string(*c) + " (predicate-contradiction)");
    }
  }
}

void lower_insert(ast::InsertStmt& s, const ViewShape& v) {
  std::string target = s.alias.empty() ? s.table.name : s.alias;
  Substituter sub(v, target);
  // The written view columns, as base columns.
  std::vector<std::string> view_cols = s.columns;
  if (view_cols.empty() && !s.default_values)
    for (auto& c : v.columns) view_cols.push_back(c.name);
  std::vector<std::string> base_cols;
  std::vector<const ViewColumn*> written;
  for (auto& c : view_cols) written.push_back(&sub.column(c));
  bool plain_values = s.source && s.source->compounds.empty() && !s.source->core.values.empty() &&
                      s.source->order_by.empty() && !s.source->limit && !s.source->with;
  const bool authored = std::any_of(written.begin(), written.end(), [](const ViewColumn* c) { return c->authored; });
  if (authored) {
    if (!plain_values)
      v.refuse("an INSERT through a column with an authored inverse (WITH INVERSE) needs a VALUES source: its puts "
               "are evaluated per row (unsupported-source)");
    authored_rows(s, v, sub, written, base_cols);
  } else {
    for (auto& c : view_cols) base_cols.push_back(base_of(v, sub, c));
  }
  auto supplied = [&](const std::string& col) {
    return std::any_of(base_cols.begin(), base_cols.end(), [&](const std::string& b) { return iequals(b, col); });
  };
  // The view's `col = literal` conjuncts: a supplied literal that differs is refused;
  // an unsupplied column takes the literal.
  std::vector<ExprPtr> extra;
  std::vector<std::string> extra_cols;
  // A registry inverse (`b + 1 as bp`) serves UPDATE only: an INSERT writes supplied
  // values verbatim, so such a column is not insertable (vu-inverses.md; an authored
  // inverse is the insert hook).
  for (const ViewColumn* c : written)
    if (!c->authored && !c->inverse.empty()) refuse_inverse_insert(v, *c);
  for (auto& [col, lit] : constant_bindings(v)) {
    if (supplied(col)) {
      if (!plain_values) continue;
      size_t at = 0;
      while (!iequals(base_cols[at], col)) ++at;
      refuse_contradicting_values(s, v, at, col, *lit);
      continue;
    }
    if (std::any_of(extra_cols.begin(), extra_cols.end(), [&](const std::string& b) { return iequals(b, col); }))
      continue;
    extra_cols.push_back(col);
    extra.push_back(clone(*lit));
  }
  if (plain_values && v.table) propagate_equalities(s, v, base_cols, extra_cols);
  // The view's WITH DEFAULTS entries fill what is still open (each names a view column or
  // a base column of the source).
  if (v.defaults)
    for (const ast::NamedExpr& d : *v.defaults) {
      std::string col;
      if (const ViewColumn* c = v.find(d.name)) col = c->base;
      if (col.empty())
        for (auto& s : v.source_columns)
          if (iequals(s, d.name)) col = s;
      if (col.empty())
        v.refuse("its WITH DEFAULTS entry '" + d.name + "' names neither a view column nor a base column "
               "(default-target-not-found)");
      if (supplied(col) ||
          std::any_of(extra_cols.begin(), extra_cols.end(), [&](const std::string& b) { return iequals(b, col); }))
        continue;
      extra_cols.push_back(col);
      extra.push_back(clone(*d.value));
    }
  // A NOT NULL base column the write leaves without any value is refused up front.
  if (v.table) {
    for (auto& c : v.table->schema.columns) {
      if (!c.not_null || c.default_expr || c.generated() || supplied(c.name)) continue;
      if (std::any_of(extra_cols.begin(), extra_cols.end(), [&](const std::string& b) { return iequals(b, c.name); }))
        continue;
      v.refuse(not_null_unsupplied(v.table->schema.name, c.name));
    }
  }
  if (plain_values) refuse_rows_outside_view(s, v, base_cols, extra_cols, extra);
  if (!extra.empty()) {
    if (s.default_values) {
      auto sel = std::make_unique<ast::Select>();
      std::vector<ExprPtr> row;
      for (auto& e : extra) row.push_back(clone(*e));
      sel->core.values.push_back(std::move(row));
      s.source = std::move(sel);
      s.default_values = false;
    } else if (plain_values) {
      for (auto& row : s.source->core.values)
        for (auto& e : extra) row.push_back(clone(*e));
    } else {
      auto path = s.source->schema_path;
      s.source = widen_source(std::move(s.source), extra);
      s.source->schema_path = path;
    }
    for (auto& c : extra_cols) base_cols.push_back(c);
  }
  s.columns = base_cols;
  for (auto& u : s.upserts) {
    for (auto& t : u.target) t.name = base_of(v, sub, t.name);
    sub(u.target_where);
    for (auto& a : u.set) {
      if (a.columns.size() != 1) v.refuse("row-value assignments through a view are not supported yet");
      const ViewColumn& c = sub.column(a.columns[0]);
      if (c.authored)
        v.refuse("ON CONFLICT … DO UPDATE of column '" + c.name + "' with an authored inverse (WITH INVERSE) is not supported yet");
      a.columns[0] = base_of(v, sub, a.columns[0]);
      sub(a.value);
      a.value = c.to_base(std::move(a.value));
    }
    sub(u.where);
  }
  lower_returning(s.returning, v, sub, target);
  s.table = v.source;
  s.alias = v.alias;
}


// ------------------------------------------------------------------ join views

constexpr const char* kKeys = "__vw_keys";  // the captured keys of an UPDATE / DELETE
constexpr const char* kEnvelope = "__vw_env";  // an INSERT's envelope

ast::QualifiedName qualified(const JoinSide& s) { return {s.table->schema.schema_name, s.table->schema.name, {}}; }

// `__vw_k.<column>`: a column of the capture row.
ExprPtr captured(const std::string& column) { return ast::column_ref("__vw_k", column); }

// `select <what> from __vw_keys as __vw_k where <where>`.
std::unique_ptr<ast::Select> from_capture(ExprPtr what, ExprPtr where) {
  std::vector<ast::ResultColumn> cols;
  cols.push_back(ast::result_column(std::move(what)));
  return ast::select(std::move(cols), ast::table_source({"", kKeys, {}}, "__vw_k"), std::move(where));
}

// `exists (select 1 from __vw_keys as __vw_k where <where>)`.
ExprPtr some_captured(ExprPtr where) { return ast::exists(from_capture(ast::integer_literal(1), std::move(where))); }

std::vector<int> key_columns(const JoinSide& s) {
  std::vector<int> out;
  for (auto& k : s.table->schema.primary_key) out.push_back(k.column);
  if (out.empty())
    for (size_t i = 0; i < s.table->schema.columns.size(); ++i) out.push_back(static_cast<int>(i));
  return out;
}

// True when `fk` references table `parent` (its schema, when the FK names one).
bool fk_references(const ForeignKeySchema& fk, const TableSchema& parent) {
  return iequals(fk.referenced_table, parent.name) &&
         (fk.referenced_schema.empty() || iequals(fk.referenced_schema, parent.schema_name));
}

// The sides in write order: a side whose table another side's foreign key references
// (the parent) first; FROM order otherwise.
std::vector<int> parents_first(const ViewShape& v) {
  auto references = [&](int child, int parent) {
    const TableSchema& p = v.sides[parent].table->schema;
    const auto& fks = v.sides[child].table->schema.foreign_keys;
    return std::any_of(fks.begin(), fks.end(), [&](const ForeignKeySchema& fk) { return fk_references(fk, p); });
  };
  std::vector<int> order;
  std::vector<bool> done(v.sides.size(), false);
  while (order.size() < v.sides.size()) {
    int pick = -1;
    for (size_t s = 0; s < v.sides.size() && pick < 0; ++s) {
      if (done[s]) continue;
      bool waits = false;
      for (size_t p = 0; p < v.sides.size(); ++p)
        if (!done[p] && p != s && references(static_cast<int>(s), static_cast<int>(p))) waits = true;
      if (!waits) pick = static_cast<int>(s);
    }
    if (pick < 0)  // a reference cycle: FROM order
      for (size_t s = 0; s < v.sides.size() && pick < 0; ++s)
        if (!done[s]) pick = static_cast<int>(s);
    done[pick] = true;
    order.push_back(pick);
  }
  return order;
}

// `__vw_k.k<s>_0 is <q>.<pk0> and …`: side `s`'s row (called `q`) is a captured one.
ExprPtr key_equalities(const ViewShape& v, int s, const std::string& q);

// For an outer join's padded side, the match marker m<s> of the capture gates the match:
// `matched` requires it (the row exists), otherwise a capture row without a partner also
// counts (a RETURNING re-query keeps the preserved row).
ExprPtr key_match(const ViewShape& v, int s, const std::string& q, bool matched = true) {
  ExprPtr keys = key_equalities(v, s, q);
  if (!v.sides[s].padded) return keys;
  std::string m = "m" + std::to_string(s);
  if (matched) return conjoin(captured(m), std::move(keys));
  return ast::disjoin(conjoin(captured(m), std::move(keys)), ast::logical_not(captured(m)));
}

// The WHERE of a statement that writes side `s` (called `q`): its row is a captured one.
// When the key's leading column is NOT NULL, `q.<pk0> IN (select k<s>_0 from __vw_keys …)`
// leads, so the statement seeks the captured keys instead of probing every row of the
// table; with a one-column key it is the whole test (`IS` and `=` agree without NULLs).
ExprPtr captured_rows(const ViewShape& v, int s, const std::string& q) {
  ExprPtr probe = some_captured(key_match(v, s, q));
  auto keys = key_columns(v.sides[s]);
  const ColumnSchema& lead = v.sides[s].table->schema.columns[keys[0]];
  if (!lead.not_null) return probe;
  ExprPtr gate = v.sides[s].padded ? captured("m" + std::to_string(s)) : nullptr;
  ExprPtr narrow = ast::in_subquery(ast::column_ref(q, lead.name),
                                    from_capture(captured("k" + std::to_string(s) + "_0"), std::move(gate)));
  return keys.size() == 1 ? std::move(narrow) : conjoin(std::move(narrow), std::move(probe));
}

ExprPtr key_equalities(const ViewShape& v, int s, const std::string& q) {
  ExprPtr out;
  auto keys = key_columns(v.sides[s]);
  for (size_t j = 0; j < keys.size(); ++j)
    out = conjoin(std::move(out), binary(ast::BinaryOp::kIs, captured("k" + std::to_string(s) + "_" + std::to_string(j)),
                                         ast::column_ref(q, v.sides[s].table->schema.columns[keys[j]].name)));
  return out;
}

// A copy of the join body whose FROM tables are schema-qualified (they resolve as the
// view's read resolves them, whatever the writing statement's path), with no ORDER BY.
std::unique_ptr<ast::SelectStmt> body_copy(const ViewShape& v) {
  auto sel = std::make_unique<ast::SelectStmt>();
  sel->select = clone(*v.body);
  size_t next = 0;
  std::function<void(ast::TableSource&)> qualify = [&](ast::TableSource& src) {
    if (src.kind == ast::TableSource::Kind::kJoin) {
      qualify(*src.left);
      qualify(*src.right);
      return;
    }
    const JoinSide& side = v.sides[next++];
    if (src.alias.empty()) src.alias = src.table.name;
    src.table.schema = side.table->schema.schema_name;
    src.table.name = side.table->schema.name;
  };
  qualify(*sel->select->core.from);
  sel->select->order_by.clear();
  return sel;
}


ast::StatementPtr leg_as_cte_target(const ViewShape& v, const ast::Statement& stmt, size_t index) {
  ast::StatementPtr copy = clone(stmt);
  ast::QualifiedName* name = nullptr;
  std::string* alias = nullptr;
  std::unique_ptr<ast::WithClause>* with = nullptr;
  switch (copy->kind) {
    case ast::StmtKind::kInsert: {
      auto& s = static_cast<ast::InsertStmt&>(*copy);
      name = &s.table, alias = &s.alias, with = &s.with;
      break;
    }
    case ast::StmtKind::kUpdate: {
      auto& s = static_cast<ast::UpdateStmt&>(*copy);
      name = &s.table, alias = &s.alias, with = &s.with;
      break;
    }
    case ast::StmtKind::kDelete: {
      auto& s = static_cast<ast::DeleteStmt&>(*copy);
      name = &s.table, alias = &s.alias, with = &s.with;
      break;
    }
    default: throw Error(StatusCode::kInternal, "leg_as_cte_target: not a DML statement");
  }
  // The user's references keep reading the view's name: it becomes the target's alias.
  if (alias->empty()) *alias = name->name;
  ast::CommonTableExpr cte;
  cte.name = "__vw_leg" + std::to_string(index);
  for (const ViewColumn& c : v.columns) cte.columns.push_back(c.name);
  cte.select = std::move(body_copy(v)->select);
  cte.site = name->site;
  name->schema.clear();
  name->name = cte.name;
  if (!*with) *with = std::make_unique<ast::WithClause>();
  (*with)->ctes.insert((*with)->ctes.begin(), std::move(cte));
  return copy;
}

// A singleton decomposition (primary key (): its members joined `on true`, no shared
// key): at most one row.
bool singleton_shape(const ViewShape& v) { return v.decomposition && v.classes.empty(); }

// The capture of an UPDATE / DELETE: each addressed view row's base keys, k<side>_<j>.
ast::StatementPtr key_capture(const ViewShape& v, ExprPtr user_where, std::unique_ptr<ast::WithClause> with,
                              std::vector<ast::ResultColumn> extra) {
  auto sel = body_copy(v);
  ast::SelectCore& core = sel->select->core;
  core.columns.clear();
  for (size_t s = 0; s < v.sides.size(); ++s) {
    auto keys = key_columns(v.sides[s]);
    for (size_t j = 0; j < keys.size(); ++j)
      core.columns.push_back(ast::result_column(
          ast::column_ref(v.sides[s].qualifier, v.sides[s].table->schema.columns[keys[j]].name),
          "k" + std::to_string(s) + "_" + std::to_string(j)));
  }
  // An outer join's padded side matched when its join column is not NULL: the ON
  // equality holds for a matched row, so the column cannot be NULL there (a padded row's
  // key may well be NULL: NULL is an ordinary key value).
  for (size_t s = 0; s < v.sides.size(); ++s) {
    if (!v.sides[s].padded) continue;
    int col = -1;
    for (auto& cls : v.classes)
      for (auto& m : cls)
        if (m.first == static_cast<int>(s) && col < 0) col = m.second;
    if (col < 0 && singleton_shape(v)) {
      // A singleton's member (primary key (), joined `on true`): it holds 0 or 1 row, so
      // the view row has that member's row exactly when the member has one.
      std::vector<ast::ResultColumn> one;
      one.push_back(ast::result_column(ast::integer_literal(1)));
      core.columns.push_back(ast::result_column(
          ast::exists(ast::select(std::move(one), ast::table_source(qualified(v.sides[s]), "__vw_m"), nullptr)),
          "m" + std::to_string(s)));
      continue;
    }
    if (col < 0) v.refuse("the outer join's ON clause equates no column of '" + v.sides[s].qualifier + "' with the other side");
    core.columns.push_back(ast::result_column(
        ast::is_not_null(ast::column_ref(v.sides[s].qualifier, v.sides[s].table->schema.columns[col].name)),
        "m" + std::to_string(s)));
  }
  for (auto& rc : extra) core.columns.push_back(std::move(rc));
  core.where = conjoin(std::move(core.where), std::move(user_where));
  sel->select->with = std::move(with);
  return sel;
}

// A SELECT of the RETURNING items over the join rows whose keys were captured.
ast::StatementPtr returning_query(const ViewShape& v, std::vector<ast::ResultColumn>& items, const Substituter& sub,
                                  const std::string& target) {
  lower_returning(items, v, sub, target);
  auto sel = body_copy(v);
  ast::SelectCore& core = sel->select->core;
  core.columns = std::move(items);
  ExprPtr match;
  // A singleton (primary key (): members joined `on true`) has at most one row, and an
  // UPDATE may change every member's key (a member without a declared key is keyed on
  // its columns): its row is returned when the statement addressed it.
  const bool singleton = singleton_shape(v);
  for (size_t s = 0; s < v.sides.size() && !singleton; ++s)
    match = conjoin(std::move(match), key_match(v, static_cast<int>(s), v.sides[s].qualifier, false));
  core.where = some_captured(std::move(match));
  return sel;
}

// `delete from <side> as <q> where <q> is a captured row` (a padded side: a matched one).
ast::StatementPtr captured_delete(const ViewShape& v, int side, const std::vector<ast::NamedExpr>& context) {
  const JoinSide& js = v.sides[side];
  auto d = std::make_unique<ast::DeleteStmt>();
  d->table = qualified(js);
  d->alias = js.qualifier;
  d->where = captured_rows(v, side, js.qualifier);
  d->context = clone(context);
  return d;
}

// An existence flag's written value: a boolean literal (`true` / `false`, or 1 / 0).
// Anything else is refused: a per-row branch is not supported.
bool flag_value(const ViewShape& v, const ViewColumn& c, const ast::Expr& e) {
  if (e.kind == ast::ExprKind::kLiteral) {
    auto& l = static_cast<const ast::Literal&>(e);
    if (l.literal_kind == ast::LiteralKind::kTrue) return true;
    if (l.literal_kind == ast::LiteralKind::kFalse) return false;
    if (l.literal_kind == ast::LiteralKind::kInteger && (l.text == "1" || l.text == "0")) return l.text == "1";
  }
  v.refuse("existence column '" + c.name + "' takes only true or false (a per-row value is not supported: "
           "unsupported-outer-join-update)");
}

// The existence-flag assignments of an UPDATE through an outer join, taken out of the SET
// list: per padded side, true (materialize the side), false (delete it) or unset (-1).
std::vector<int> take_flag_writes(ast::UpdateStmt& s, const ViewShape& v, const Substituter& sub) {
  std::vector<int> flags(v.sides.size(), -1);
  std::vector<ast::Assignment> rest;
  for (auto& a : s.assignments) {
    const ViewColumn* c = a.columns.size() == 1 ? &sub.column(a.columns[0]) : nullptr;
    if (!c || c->existence_side < 0) {
      rest.push_back(std::move(a));
      continue;
    }
    const bool value = flag_value(v, *c, *a.value);
    int& slot = flags[c->existence_side];
    if (slot >= 0 && slot != (value ? 1 : 0))
      v.refuse("existence column '" + c->name + "' is written twice with different values (conflicting-assignment)");
    slot = value ? 1 : 0;
  }
  s.assignments = std::move(rest);
  if (std::any_of(flags.begin(), flags.end(), [](int f) { return f >= 0; }) && !s.returning.empty())
    v.refuse("RETURNING through an existence-column write is not supported: a materialized or deleted row cannot "
             "be read back (returning-through-view)");
  return flags;
}

// True when `e` reads no subquery and only columns qualified `q` (`q` empty: none at all).
bool reads_only(ExprPtr& e, const std::string& q) {
  bool ok = true;
  walk(e, [&](ExprPtr& x, int depth) {
    if (depth > 0 || x->kind == ast::ExprKind::kExists || x->kind == ast::ExprKind::kSubquery ||
        (x->kind == ast::ExprKind::kIn && static_cast<ast::InExpr&>(*x).subquery))
      ok = false;
    else if (x->kind == ast::ExprKind::kColumn)
      ok = ok && !q.empty() && iequals(static_cast<ast::ColumnRef&>(*x).table, q);
    return false;
  });
  return ok;
}

// True when `e` calls a function that is not deterministic (random(), a volatile UDF):
// evaluated twice — once by a filter, once for the value written — it could disagree with
// itself, so a decomposition write computes such a value once per row, into the capture
// (spec/lens.md "The put fan-out": "turns a volatile (set c = random()) into one value per
// row shared by both branches").
bool calls_volatile(const ViewShape& v, const ast::Expr& e) {
  if (!v.db) return false;
  bool found = false;
  ExprPtr copy = clone(e);
  walk(copy, [&](ExprPtr& x, int) {
    if (found || x->kind != ast::ExprKind::kFunction) return found;
    auto& f = static_cast<const ast::FunctionCall&>(*x);
    if (const ScalarFunction* fn = v.db->registry().find_scalar(f.name, static_cast<int>(f.args.size())))
      found = !(fn->flags & kDeterministic);
    return found;
  });
  return found;
}

// An advertised decomposition's UPDATE whose values read no column and whose WHERE reads
// only the anchor, assigning mandatory members and the anchor (spec/lens.md "The put
// fan-out"): each member is keyed off the anchor alone, no join row captured —
//   update <member> set … where <key> in (select <anchor key> from <anchor> where <pred>)
// members first, the anchor last (its own update may change what <pred> reads). False
// (nothing emitted) when the statement has another shape.
bool lower_anchor_keyed_update(const ast::UpdateStmt& original, const ViewShape& v, Substituter& sub,
                               LoweredWrite& out) {
  if (!v.decomposition || !original.returning.empty() || original.with || v.where) return false;
  // Worked on a copy: the statement stays whole for the general path.
  ast::StatementPtr copy = clone(original);
  auto& s = static_cast<ast::UpdateStmt&>(*copy);
  const JoinSide& anchor = v.sides[0];
  const std::vector<int> anchor_key = key_columns(anchor);
  if (anchor_key.size() != 1) return false;
  // Every side's one key column shares the anchor key's class.
  std::vector<std::string> member_key(v.sides.size());
  for (size_t side = 0; side < v.sides.size(); ++side) {
    const std::vector<int> k = key_columns(v.sides[side]);
    if (k.size() != 1) return false;
    bool same = side == 0;
    for (const auto& cls : v.classes) {
      bool has_anchor = false, has_member = false;
      for (const auto& m : cls) {
        has_anchor = has_anchor || (m.first == 0 && m.second == anchor_key[0]);
        has_member = has_member || (m.first == static_cast<int>(side) && m.second == k[0]);
      }
      same = same || (has_anchor && has_member);
    }
    if (!same) return false;
    member_key[side] = v.sides[side].table->schema.columns[k[0]].name;
  }
  std::map<std::string, const ast::Expr*> written;
  std::vector<std::vector<std::pair<std::string, ExprPtr>>> per_side(v.sides.size());
  for (auto& [c, value] : assigned_values(s, v, sub, written)) {
    if (c->authored || c->existence_side >= 0 || c->base.empty()) return false;
    ExprPtr base = c->to_base(clone(*value));
    if (!reads_only(base, "") || calls_volatile(v, *base)) return false;
    for (const auto& [col, _] : per_side[c->side])
      if (iequals(col, c->base)) return false;  // the general path names the conflict
    per_side[c->side].emplace_back(c->base, std::move(base));
  }
  ExprPtr where = s.where ? clone(*s.where) : nullptr;
  sub(where);
  if (where && !reads_only(where, anchor.qualifier)) return false;
  // The anchor rows the statement addresses, as `select <anchor key>[, <extra>…] from
  // <anchor> where <pred>`.
  auto anchor_rows = [&](std::vector<ast::ResultColumn> extra) {
    std::vector<ast::ResultColumn> key;
    key.push_back(ast::result_column(ast::column_ref(anchor.qualifier, member_key[0])));
    for (auto& e : extra) key.push_back(std::move(e));
    return ast::select(std::move(key), ast::table_source(qualified(anchor), anchor.qualifier),
                       where ? clone(*where) : nullptr);
  };
  auto is_null = [](const ast::Expr& e) {
    return e.kind == ast::ExprKind::kLiteral && static_cast<const ast::Literal&>(e).literal_kind == ast::LiteralKind::kNull;
  };
  // A WHERE that pins the anchor key (`<anchor>.<key> = <value reading no column>`): a
  // member's rows are then `<member key> = <value>`, present only while the anchor row
  // is: `… where <key> = <value> and exists (<anchor rows>)` — a point seek under a
  // once-per-statement gate instead of an IN list.
  const ast::Expr* pinned = nullptr;
  if (where && where->kind == ast::ExprKind::kBinary) {
    auto& b = static_cast<ast::BinaryExpr&>(*where);
    auto is_key = [&](const ast::Expr& e) {
      return e.kind == ast::ExprKind::kColumn && iequals(static_cast<const ast::ColumnRef&>(e).table, anchor.qualifier) &&
             iequals(static_cast<const ast::ColumnRef&>(e).column, member_key[0]);
    };
    if (b.op == ast::BinaryOp::kEq || b.op == ast::BinaryOp::kEqEq) {
      if (is_key(*b.left) && reads_only(b.right, "")) pinned = b.right.get();
      else if (is_key(*b.right) && reads_only(b.left, "")) pinned = b.left.get();
    }
  }
  auto member_rows = [&](const JoinSide& js, const std::string& key) -> ExprPtr {
    if (!pinned) return ast::in_subquery(ast::column_ref(js.qualifier, key), anchor_rows({}));
    return ast::conjoin(ast::binary(ast::BinaryOp::kEq, ast::column_ref(js.qualifier, key), clone(*pinned)),
                        ast::exists(anchor_rows({})));
  };
  for (size_t k = 1; k <= v.sides.size(); ++k) {
    const size_t side = k % v.sides.size();  // 1, 2, …, then the anchor (0)
    if (per_side[side].empty()) continue;
    const JoinSide& js = v.sides[side];
    if (js.padded) {
      // An optional member: its rows are a materialization of the logical row.
      const TableSchema& ts = js.table->schema;
      size_t values = 0, nulls = 0;
      for (const ColumnSchema& col : ts.columns) {
        if (iequals(col.name, member_key[side])) continue;
        ++values;
        for (const auto& [c, value] : per_side[side])
          if (iequals(c, col.name) && is_null(*value)) ++nulls;
      }
      auto in_anchor = [&]() { return member_rows(js, member_key[side]); };
      if (nulls == values) {
        // Every value column set NULL: the component is emptied, its row deleted.
        auto d = std::make_unique<ast::DeleteStmt>();
        d->table = qualified(js);
        d->alias = js.qualifier;
        d->where = in_anchor();
        d->context = clone(s.context);
        out.statements.push_back(std::move(d));
        continue;
      }
      // A value column left unassigned must read NULL (or take its DEFAULT) in a new row.
      for (const ColumnSchema& col : ts.columns) {
        if (iequals(col.name, member_key[side]) || col.generated()) continue;
        const bool assigned = std::any_of(per_side[side].begin(), per_side[side].end(),
                                          [&](const auto& a) { return iequals(a.first, col.name); });
        if (!assigned && col.not_null && !col.default_expr) return false;  // the general path names it
      }
      // The matched rows: update <member> set … where <key> in (<anchor rows>).
      auto u = std::make_unique<ast::UpdateStmt>();
      u->or_action = s.or_action;
      u->table = qualified(js);
      u->alias = js.qualifier;
      for (auto& [column, value] : per_side[side]) u->assignments.push_back({{column}, clone(*value)});
      u->where = in_anchor();
      u->context = clone(s.context);
      out.statements.push_back(std::move(u));
      // The absent ones: insert into <member> (<key>, <cols>) select <anchor key>, <values>
      // from <anchor> where <pred> on conflict (<key>) do nothing.
      auto ins = std::make_unique<ast::InsertStmt>();
      ins->or_action = s.or_action;
      ins->table = qualified(js);
      ins->columns.push_back(member_key[side]);
      std::vector<ast::ResultColumn> vals;
      // Only a row some value makes non-empty is materialized: no phantom all-NULL row
      // for a value that is NULL at run time (`nullif(…)`); a non-NULL literal needs no test.
      ExprPtr nonempty;
      bool surely = false;
      for (auto& [column, value] : per_side[side]) {
        ins->columns.push_back(column);
        if (value->kind == ast::ExprKind::kLiteral) surely = surely || !is_null(*value);
        else nonempty = ast::disjoin(std::move(nonempty), ast::is_not_null(clone(*value)));
        vals.push_back(ast::result_column(std::move(value)));
      }
      ins->source = anchor_rows(std::move(vals));
      if (!surely && nonempty) ins->source->core.where = ast::conjoin(std::move(ins->source->core.where), std::move(nonempty));
      ast::UpsertClause nothing;
      nothing.target.push_back({member_key[side], "", false});
      ins->upserts.push_back(std::move(nothing));
      ins->context = clone(s.context);
      out.statements.push_back(std::move(ins));
      continue;
    }
    auto u = std::make_unique<ast::UpdateStmt>();
    u->or_action = s.or_action;
    u->table = qualified(js);
    u->alias = js.qualifier;
    for (auto& [column, value] : per_side[side]) u->assignments.push_back({{column}, std::move(value)});
    if (side == 0) {
      u->where = where ? clone(*where) : nullptr;
    } else {
      u->where = member_rows(js, member_key[side]);
    }
    u->context = clone(s.context);
    out.statements.push_back(std::move(u));
  }
  return !out.statements.empty();
}

void lower_join_update(ast::UpdateStmt& s, const ViewShape& v, LoweredWrite& out) {
  std::string target = s.alias.empty() ? s.table.name : s.alias;
  Substituter sub(v, target);
  if (lower_anchor_keyed_update(s, v, sub, out)) return;
  const std::vector<int> flags = take_flag_writes(s, v, sub);
  // Assignments per side, as (base column, value).
  std::vector<std::vector<std::pair<std::string, ExprPtr>>> per_side(v.sides.size());
  std::vector<ast::ResultColumn> reads;  // partner columns a SET value reads: s0, s1, …
  std::map<std::string, std::string> seen;  // side.base column → the view column writing it
  // Assignments to an outer join's padded side, for the rows it does not match yet.
  std::vector<std::pair<int, std::pair<std::string, ExprPtr>>> padded_values;
  // One base assignment on side `side`: a value reading another side's column reads it
  // from the captured join row.
  auto route = [&](const std::string& name, int side, const std::string& base, ExprPtr value) {
    if (auto [it, fresh] = seen.emplace(std::to_string(side) + "." + to_lower(base), name); !fresh)
      refuse_conflicting_assignment(v, it->second, name, base);
    if (ast::contains_subquery(*value) || (v.decomposition && calls_volatile(v, *value))) {
      // A value holding a subquery may correlate to any side (spec/lens.md "The put
      // fan-out": an arbitrary value rides the per-row capture): it is computed once per
      // join row, before any base write, and read back by the assigned side's key.
      std::string col = "s" + std::to_string(reads.size());
      reads.push_back(ast::result_column(std::move(value), col));
      if (v.sides[side].padded) padded_values.emplace_back(side, std::make_pair(base, captured(col)));
      per_side[side].emplace_back(
          base, ast::scalar_subquery(from_capture(captured(col), key_match(v, side, v.sides[side].qualifier))));
      return;
    }
    if (v.sides[side].padded) padded_values.emplace_back(side, std::make_pair(base, clone(*value)));
    walk(value, [&](ExprPtr& x, int depth) {
      if (depth > 0 || x->kind != ast::ExprKind::kColumn) return false;
      auto& ref = static_cast<ast::ColumnRef&>(*x);
      for (size_t p = 0; p < v.sides.size(); ++p) {
        if (static_cast<int>(p) == side || !iequals(ref.table, v.sides[p].qualifier)) continue;
        int read = v.sides[p].find(ref.column);
        if (read < 0 || !v.lineage.owner_determines(side, static_cast<int>(p), read))
          v.refuse("the SET value of '" + name + "' reads side '" + v.sides[p].qualifier +
                   "', but the assigned side joins more than one '" + v.sides[p].qualifier +
                   "' row (no unique key of it is pinned by the join; cross-source-ambiguous-cardinality)");
        std::string col = "s" + std::to_string(reads.size());
        reads.push_back(ast::result_column(clone(*x), col));
        x = ast::scalar_subquery(from_capture(captured(col), key_match(v, side, v.sides[side].qualifier)));
        return true;
      }
      return true;
    });
    per_side[side].emplace_back(base, std::move(value));
  };
  std::map<std::string, const ast::Expr*> written;
  auto assigned = assigned_values(s, v, sub, written);
  for (auto& [c, value] : assigned) {
    if (!c->authored) {
      route(c->name, c->side, c->base, c->to_base(clone(*value)));
      continue;
    }
    // Authored wins: each put goes to the side that owns its target.
    for (const ast::NamedExpr& p : *c->authored) {
      int owner = -1;
      for (size_t side = 0; side < v.sides.size(); ++side) {
        if (v.sides[side].find(p.name) < 0) continue;
        if (owner >= 0) v.refuse("WITH INVERSE target '" + p.name + "' of column '" + c->name + "' is ambiguous: more than one joined table has it");
        owner = static_cast<int>(side);
      }
      if (owner < 0) v.refuse("WITH INVERSE target '" + p.name + "' of column '" + c->name + "' is not a column of the joined tables");
      route(c->name, owner, v.sides[owner].table->schema.columns[v.sides[owner].find(p.name)].name,
            written_row(*p.value, sub, target, written));
    }
  }
  for (size_t side = 0; side < v.sides.size(); ++side)
    if (flags[side] == 0 && !per_side[side].empty())
      v.refuse("writing a column of '" + v.sides[side].qualifier +
               "' while setting its existence column to false is a contradiction (conflicting-assignment)");
  sub(s.where);
  // Writing the padded side of an outer join: a view row without a partner gets one,
  // inserted with the assigned values and the preserved side's join key (also when its
  // existence flag is set true with no column assigned).
  std::vector<ast::StatementPtr> materialize(v.sides.size());
  for (size_t side = 0; side < v.sides.size(); ++side) {
    if (!v.sides[side].padded || (per_side[side].empty() && flags[side] != 1)) continue;
    const JoinSide& js = v.sides[side];
    // A value of the view row, captured as column s<n> of the capture row.
    auto capture = [&](ExprPtr value) {
      std::string col = "s" + std::to_string(reads.size());
      reads.push_back(ast::result_column(std::move(value), col));
      return col;
    };
    std::vector<std::pair<std::string, ExprPtr>> cols;  // base column, value
    std::vector<std::string> keys;                      // the join-key columns among them
    ExprPtr guard = ast::logical_not(captured("m" + std::to_string(side)));
    for (auto& cls : v.classes) {
      int own = -1;
      ExprPtr from;
      for (auto& m : cls) {
        if (m.first == static_cast<int>(side)) own = m.second;
        else if (!v.sides[m.first].padded && !from)
          from = ast::column_ref(v.sides[m.first].qualifier, v.sides[m.first].table->schema.columns[m.second].name);
      }
      if (own < 0 || !from) continue;
      std::string value = capture(std::move(from));
      guard = conjoin(std::move(guard), ast::is_not_null(captured(value)));
      cols.emplace_back(js.table->schema.columns[own].name, captured(value));
      keys.push_back(js.table->schema.columns[own].name);
    }
    ExprPtr nonempty;
    for (auto& [owner, assignment] : padded_values) {
      if (owner != static_cast<int>(side)) continue;
      ExprPtr value = std::move(assignment.second);
      walk(value, [&](ExprPtr& x, int depth) {
        if (depth > 0 || x->kind != ast::ExprKind::kColumn) return false;
        auto& ref = static_cast<ast::ColumnRef&>(*x);
        if (iequals(ref.table, js.qualifier)) x = ast::null_literal();  // a padded row reads NULL
        else if (!ref.table.empty() && !iequals(ref.table, "__vw_k")) x = captured(capture(clone(*x)));
        return true;
      });
      auto same = [&](const std::pair<std::string, ExprPtr>& c) { return iequals(c.first, assignment.first); };
      cols.erase(std::remove_if(cols.begin(), cols.end(), same), cols.end());
      if (v.decomposition) nonempty = ast::disjoin(std::move(nonempty), ast::is_not_null(clone(*value)));
      cols.emplace_back(assignment.first, std::move(value));
    }
    // An advertised decomposition's absent component is materialized only when a value
    // it would get is not NULL (spec/lens.md "The put fan-out": the runtime non-empty
    // filter): an all-NULL row would be a phantom (set c = c + 1 over an absent c).
    if (nonempty) guard = conjoin(std::move(guard), std::move(nonempty));
    for (auto& col : js.table->schema.columns) {
      if (!col.not_null || col.default_expr || col.generated()) continue;
      if (std::none_of(cols.begin(), cols.end(), [&](auto& c) { return iequals(c.first, col.name); }))
        v.refuse("a view row without a '" + js.qualifier + "' partner would get one, but NOT NULL column '" +
                 js.table->schema.name + "." + col.name + "' has no value or default (null-extended-create-conflict)");
    }
    // insert into <side> (<cols>) select <values> from __vw_keys as __vw_k where <guard>
    //   group by <join key> — one partner per distinct key, however many preserved rows
    //   share it; each other value is min(<value>) (vu-operators.md, Outer Joins: the same
    //   for every row of a group unless it reads the preserved row, where min decides).
    auto ins = std::make_unique<ast::InsertStmt>();
    ins->or_action = s.or_action;
    ins->table = qualified(js);
    std::vector<ast::ResultColumn> values;
    std::vector<ExprPtr> group_by;
    for (auto& [n, val] : cols) {
      ins->columns.push_back(n);
      bool key = std::any_of(keys.begin(), keys.end(), [&](const std::string& k) { return iequals(k, n); });
      if (keys.empty()) {
        values.push_back(ast::result_column(std::move(val)));
      } else if (key) {
        group_by.push_back(clone(*val));
        values.push_back(ast::result_column(std::move(val)));
      } else {
        std::vector<ExprPtr> arg;
        arg.push_back(std::move(val));
        values.push_back(ast::result_column(ast::call("min", std::move(arg))));
      }
    }
    ins->source = ast::select(std::move(values), ast::table_source({"", kKeys, {}}, "__vw_k"), std::move(guard));
    ins->source->core.group_by = std::move(group_by);
    ins->context = clone(s.context);
    materialize[side] = std::move(ins);
  }
  out.capture = key_capture(v, std::move(s.where), std::move(s.with), std::move(reads));
  out.capture_name = kKeys;
  for (int side : parents_first(v)) {
    const JoinSide& js = v.sides[side];
    if (flags[side] == 0) {  // set <flag> = false: delete the matched partner rows
      out.statements.push_back(captured_delete(v, side, s.context));
      continue;
    }
    // An advertised decomposition's optional member whose every value column is set NULL
    // is emptied: its row is deleted (spec/lens.md "The put fan-out"), as on the
    // anchor-keyed path.
    if (v.decomposition && js.padded && !per_side[side].empty() && flags[side] != 1) {
      bool emptied = true;
      for (size_t i = 0; i < js.table->schema.columns.size() && emptied; ++i) {
        bool key = false;
        for (auto& cls : v.classes)
          for (auto& m : cls) key = key || (m.first == side && m.second == static_cast<int>(i));
        if (key || js.table->schema.columns[i].generated()) continue;
        emptied = std::any_of(per_side[side].begin(), per_side[side].end(), [&](const auto& a) {
          return iequals(a.first, js.table->schema.columns[i].name) && a.second->kind == ast::ExprKind::kLiteral &&
                 static_cast<const ast::Literal&>(*a.second).literal_kind == ast::LiteralKind::kNull;
        });
      }
      if (emptied) {
        out.statements.push_back(captured_delete(v, side, s.context));
        continue;
      }
    }
    if (per_side[side].empty()) {
      if (materialize[side]) out.statements.push_back(std::move(materialize[side]));
      continue;
    }
    // update <side> as <q> set … where exists (select 1 from __vw_keys as __vw_k where <match>)
    auto u = std::make_unique<ast::UpdateStmt>();
    u->or_action = s.or_action;
    u->table = qualified(js);
    u->alias = js.qualifier;
    for (auto& [column, value] : per_side[side]) u->assignments.push_back({{column}, std::move(value)});
    u->where = captured_rows(v, side, js.qualifier);
    u->context = clone(s.context);
    out.statements.push_back(std::move(u));
    if (materialize[side]) out.statements.push_back(std::move(materialize[side]));
  }
  if (!s.returning.empty()) out.returning_query = returning_query(v, s.returning, sub, target);
}

// The foreign key side `child` declares to side `parent`'s table (the first one; null
// when none), whether or not the join correlates it.
const ForeignKeySchema* declared_fk(const ViewShape& v, int child, int parent) {
  const TableSchema& c = v.sides[child].table->schema;
  const TableSchema& p = v.sides[parent].table->schema;
  for (const ForeignKeySchema& fk : c.foreign_keys)
    if (fk_references(fk, p)) return &fk;
  return nullptr;
}

// True when side `child` declares a foreign key to side `parent`'s table that the join
// correlates: each FK column is equated (one key class) with the referenced column.
bool join_proves_fk(const ViewShape& v, int child, int parent) {
  const TableSchema& c = v.sides[child].table->schema;
  const TableSchema& p = v.sides[parent].table->schema;
  auto same_class = [&](int cc, int pc) {
    for (const auto& cls : v.classes) {
      bool has_c = false, has_p = false;
      for (const auto& [side, col] : cls) {
        has_c = has_c || (side == child && col == cc);
        has_p = has_p || (side == parent && col == pc);
      }
      if (has_c && has_p) return true;
    }
    return false;
  };
  for (const ForeignKeySchema& fk : c.foreign_keys) {
    if (!fk_references(fk, p)) continue;
    std::vector<int> ref;
    if (fk.referenced_columns.empty()) {
      for (const KeyColumn& k : p.primary_key) ref.push_back(k.column);
    } else {
      for (const std::string& n : fk.referenced_columns) ref.push_back(p.find_column(n));
    }
    if (ref.size() != fk.columns.size() || ref.empty()) continue;
    bool all = true;
    for (size_t i = 0; i < ref.size() && all; ++i) all = ref[i] >= 0 && same_class(fk.columns[i], ref[i]);
    if (all) return true;
  }
  return false;
}

void lower_join_delete(ast::DeleteStmt& s, const ViewShape& v, LoweredWrite& out) {
  std::string target = s.alias.empty() ? s.table.name : s.alias;
  Substituter sub(v, target);
  sub(s.where);
  out.capture = key_capture(v, std::move(s.where), std::move(s.with), {});
  out.capture_name = kKeys;
  // The candidate sides are the preserved ones (an outer join's row is the preserved
  // row's: deleting it removes the view row and leaves the padded side, which other rows
  // may share, alone). A side that is the parent of a foreign key the join correlates
  // from another candidate stays: the FK proves the child side, which alone is deleted
  // (vu-operators.md, Inner Join — Deletes). Without such proof the delete fans out to
  // every candidate, children first.
  std::vector<bool> deleted(v.sides.size(), false);
  for (size_t side = 0; side < v.sides.size(); ++side) deleted[side] = !v.sides[side].padded;
  if (v.decomposition) {
    // An advertised decomposition: every member goes, the existence anchor (side 0)
    // last, each member's rows identified from the keys captured before any delete.
    for (size_t side = 1; side < v.sides.size(); ++side) out.statements.push_back(captured_delete(v, static_cast<int>(side), s.context));
    // An EAV member's triples of every deleted entity:
    //   delete from <pivot> where <entity> in (select k0_<j> from <captured keys>)
    const std::vector<int> anchor_keys = key_columns(v.sides[0]);
    for (const LensSlot::EavMember& m : v.eav) {
      int at = -1;
      for (size_t j = 0; j < anchor_keys.size(); ++j)
        if (iequals(v.sides[0].table->schema.columns[anchor_keys[j]].name, m.anchor_key)) at = static_cast<int>(j);
      if (at < 0)
        v.refuse("the EAV member '" + m.table + "' stitches to anchor column '" + m.anchor_key +
                 "', which is not a primary-key column of the anchor: its triples cannot be deleted with the row");
      auto d = std::make_unique<ast::DeleteStmt>();
      d->table = {m.schema, m.table, {}};
      d->where = ast::in_subquery(ast::column_ref(m.table, m.entity),
                                  from_capture(captured("k0_" + std::to_string(at)), nullptr));
      d->context = clone(s.context);
      out.statements.push_back(std::move(d));
    }
    out.statements.push_back(captured_delete(v, 0, s.context));
    if (!s.returning.empty()) {
      out.returning_query = returning_query(v, s.returning, sub, target);
      out.returning_before = true;
    }
    return;
  }
  std::vector<bool> parent(v.sides.size(), false);
  for (size_t c = 0; c < v.sides.size(); ++c)
    for (size_t p = 0; p < v.sides.size(); ++p)
      if (c != p && deleted[c] && deleted[p] && v.sides[c].table != v.sides[p].table &&
          join_proves_fk(v, static_cast<int>(c), static_cast<int>(p)))
        parent[p] = true;
  bool any_child = false;
  for (size_t side = 0; side < v.sides.size(); ++side) any_child = any_child || (deleted[side] && !parent[side]);
  if (any_child)
    for (size_t side = 0; side < v.sides.size(); ++side) deleted[side] = deleted[side] && !parent[side];
  std::vector<int> order = parents_first(v);
  std::reverse(order.begin(), order.end());
  // Two sides that reference each other (a mutual FK), both deleted: ON-DELETE-aware
  // order — the side whose removal clears the other's reference (its inbound action sets
  // NULL or a default) goes first. RESTRICT both ways, or RESTRICT against a CASCADE that
  // recurses into it, cannot succeed in any order: refused up front when the join
  // correlates a mutual edge (vu-operators.md, Inner Join — Deletes).
  if (v.sides.size() == 2 && deleted[0] && deleted[1] && v.sides[0].table != v.sides[1].table) {
    const ForeignKeySchema* to1 = declared_fk(v, 0, 1);  // side 0 references side 1
    const ForeignKeySchema* to0 = declared_fk(v, 1, 0);
    if (to1 && to0) {
      using RA = ReferentialAction;
      auto clears = [](RA a) { return a == RA::kSetNull || a == RA::kSetDefault; };
      const RA into0 = to0->on_delete, into1 = to1->on_delete;  // what deleting side 0 / 1 does to the other
      if (clears(into0)) order = {0, 1};
      else if (clears(into1)) order = {1, 0};
      else if ((into0 == RA::kRestrict || into1 == RA::kRestrict) && (join_proves_fk(v, 0, 1) || join_proves_fk(v, 1, 0)))
        v.refuse("its two tables reference each other with ON DELETE " +
                 std::string(into0 == RA::kRestrict && into1 == RA::kRestrict ? "RESTRICT both ways" : "RESTRICT against a CASCADE") +
                 ": no order of the two deletes can succeed (mutual-fk-restrict-delete); break the cycle first "
                 "(null the referencing column) or change an ON DELETE action");
    }
  }
  for (int side : order) {
    if (!deleted[side]) continue;
    out.statements.push_back(captured_delete(v, side, s.context));
  }
  if (!s.returning.empty()) {
    out.returning_query = returning_query(v, s.returning, sub, target);
    out.returning_before = true;
  }
}

// An INSERT's existence flags are directives, never stored: per side, 1 activates the
// padded side, 0 forces the preserved-only (null-extended) row, -1 unset. The value must
// be one boolean literal for every VALUES row.
std::vector<int> existence_directives(const ast::InsertStmt& s, const ViewShape& v, const Substituter& sub,
                                      const std::vector<std::string>& view_cols) {
  std::vector<int> directive(v.sides.size(), -1);
  for (size_t i = 0; i < view_cols.size(); ++i) {
    const ViewColumn& c = sub.column(view_cols[i]);
    if (c.existence_side < 0) continue;
    const bool plain_values = s.source && s.source->compounds.empty() && !s.source->core.values.empty();
    if (!plain_values)
      v.refuse("existence column '" + c.name + "' as an INSERT directive needs a VALUES source "
               "(unsupported-outer-join-update)");
    int value = -1;
    for (const auto& row : s.source->core.values) {
      if (i >= row.size()) continue;
      const int here = flag_value(v, c, *row[i]) ? 1 : 0;
      if (value >= 0 && here != value)
        v.refuse("existence column '" + c.name + "' must take the same value in every inserted row "
                 "(unsupported-outer-join-update)");
      value = here;
    }
    directive[c.existence_side] = value;
  }
  return directive;
}

// A literal or parameter, signed or cast: the same value however often it is evaluated.
bool constant_value(const ast::Expr& e) {
  switch (e.kind) {
    case ast::ExprKind::kLiteral:
    case ast::ExprKind::kParameter: return true;
    case ast::ExprKind::kUnary: {
      auto& u = static_cast<const ast::UnaryExpr&>(e);
      return (u.op == ast::UnaryOp::kNegate || u.op == ast::UnaryOp::kPlus) && constant_value(*u.operand);
    }
    case ast::ExprKind::kCast: return constant_value(*static_cast<const ast::CastExpr&>(e).operand);
    default: return false;
  }
}

// A plain VALUES list of `width` constant values per row.
bool constant_values(const ast::Select& q, size_t width) {
  if (!q.compounds.empty() || q.core.values.empty() || q.with || !q.order_by.empty() || q.limit || q.offset || q.dml)
    return false;
  for (const auto& row : q.core.values) {
    if (row.size() != width) return false;
    for (const auto& x : row)
      if (!x || !constant_value(*x)) return false;
  }
  return true;
}

// `value` (over the envelope's columns c0, c1, …) with row's values in their place.
ExprPtr enveloped(const ast::Expr& value, const std::vector<ExprPtr>& row) {
  ExprPtr out = clone(value);
  walk(out, [&](ExprPtr& e, int) {
    if (e->kind != ast::ExprKind::kColumn) return false;
    auto& c = static_cast<const ast::ColumnRef&>(*e);
    if (c.table != kEnvelope || c.column.size() < 2 || c.column[0] != 'c') return false;
    e = clone(*row.at(std::stoul(c.column.substr(1))));
    return true;
  });
  return out;
}

void lower_join_insert(ast::InsertStmt& s, const ViewShape& v, LoweredWrite& out) {
  std::string target = s.alias.empty() ? s.table.name : s.alias;
  Substituter sub(v, target);
  if (auto twice = v.join_key_exposed_twice(); !twice.empty())
    v.refuse("the join key is exposed by two view columns ('" + twice[0] + "' and '" + twice[1] +
             "'): an INSERT could not honour two values for one key (unsupported-join)");
  if (!s.returning.empty())
    v.refuse("RETURNING through a multi-source (join) view insert is not supported yet (returning-through-view)");
  if (!s.upserts.empty()) v.refuse("ON CONFLICT through a multi-source (join) view insert is not supported yet");
  std::vector<std::string> view_cols = s.columns;
  if (view_cols.empty() && !s.default_values)
    for (auto& c : v.columns) view_cols.push_back(c.name);
  // (side, column) → its value, read from the envelope (cloned at each use).
  std::map<std::pair<int, int>, std::shared_ptr<const ast::Expr>> given;
  std::map<std::pair<int, int>, size_t> supplied_by;  // (side, column) → the inserted column
  std::set<int> supplied_sides;
  const std::vector<int> directive = existence_directives(s, v, sub, view_cols);
  for (size_t i = 0; i < view_cols.size(); ++i) {
    const ViewColumn& c = sub.column(view_cols[i]);
    if (c.existence_side >= 0) continue;
    if (c.authored)
      v.refuse("column '" + c.name + "' has an authored inverse (WITH INVERSE); evaluating authored puts through a "
               "join view's insert envelope is deferred");
    if (c.base.empty())
      v.refuse("column '" + c.name + "' is computed (" + expr_to_string(*c.term) +
               ") and read-only: it has no inverse (no-inverse)");
    if (!c.inverse.empty()) refuse_inverse_insert(v, c);
    auto key = std::make_pair(c.side, v.sides[c.side].find(c.base));
    supplied_sides.insert(c.side);
    std::shared_ptr<const ast::Expr> value = c.to_base(ast::column_ref(kEnvelope, "c" + std::to_string(i)));
    if (!given.emplace(key, value).second)
      v.refuse("two inserted columns write base column '" + c.base + "'");
    supplied_by[key] = i;
  }
  // The join's equivalence classes share one value per row: a supplied member's, else
  // the anchor's DEFAULT minted once per row (the first side, in FROM order, whose
  // member column declares one).
  std::map<std::pair<int, int>, int> minted_by;  // (side, column) → the side whose DEFAULT minted it
  for (auto& cls : v.classes) {
    if (!v.shares_keys()) break;
    std::shared_ptr<const ast::Expr> value;
    for (auto& m : cls)
      if (given.count(m)) {
        value = given[m];
        break;
      }
    if (!value) {
      std::pair<int, int> anchor{-1, -1};
      for (auto& m : cls) {
        const ColumnSchema& col = v.sides[m.first].table->schema.columns[m.second];
        if (col.default_expr && !col.generated() && (anchor.first < 0 || m.first < anchor.first)) anchor = m;
      }
      if (anchor.first < 0) continue;
      value = ast::column_ref(kEnvelope, "m" + std::to_string(out.minted.size()));
      const TableSchema& at = v.sides[anchor.first].table->schema;
      std::vector<int> from(at.columns.size(), -1);
      for (size_t j = 0; j < at.columns.size(); ++j)
        if (auto it = supplied_by.find({anchor.first, static_cast<int>(j)}); it != supplied_by.end()) from[j] = static_cast<int>(it->second);
      out.minted.push_back({v.sides[anchor.first].table, anchor.second, std::move(from)});
      for (auto& m : cls) minted_by.emplace(m, anchor.first);
    }
    for (auto& m : cls) given.emplace(m, value);
  }
  // The body's `side.column = literal` conjuncts pin the columns the write leaves open.
  std::vector<const ast::Expr*> cs;
  conjuncts(v.where, cs);
  for (const ast::Expr* c : cs) {
    if (c->kind != ast::ExprKind::kBinary) continue;
    auto& b = static_cast<const ast::BinaryExpr&>(*c);
    if (b.op != ast::BinaryOp::kEq && b.op != ast::BinaryOp::kEqEq) continue;
    auto col = join_column(v, b.left.get());
    const ast::Expr* lit = b.right.get();
    if (col.first < 0) {
      col = join_column(v, b.right.get());
      lit = b.left.get();
    }
    if (col.first < 0 || lit->kind != ast::ExprKind::kLiteral) continue;
    // A supplied VALUES literal that differs from the constant is refused (the row would
    // not be visible through the view); one not provable at plan time is inserted.
    if (auto it = supplied_by.find(col); it != supplied_by.end()) {
      refuse_contradicting_values(s, v, it->second, v.sides[col.first].table->schema.columns[col.second].name,
                                  static_cast<const ast::Literal&>(*lit));
      continue;
    }
    given.emplace(col, clone(*lit));
  }
  // An outer join's padded side gets a row only when the insert supplies one of its
  // columns, or its existence directive is true; false forbids its columns.
  for (size_t side = 0; side < v.sides.size(); ++side)
    if (directive[side] == 0 && supplied_sides.count(static_cast<int>(side)))
      v.refuse("an existence directive of false contradicts the supplied columns of '" + v.sides[side].qualifier +
               "' (conflicting-assignment)");
  auto written = [&](size_t side) {
    return !v.sides[side].padded || directive[side] == 1 ||
           (directive[side] != 0 && supplied_sides.count(static_cast<int>(side)));
  };
  for (size_t side = 0; side < v.sides.size(); ++side) {
    if (!written(side)) continue;
    const TableSchema& ts = v.sides[side].table->schema;
    for (size_t i = 0; i < ts.columns.size(); ++i) {
      const ColumnSchema& col = ts.columns[i];
      if (!col.not_null || col.default_expr || col.generated() || given.count({static_cast<int>(side), static_cast<int>(i)}))
        continue;
      // A shared join key nobody supplies: the engine mints no key, the anchor's DEFAULT
      // does (vu-mutation-context.md, "Shared keys are ordinary defaults").
      bool shared = false;
      for (auto& cls : v.classes)
        for (auto& m : cls) shared = shared || (m.first == static_cast<int>(side) && m.second == static_cast<int>(i));
      if (shared && v.shares_keys())
        v.refuse(not_null_unsupplied(ts.name, col.name) + "; it is the shared join key: supply it, or declare a DEFAULT on it, e.g. " +
                 "default (coalesce((select max(" + col.name + ") from " + ts.name + "), 0) + mutation_ordinal())");
      v.refuse(not_null_unsupplied(ts.name, col.name));
    }
  }
  // A singleton's anchor and mandatory members (primary key (): joined `on true`, no
  // shared key) take their row even when the insert supplies none of their columns
  // (spec/lens.md, "The put fan-out": "a singleton (primary key ()) inserts each member
  // unconditionally over the empty key"): the first stored column gets its DEFAULT, or NULL.
  for (size_t side = 0; singleton_shape(v) && side < v.sides.size(); ++side) {
    if (v.sides[side].padded) continue;  // an optional member: a row only when supplied
    bool any = false;
    for (auto& [key, value] : given) any = any || key.first == static_cast<int>(side);
    const TableSchema& member = v.sides[side].table->schema;
    for (size_t i = 0; !any && i < member.columns.size(); ++i) {
      if (member.columns[i].generated()) continue;
      given.emplace(std::make_pair(static_cast<int>(side), static_cast<int>(i)),
                    member.columns[i].default_expr ? clone(*member.columns[i].default_expr) : ast::null_literal());
      any = true;
    }
  }
  // A VALUES source of literals and parameters needs no envelope: each side's insert
  // takes its own VALUES, the inserted columns substituted in (the same values, evaluated
  // alike; no row to materialize). Anything else is evaluated once, into the envelope.
  // A padded side (an outer join's, or an advertised decomposition's optional member)
  // gets a row only for the rows that supply a non-NULL value to one of its columns (the
  // presence filter: the outer join reads an absent side as all-NULL, so the row
  // round-trips either way), unless an existence directive of true asks for it.
  auto presence = [&](int side) -> ExprPtr {
    if (!v.sides[side].padded || directive[side] == 1) return nullptr;
    ExprPtr any;
    for (auto& [key, at] : supplied_by)
      if (key.first == side) any = ast::disjoin(std::move(any), ast::is_not_null(clone(*given[key])));
    return any;
  };
  bool filtered = false;
  for (size_t side = 0; side < v.sides.size(); ++side) filtered = filtered || (written(side) && presence(static_cast<int>(side)));
  if (!filtered && out.minted.empty() && !s.with && s.source && constant_values(*s.source, view_cols.size())) {
    for (int side : parents_first(v)) {
      if (!written(side)) continue;
      const JoinSide& js = v.sides[side];
      auto ins = std::make_unique<ast::InsertStmt>();
      ins->or_action = s.or_action;
      ins->table = qualified(js);
      auto source = std::make_unique<ast::Select>();
      source->schema_path = s.source->schema_path;
      source->core.values.resize(s.source->core.values.size());
      for (auto& [key, value] : given) {
        if (key.first != side) continue;
        ins->columns.push_back(js.table->schema.columns[key.second].name);
        for (size_t r = 0; r < s.source->core.values.size(); ++r)
          source->core.values[r].push_back(enveloped(*value, s.source->core.values[r]));
      }
      if (ins->columns.empty()) v.refuse("the insert supplies no column of '" + js.table->schema.name + "'");
      ins->source = std::move(source);
      ins->context = clone(s.context);
      out.statements.push_back(std::move(ins));
    }
    return;
  }
  // The envelope: the user's source, once, with its columns named c0, c1, ….
  auto env = std::make_unique<ast::SelectStmt>();
  if (s.default_values || !s.source) {
    std::vector<ast::ResultColumn> none;
    none.push_back(ast::result_column(ast::null_literal(), "__vw_none"));
    env->select = ast::select(std::move(none), nullptr);
  } else {
    // select * from (<source>) as __vw_src(c0, c1, …)
    std::vector<std::string> names;
    for (size_t i = 0; i < view_cols.size(); ++i) names.push_back("c" + std::to_string(i));
    std::vector<ast::ResultColumn> all;
    all.push_back(ast::star());
    auto path = s.source->schema_path;
    env->select = ast::select(std::move(all), ast::subquery_source(std::move(s.source), "__vw_src", std::move(names)));
    env->select->schema_path = path;
  }
  env->select->with = std::move(s.with);
  if (!s.schema_path.empty()) env->select->schema_path = s.schema_path;
  out.capture = std::move(env);
  out.capture_name = kEnvelope;
  for (int side : parents_first(v)) {
    if (!written(side)) continue;
    const JoinSide& js = v.sides[side];
    // insert into <side> (<cols>) select <values> from __vw_env
    auto ins = std::make_unique<ast::InsertStmt>();
    ins->or_action = s.or_action;
    ins->table = qualified(js);
    std::vector<ast::ResultColumn> values;
    for (auto& [key, value] : given) {
      if (key.first != side) continue;
      ins->columns.push_back(js.table->schema.columns[key.second].name);
      ExprPtr cell = clone(*value);
      // A key minted by a gated padded side's DEFAULT, threaded into a foreign key that
      // references that side: NULL in the rows where the side gets no row (no dangling
      // reference; vu-operators.md, Outer Joins, the per-row conditional key thread).
      if (auto it = minted_by.find(key); it != minted_by.end() && it->second != side && declared_fk(v, side, it->second))
        if (ExprPtr gate = presence(it->second)) {
          auto c = std::make_unique<ast::CaseExpr>();
          c->whens.emplace_back(std::move(gate), std::move(cell));
          c->else_expr = ast::null_literal();
          cell = std::move(c);
        }
      values.push_back(ast::result_column(std::move(cell)));
    }
    if (ins->columns.empty()) v.refuse("the insert supplies no column of '" + js.table->schema.name + "'");
    ins->source = ast::select(std::move(values), ast::table_source({"", kEnvelope, {}}, ""), presence(side));
    ins->context = clone(s.context);
    out.statements.push_back(std::move(ins));
  }
}


}  // namespace view_write

using namespace view_write;

namespace {

// A CTE of the statement's leading WITH named as its target (`with x as (…) update x …`,
// unqualified): an ephemeral view over the CTE's body, written through like a named one
// (vu-operators.md, "the CTE-name DML target"). The CTE shadows a same-named table or
// view, as it does for a read. Null when the target names no such CTE.
// True when `q` reads a relation named `name` (unqualified) anywhere: its FROM sources,
// compound legs, nested and expression subqueries, its own WITH.
bool reads_name(const ast::Select& q, const std::string& name);

bool core_reads_name(const ast::SelectCore& c, const std::string& name) {
  if (c.nested) return reads_name(*c.nested, name);
  bool found = false;
  std::function<void(const ast::Expr&)> expr = [&](const ast::Expr& e) {
    ast::for_each_child(
        e, [&](const ExprPtr& x) { expr(*x); }, [&](const ast::Select& sub) { found = found || reads_name(sub, name); });
  };
  std::function<void(const ast::TableSource&)> source = [&](const ast::TableSource& t) {
    using K = ast::TableSource::Kind;
    if (t.kind == K::kTable && t.table.schema.empty() && iequals(t.table.name, name)) found = true;
    if (t.kind == K::kSubquery && t.subquery) found = found || reads_name(*t.subquery, name);
    if (t.kind == K::kJoin) {
      source(*t.left);
      source(*t.right);
      if (t.on) expr(*t.on);
    }
    for (const auto& a : t.function_args) expr(*a);
  };
  if (c.from) source(*c.from);
  for (const auto& rc : c.columns)
    if (rc.expr) expr(*rc.expr);
  if (c.where) expr(*c.where);
  if (c.having) expr(*c.having);
  for (const auto& row : c.values)
    for (const auto& v : row) expr(*v);
  return found;
}

bool reads_name(const ast::Select& q, const std::string& name) {
  if (q.with)
    for (const auto& cte : q.with->ctes)
      if (cte.select && reads_name(*cte.select, name)) return true;
  if (core_reads_name(q.core, name)) return true;
  for (const auto& leg : q.compounds)
    if (core_reads_name(leg.core, name)) return true;
  return false;
}

// Why a CTE body cannot be inlined into the body that reads it (the reason a single-level
// target of that shape gives); empty when it can: a single-source projection and filter.
std::string chain_link_refusal(PlanningContext& db, const ast::Select& q) {
  using K = ast::TableSource::Kind;
  const ast::SelectCore& c = q.core;
  if (q.dml) return "its body is a data-modifying statement";
  if (!q.compounds.empty()) return "set-operation body (UNION / INTERSECT / EXCEPT) is not updatable yet";
  if (c.nested) return "parenthesized body is not updatable yet";
  if (!c.values.empty()) return "no recoverable base operation (a VALUES body reads no base table)";
  if (q.limit || q.offset)
    return "LIMIT/OFFSET body cannot be reproduced as a predicate on the base rows (unsupported-limit)";
  if (c.distinct) return "DISTINCT body has no one-to-one base-row lineage (unsupported-distinct)";
  if (!c.group_by.empty() || c.having) return "aggregate body is not row-decomposable (unsupported-aggregate)";
  for (const ast::ResultColumn& rc : c.columns) {
    if (!rc.expr) continue;
    if (has_aggregate(db, *rc.expr)) return "aggregate body is not row-decomposable (unsupported-aggregate)";
    if (has_window(*rc.expr)) return "a window function in a CTE another CTE's body reads is not inlined";
    if (!rc.inverse.empty()) return "an authored inverse (WITH INVERSE) in a CTE another CTE's body reads is not inlined";
  }
  if (!c.from) return "no recoverable base operation (the body reads no table)";
  if (c.from->kind == K::kFunction) return "no recoverable base operation (a table-valued function is read-only)";
  if (c.from->kind == K::kSubquery) return "a FROM-subquery body is not updatable yet";
  if (c.from->kind == K::kJoin) return "a join body in a CTE another CTE's body reads is not updatable yet";
  if (q.with) return "a body with its own WITH clause is not updatable yet";
  if (!q.defaults.empty()) return "WITH DEFAULTS on a CTE another CTE's body reads is not merged yet";
  if (!q.schema_path.empty()) return "WITH SCHEMA on a CTE another CTE's body reads is not merged yet";
  return "";
}

// Multi-level CTE body (vu-operators.md, "Multi-level CTE body — transparent inlining"): a
// target body whose single source is a CTE it can see (`visible`, in definition order) is
// composed with that CTE's body, down to a base table — each reference to the CTE's
// columns replaced by the column's defining expression, the CTE's WHERE conjoined first
// and its FROM taken over. A link that is not a projection and filter refuses with the
// reason a single-level target of its shape gives. The body's own WITH blocks and a name
// no visible CTE has end the chain (the body then reads a table or view).
void inline_cte_chain(PlanningContext& db, ast::Select& body, std::vector<const ast::CommonTableExpr*> visible,
                      const std::string& target) {
  using K = ast::TableSource::Kind;
  auto refuse = [&](const std::string& why) {
    throw Error(StatusCode::kError, "cannot write through view '" + target + "': " + why);
  };
  while (!visible.empty()) {
    ast::SelectCore& core = body.core;
    if (body.dml || core.nested || !core.values.empty() || !core.from || core.from->kind != K::kTable ||
        !core.from->table.schema.empty())
      return;
    const std::string source = core.from->table.name;
    if (body.with)
      for (const ast::CommonTableExpr& own : body.with->ctes)
        if (iequals(own.name, source)) return;
    size_t at = visible.size();
    for (size_t i = 0; i < visible.size(); ++i)
      if (iequals(visible[i]->name, source)) at = i;
    if (at == visible.size() || !visible[at]->select) return;
    const ast::CommonTableExpr& cte = *visible[at];
    const ast::Select& inner = *cte.select;
    if (std::string why = chain_link_refusal(db, inner); !why.empty()) refuse(why);
    const ast::TableSource& inner_from = *inner.core.from;
    const std::string inner_q = inner_from.alias.empty() ? inner_from.table.name : inner_from.alias;
    // The CTE's output columns: (name, defining expression over its own FROM).
    std::vector<std::pair<std::string, const ast::Expr*>> outs;
    std::vector<ExprPtr> owned;  // the terms `*` stands for
    for (const ast::ResultColumn& rc : inner.core.columns) {
      if (rc.kind == ast::ResultColumn::Kind::kExpr) {
        std::string n = rc.alias;
        if (n.empty() && rc.expr->kind == ast::ExprKind::kColumn) n = static_cast<const ast::ColumnRef&>(*rc.expr).column;
        outs.emplace_back(n, rc.expr.get());
        continue;
      }
      ResolvedRelation rel = db.resolve_relation(inner_from.table.schema, inner_from.table.name, nullptr);
      for (const std::string& n : relation_columns(db, rel)) {
        owned.push_back(ast::column_ref(inner_q, n));
        outs.emplace_back(n, owned.back().get());
      }
    }
    if (!cte.columns.empty()) {
      if (cte.columns.size() != outs.size()) return;  // the read reports the count mismatch
      for (size_t i = 0; i < outs.size(); ++i) outs[i].first = cte.columns[i];
    }
    const std::string q = core.from->alias.empty() ? source : core.from->alias;
    auto term_of = [&](const std::string& n) -> const ast::Expr* {
      for (const auto& [name, e] : outs)
        if (!name.empty() && iequals(name, n)) return e;
      return nullptr;
    };
    // A reference to the CTE's column: unqualified at the body's own level, or qualified by
    // the source's name at any depth.
    const Rewrite substitute = [&](ExprPtr& x, int depth) {
      if (x->kind != ast::ExprKind::kColumn) return false;
      auto& ref = static_cast<ast::ColumnRef&>(*x);
      const bool ours = ref.schema.empty() && (ref.table.empty() ? depth == 0 : iequals(ref.table, q));
      if (!ours) return true;
      if (const ast::Expr* t = term_of(ref.column)) x = clone(*t);
      return true;
    };
    std::vector<ast::ResultColumn> columns;
    for (ast::ResultColumn& rc : core.columns) {
      if (rc.kind == ast::ResultColumn::Kind::kStar ||
          (rc.kind == ast::ResultColumn::Kind::kTableStar && iequals(rc.table, q))) {
        for (const auto& [name, e] : outs) {
          ast::ResultColumn out;
          out.expr = clone(*e);
          out.alias = name;
          out.site = rc.site;
          columns.push_back(std::move(out));
        }
        continue;
      }
      if (rc.kind == ast::ResultColumn::Kind::kExpr) {
        // The column keeps the name the read gives it.
        if (rc.alias.empty() && rc.expr->kind == ast::ExprKind::kColumn)
          rc.alias = static_cast<const ast::ColumnRef&>(*rc.expr).column;
        walk(rc.expr, substitute);
        for (ast::NamedExpr& inv : rc.inverse) walk(inv.value, substitute);
      }
      columns.push_back(std::move(rc));
    }
    core.columns = std::move(columns);
    if (core.where) walk(core.where, substitute);
    for (ast::OrderingTerm& o : body.order_by) walk(o.expr, substitute);
    core.where = conjoin(inner.core.where ? clone(*inner.core.where) : nullptr, std::move(core.where));
    core.from = clone(inner_from);
    visible.resize(at);  // the CTE's own body sees only the CTEs before it
  }
}

std::shared_ptr<const ViewEntry> cte_target(PlanningContext& db, const ast::WithClause* with,
                                            const ast::QualifiedName& name, const std::string& home) {
  if (!with || !name.schema.empty()) return nullptr;
  for (size_t index = 0; index < with->ctes.size(); ++index) {
    const ast::CommonTableExpr& cte = with->ctes[index];
    if (!iequals(cte.name, name.name) || !cte.select) continue;
    // Under WITH RECURSIVE a target whose body does not read itself is an ordinary one
    // (vu-operators.md, the CTE-name target).
    if (with->recursive && reads_name(*cte.select, cte.name))
      throw Error(StatusCode::kError, "cannot write through CTE '" + cte.name + "': a recursive WITH is not updatable (recursive-cte)");
    auto def = std::make_shared<ast::CreateViewStmt>();
    def->view = {home, cte.name, cte.site};
    def->columns = cte.columns;
    def->select = clone(*cte.select);
    // A body reading a prior sibling is composed down to its base table; the target's own
    // name is not among them (`with base as (select … from base)` reads the table).
    std::vector<const ast::CommonTableExpr*> prior;
    for (size_t i = 0; i < index; ++i) prior.push_back(&with->ctes[i]);
    inline_cte_chain(db, *def->select, std::move(prior), cte.name);
    auto view = std::make_shared<ViewEntry>();
    view->schema_name = home;
    view->name = cte.name;
    view->columns = cte.columns;
    view->definition = std::move(def);
    return view;
  }
  return nullptr;
}

// `update (select …) as v …` / `delete from (select …) as v …`: the subquery's select.
const ast::Select* target_query(const ast::Statement& stmt) {
  if (stmt.kind == ast::StmtKind::kUpdate) return static_cast<const ast::UpdateStmt&>(stmt).target_query.get();
  if (stmt.kind == ast::StmtKind::kDelete) return static_cast<const ast::DeleteStmt&>(stmt).target_query.get();
  return nullptr;
}

// … and the rename list of its columns (`as v (a, b)`; empty when none).
const std::vector<std::string>& target_columns(const ast::Statement& stmt) {
  if (stmt.kind == ast::StmtKind::kUpdate) return static_cast<const ast::UpdateStmt&>(stmt).target_columns;
  return static_cast<const ast::DeleteStmt&>(stmt).target_columns;
}

// An inline subquery target: an ephemeral view over the subquery, named by its alias
// (vu-operators.md, "Inline subquery DML target").
std::shared_ptr<const ViewEntry> subquery_target(PlanningContext& db, const ast::WithClause* with, const ast::Select& query,
                                                 const std::vector<std::string>& columns, const ast::QualifiedName& name,
                                                 const std::string& home) {
  auto def = std::make_shared<ast::CreateViewStmt>();
  def->view = {home, name.name, name.site};
  def->columns = columns;
  def->select = clone(query);
  // An inline body reading one of the statement's CTEs is composed down to its base table
  // (it sees every CTE of the statement; it has no name of its own to shadow).
  if (with) {
    std::vector<const ast::CommonTableExpr*> all;
    for (const ast::CommonTableExpr& cte : with->ctes) all.push_back(&cte);
    if (!with->recursive) inline_cte_chain(db, *def->select, std::move(all), name.name);
  }
  auto view = std::make_shared<ViewEntry>();
  view->schema_name = home;
  view->name = name.name;
  view->columns = columns;
  view->definition = std::move(def);
  return view;
}

}  // namespace

// A write naming a maintained table (a materialized view) writes through its body like a
// view's (materialized-views.md, "Write boundary"): the view its derivation describes,
// with the table's column names. A body reading another maintained table is refused: the
// write would land on that table's derived rows.
std::shared_ptr<const ViewEntry> maintained_view_entry(const TableEntry& table) {
  const Derivation& d = *table.schema.derivation;
  auto def = std::make_shared<ast::CreateViewStmt>();
  def->view = {table.schema.schema_name, table.schema.name, {}};
  for (const ColumnSchema& c : table.schema.columns) def->columns.push_back(c.name);
  def->select = clone(*d.body);
  auto view = std::make_shared<ViewEntry>();
  view->schema_name = table.schema.schema_name;
  view->name = table.schema.name;
  view->columns = def->columns;
  view->definition = std::move(def);
  return view;
}

namespace {

std::shared_ptr<const ViewEntry> maintained_view(PlanningContext& db, const TableEntry& table, const SourceSite& site) {
  for (const auto& [schema, name] : table.schema.derivation->sources)
    if (auto src = db.catalog().find(schema, name); src && src->schema.derivation)
      throw Error(StatusCode::kError, "cannot write through materialized view '" + table.schema.name +
                                          "': its body reads a materialized view ('" + src->schema.name + "')", site);
  return maintained_view_entry(table);
}

}  // namespace

namespace {

// A write through a logical table carries the lens's logical constraints down: each
// lowered statement on a basis relation gets the checks that relation's writes evaluate
// (catalog/lens.h LensCheck; docs/lenses.md "Constraint attachment"). A logical foreign
// key's checks only while pragma foreign_keys is on (`fks_on`).
void attach_lens_checks(const LensSlot& slot, LoweredWrite& out, bool fks_on) {
  for (ast::StatementPtr& st : out.statements) {
    ast::DmlClauses* clauses = nullptr;
    const ast::QualifiedName* target = nullptr;
    switch (st->kind) {
      case ast::StmtKind::kInsert: {
        auto& s = static_cast<ast::InsertStmt&>(*st);
        clauses = &s;
        target = &s.table;
        break;
      }
      case ast::StmtKind::kUpdate: {
        auto& s = static_cast<ast::UpdateStmt&>(*st);
        clauses = &s;
        target = &s.table;
        break;
      }
      case ast::StmtKind::kDelete: {
        auto& s = static_cast<ast::DeleteStmt&>(*st);
        clauses = &s;
        target = &s.table;
        break;
      }
      default: continue;
    }
    const std::string name = to_lower(target->name);
    const std::string schema = target->schema.empty() ? slot.basis_schema : to_lower(target->schema);
    for (const LensCheck& ck : slot.checks) {
      if (ck.table != schema + "." + name || (ck.foreign_key && !fks_on)) continue;
      clauses->attached_checks.push_back({ck.name, ck.text, ck.expr, ck.on_insert, ck.on_update, ck.on_delete});
    }
  }
}

// A logical key the lens enforces by a count at COMMIT can only abort (spec/lens.md
// "Enforcement by constraint class", set-level): an INSERT asking to resolve a conflict on
// it — OR IGNORE, OR REPLACE, REPLACE INTO, or an upsert whose target is that key or is
// absent — is refused when planned rather than aborting at COMMIT. (UPDATE OR … is refused
// for every table.)
void refuse_commit_time_resolution(const LensSlot& slot, const ast::Statement& stmt) {
  if (stmt.kind != ast::StmtKind::kInsert) return;
  const auto& s = static_cast<const ast::InsertStmt&>(stmt);
  std::string how;
  if (s.or_action == ast::ConflictClause::kIgnore) how = "INSERT OR IGNORE";
  else if (s.or_action == ast::ConflictClause::kReplace) how = "INSERT OR REPLACE";
  else if (s.replace) how = "REPLACE";
  for (const LensCheck& ck : slot.checks) {
    if (!ck.commit_time_key) continue;
    std::string clause = how;
    for (const ast::UpsertClause& up : s.upserts) {
      if (!clause.empty()) break;
      bool on_key = up.target.empty();
      if (!on_key && up.target.size() == ck.key_columns.size()) {
        on_key = true;
        for (const ast::IndexedColumn& t : up.target)
          on_key = on_key && std::any_of(ck.key_columns.begin(), ck.key_columns.end(),
                                         [&](const std::string& k) { return iequals(k, t.name); });
      }
      if (!on_key) continue;
      clause = "ON CONFLICT";
      std::string target;
      for (const ast::IndexedColumn& t : up.target) target += (target.empty() ? "" : ", ") + t.name;
      if (!target.empty()) clause += " (" + target + ")";
    }
    if (clause.empty()) continue;
    throw Error(StatusCode::kError,
                "cannot write through logical table '" + slot.logical_schema + "." + slot.table + "': " + clause +
                    " cannot be honored: " + ck.text +
                    " is enforced by a commit-time scan, which can only abort (add a basis UNIQUE over its columns to "
                    "resolve conflicts at row time)");
  }
}

// The logical primary key of a lens slot's table, as declared ("" list: none).
std::vector<std::string> logical_key(const LensSlot& slot) {
  std::vector<std::string> pk;
  if (!slot.spec) return pk;
  for (const auto& cd : slot.spec->columns)
    for (const auto& cc : cd.constraints)
      if (cc.kind == ast::ColumnConstraint::Kind::kPrimaryKey) pk.push_back(cd.name);
  for (const auto& tc : slot.spec->constraints)
    if (tc.kind == ast::TableConstraint::Kind::kPrimaryKey)
      for (const auto& ic : tc.columns) pk.push_back(ic.name);
  return pk;
}

// True when the logical table declares `primary key ()`: a singleton of 0 or 1 row, whose
// every row conflicts with every other (its empty key matches any logical row).
bool singleton(const LensSlot& slot) {
  if (!slot.spec) return false;
  for (const auto& tc : slot.spec->constraints)
    if (tc.kind == ast::TableConstraint::Kind::kPrimaryKey && tc.columns.empty()) return true;
  return false;
}

ast::StatementPtr parse_one(const std::string& sql) {
  std::vector<ast::StatementPtr> v = Parser::parse(sql);
  return std::move(v.front());
}

// What a write through a logical parent does before its own statements (catalog/lens.h
// LensCascade; spec/lens.md "Parent-side CASCADE / SET NULL / SET DEFAULT"):
//  1. captures, once, the parent rows the statement addresses — their key columns and,
//     for an UPDATE, the new values of the referenced ones — before anything is written
//     (a self-referencing ON DELETE CASCADE captures the whole subtree);
//  2. writes the logical children from those captured keys — statements against the
//     child's logical table, so its own lens constraints and cascades apply;
//  3. restricts the statement itself to the captured keys, so the child writes cannot
//     change which parent rows it reaches.
// Generated statements hold no user expression: the user's WHERE and SET terms are
// cloned into the capture only (their parameters keep their positions).
struct LensPrologue {
  std::vector<LoweredWrite::Capture> captures;
  std::vector<ast::StatementPtr> statements;
  std::vector<LoweredWrite::PreCheck> checks;
  ast::StatementPtr replaced;  // the statement to lower instead (null: unchanged)
  // A self-referencing ON DELETE CASCADE: `replaced` deletes the rows the statement
  // addressed (its RETURNING rows), `descendants` the rest of their subtree, lowered
  // beside it (not through the logical table again); a join body, whose lowering is one
  // statement, deletes the whole subtree with `whole` instead.
  ast::StatementPtr descendants;
  ast::StatementPtr whole;
};

// The capture a lens prologue reads its parent rows from: column i of the addressed row
// as k<i> (its new value as n<i> for an UPDATE), the row's key as the first pk.size().
struct CaptureLayout {
  bool is_delete;
  bool update;
  std::string keys;  // the bound row set's name
  std::string eq;    // how key columns compare (" = ", or " is " for an all-columns key)
  std::vector<std::string> pk;
};

// One logical foreign key's child write (or RESTRICT pre-check), from the captured parent
// rows; `at[i]` is the capture column of c.parent_columns[i].
void child_write(const LensSlot& slot, const LensCascade& c, const std::vector<size_t>& at, const CaptureLayout& L,
                 LensPrologue& out) {
  using A = LensCascade::Action;
  auto k = [](size_t i) { return "k" + std::to_string(i); };
  auto nv = [](size_t i) { return "n" + std::to_string(i); };
  const A act = L.is_delete ? c.on_delete : c.on_update;
  const std::string child = quote_identifier(slot.logical_schema) + "." + quote_identifier(c.child);
  const std::string cref = quote_identifier(c.child);
  const size_t n = c.parent_columns.size();
  std::string changed;
  if (L.update) {
    for (size_t i = 0; i < n; ++i) changed += (i ? " and " : "") + std::string("_k.") + k(at[i]) + " is _k." + nv(at[i]);
    changed = "not (" + changed + ")";
  }
  std::string match;
  for (size_t i = 0; i < n; ++i)
    match += (i ? " and " : "") + std::string("_k.") + k(at[i]) + " = " + cref + "." + quote_identifier(c.child_columns[i]);
  const std::string refs = "exists (select 1 from " + L.keys + " as _k where " + match + (L.update ? " and " + changed : "") + ")";
  if (act == A::kRestrict) {
    // A self-reference: a child the statement deletes too does not hold the key back.
    std::string also;
    if (c.self && L.is_delete) {
      std::string mine_too;
      for (size_t j = 0; j < L.pk.size(); ++j)
        mine_too += (j ? " and " : "") + std::string("_s.") + k(j) + L.eq + cref + "." + quote_identifier(L.pk[j]);
      also = " and not exists (select 1 from " + L.keys + " as _s where " + mine_too + ")";
    }
    out.checks.push_back({parse_one("select 1 from " + child + " where " + refs + also + " limit 1"),
                          "FOREIGN KEY constraint failed: rows of " + c.child + " still reference " + slot.table + " (" +
                              (L.is_delete ? "delete" : "update") + ")"});
    return;
  }
  std::string sql;
  if (act == A::kCascade && L.is_delete) {
    sql = "delete from " + child + " where " + refs;
  } else {
    std::string sets;
    for (size_t i = 0; i < n; ++i) {
      std::string v = act == A::kSetNull      ? "null"
                      : act == A::kSetDefault ? (c.defaults[i].empty() ? "null" : c.defaults[i])
                                              : "(select _k." + nv(at[i]) + " from " + L.keys + " as _k where " + match + ")";
      sets += (i ? ", " : "") + quote_identifier(c.child_columns[i]) + " = " + v;
    }
    sql = "update " + child + " set " + sets + " where " + refs;
  }
  out.statements.push_back(parse_one(sql));
}

LensPrologue lens_prologue(const LensSlot& slot, const ast::Statement& stmt) {
  using A = LensCascade::Action;
  LensPrologue out;
  const bool is_delete = stmt.kind == ast::StmtKind::kDelete;
  if (!is_delete && stmt.kind != ast::StmtKind::kUpdate) return out;
  const ast::Expr* where = nullptr;
  std::string alias;
  const ast::UpdateStmt* upd = nullptr;
  const ast::WithClause* with = nullptr;
  if (is_delete) {
    auto& d = static_cast<const ast::DeleteStmt&>(stmt);
    if (d.target_query) return out;
    where = d.where.get();
    alias = d.alias;
    with = d.with.get();
  } else {
    upd = &static_cast<const ast::UpdateStmt&>(stmt);
    if (upd->target_query) return out;
    where = upd->where.get();
    alias = upd->alias;
    with = upd->with.get();
  }
  auto fail = [&](const std::string& why) {
    throw Error(StatusCode::kUnsupported, std::string(is_delete ? "DELETE" : "UPDATE") + " through logical table '" +
                                              slot.logical_schema + "." + slot.table + "': " + why);
  };
  // The value an UPDATE assigns each column (null entry: a row-value assignment).
  std::map<std::string, const ast::Expr*> assigned;
  if (upd)
    for (const ast::Assignment& as : upd->assignments)
      for (const std::string& c : as.columns) assigned[to_lower(c)] = as.columns.size() == 1 ? as.value.get() : nullptr;
  std::vector<const LensCascade*> relevant;
  for (const LensCascade& c : slot.cascades) {
    if ((is_delete ? c.on_delete : c.on_update) == A::kNone) continue;
    bool moves = is_delete;
    for (const std::string& pc : c.parent_columns) {
      auto it = assigned.find(to_lower(pc));
      if (it == assigned.end()) continue;
      if (!it->second) fail("a row-value assignment to a referenced key column is not supported yet");
      moves = true;
    }
    if (moves) relevant.push_back(&c);
  }
  if (relevant.empty()) return out;
  std::vector<std::string> pk = logical_key(slot);
  // No declared key: every column together addresses a row (compared NULL-safely).
  const bool all_columns = pk.empty();
  if (all_columns && slot.spec)
    for (const auto& cd : slot.spec->columns) pk.push_back(cd.name);
  if (pk.empty()) fail("the logical table has no columns to address its rows by");
  const std::string eq = all_columns ? " is " : " = ";
  // The captured columns: the key, then every referenced column.
  std::vector<std::string> cols;
  auto index_of = [&](const std::string& name) {
    for (size_t i = 0; i < cols.size(); ++i)
      if (iequals(cols[i], name)) return static_cast<int>(i);
    cols.push_back(name);
    return static_cast<int>(cols.size() - 1);
  };
  for (const std::string& k : pk) index_of(k);
  for (const LensCascade* c : relevant)
    for (const std::string& pc : c->parent_columns) index_of(pc);
  // Every column an UPDATE assigns one value: its new value is computed once, in the
  // capture, and the statement writes that value (not a second evaluation after the
  // child writes, which could read them).
  if (upd)
    for (const ast::Assignment& as : upd->assignments)
      if (as.columns.size() == 1) index_of(as.columns[0]);
  static std::atomic<uint64_t> counter{0};
  const std::string cap = "__lens_keys_" + std::to_string(++counter);
  const std::string parent = quote_identifier(slot.logical_schema) + "." + quote_identifier(slot.table);
  const std::string a = quote_identifier(alias.empty() ? slot.table : alias);
  auto k = [](size_t i) { return "k" + std::to_string(i); };
  auto nv = [](size_t i) { return "n" + std::to_string(i); };
  // 1. The capture: the addressed rows' columns (and new values), by the user's WHERE.
  {
    std::string sql = "select ";
    for (size_t i = 0; i < cols.size(); ++i) sql += (i ? ", " : "") + a + "." + quote_identifier(cols[i]) + " as " + k(i);
    if (upd)
      for (size_t i = 0; i < cols.size(); ++i) sql += ", " + a + "." + quote_identifier(cols[i]) + " as " + nv(i);
    sql += " from " + parent + " as " + a;
    ast::StatementPtr st = parse_one(sql);
    ast::SelectCore& core = static_cast<ast::SelectStmt&>(*st).select->core;
    // The statement's WITH is the capture's: its CTEs are what the WHERE and SET read.
    if (with) static_cast<ast::SelectStmt&>(*st).select->with = clone(*with);
    if (where) core.where = clone(*where);
    if (upd)
      for (size_t i = 0; i < cols.size(); ++i)
        if (auto it = assigned.find(to_lower(cols[i])); it != assigned.end()) core.columns[cols.size() + i].expr = clone(*it->second);
    out.captures.push_back({std::move(st), cap});
  }
  std::string keys = cap;
  // A self-referencing ON DELETE CASCADE: the statement reaches the whole subtree.
  const LensCascade* self_delete = nullptr;
  for (const LensCascade* c : relevant)
    if (is_delete && c->self && c->on_delete == A::kCascade) {
      if (self_delete) fail("two self-referencing ON DELETE CASCADE keys are not supported yet");
      self_delete = c;
    }
  if (self_delete) {
    const std::string ref = k(index_of(self_delete->parent_columns[0]));
    const std::string refcol = quote_identifier(self_delete->parent_columns[0]);
    const std::string fk = quote_identifier(self_delete->child_columns[0]);
    keys = cap + "_subtree";
    std::string sql = "with recursive __lens_sub(k) as (select " + ref + " from " + cap +
                      " union select _c." + refcol + " from " + parent + " as _c join __lens_sub on _c." + fk +
                      " = __lens_sub.k) select ";
    for (size_t i = 0; i < cols.size(); ++i) sql += (i ? ", " : "") + std::string("_r.") + quote_identifier(cols[i]) + " as " + k(i);
    sql += " from " + parent + " as _r where _r." + refcol + " in (select k from __lens_sub) or exists (select 1 from " +
           cap + " as _s where ";
    for (size_t j = 0; j < pk.size(); ++j)
      sql += (j ? " and " : "") + std::string("_s.") + k(j) + eq + "_r." + quote_identifier(pk[j]);
    sql += ")";
    out.captures.push_back({parse_one(sql), keys});
  }
  // 2. The child writes, from the captured keys.
  {
    std::vector<std::vector<size_t>> at;
    for (const LensCascade* c : relevant) {
      at.emplace_back();
      for (const std::string& pc : c->parent_columns) at.back().push_back(static_cast<size_t>(index_of(pc)));
    }
    CaptureLayout layout{is_delete, upd != nullptr, keys, eq, pk};
    for (size_t r = 0; r < relevant.size(); ++r)
      if (relevant[r] != self_delete) child_write(slot, *relevant[r], at[r], layout, out);  // the subtree: own rows
  }
  // 3. The statement itself reaches the captured rows only.
  std::string own;
  for (size_t j = 0; j < pk.size(); ++j) own += (j ? " and " : "") + std::string("_s.") + k(j) + eq + a + "." + quote_identifier(pk[j]);
  ast::ExprPtr mine = Parser::parse_expression("exists (select 1 from " + keys + " as _s where " + own + ")");
  out.replaced = clone(stmt);
  if (is_delete) {
    if (self_delete) {
      ast::ExprPtr roots = Parser::parse_expression("exists (select 1 from " + cap + " as _s where " + own + ")");
      out.whole = clone(stmt);
      static_cast<ast::DeleteStmt&>(*out.whole).where = clone(*mine);
      out.descendants = clone(stmt);
      auto& d = static_cast<ast::DeleteStmt&>(*out.descendants);
      d.where = ast::conjoin(std::move(mine), ast::logical_not(clone(*roots)));
      d.returning.clear();
      static_cast<ast::DeleteStmt&>(*out.replaced).where = std::move(roots);
    } else {
      static_cast<ast::DeleteStmt&>(*out.replaced).where = std::move(mine);
    }
  } else {
    auto& u = static_cast<ast::UpdateStmt&>(*out.replaced);
    u.where = std::move(mine);
    for (ast::Assignment& as : u.assignments) {
      if (as.columns.size() != 1) continue;
      const size_t i = static_cast<size_t>(index_of(as.columns[0]));
      as.value = Parser::parse_expression("(select _s." + nv(i) + " from " + keys + " as _s where " + own + ")");
    }
  }
  return out;
}

// Whether a write to `t` may skip a row instead of failing: a constraint declaring
// ON CONFLICT IGNORE or FAIL (an UPDATE has no statement-level OR clause to override it).
bool may_skip_rows(const TableSchema& t) {
  auto skips = [](const std::optional<qrs_conflict>& c) {
    return c && (*c == QRS_CONFLICT_IGNORE || *c == QRS_CONFLICT_FAIL);
  };
  if (skips(t.pk_conflict)) return true;
  for (const ColumnSchema& c : t.columns)
    if (skips(c.not_null_conflict)) return true;
  for (const CheckSchema& c : t.checks)
    if (skips(c.on_conflict)) return true;
  for (const IndexSchema& i : t.indexes)
    if (skips(i.on_conflict)) return true;
  return false;
}

}  // namespace

// The EAV part of a write through an advertised decomposition (spec/lens.md "The put
// fan-out"; docs/decompositions.md).
struct EavSplit {
  LoweredWrite::Capture capture;             // the rows the triples are written from
  std::vector<ast::StatementPtr> statements; // the triple writes
  bool nothing_else = false;                 // the statement wrote EAV attributes only
  ast::StatementPtr returning;               // an UPDATE's RETURNING, read after the writes
};

// `insert into <pivot> (entity, attribute, value) <source> on conflict (entity, attribute)
// do update set value = excluded.value`: the triple write of an EAV attribute.
std::unique_ptr<ast::InsertStmt> triple_upsert(const LensSlot::EavMember& m, std::unique_ptr<ast::Select> source) {
  auto ins = std::make_unique<ast::InsertStmt>();
  ins->table = {m.schema, m.table, {}};
  ins->columns = std::vector<std::string>{m.entity, m.attribute, m.value};
  ins->source = std::move(source);
  ast::UpsertClause up;
  up.target.push_back({m.entity, "", false});
  up.target.push_back({m.attribute, "", false});
  up.do_nothing = false;
  ast::Assignment set;
  set.columns.push_back(m.value);
  set.value = ast::column_ref("excluded", m.value);
  up.set.push_back(std::move(set));
  ins->upserts.push_back(std::move(up));
  return ins;
}

// Takes the EAV attributes out of `stmt` (an INSERT or UPDATE on the logical table `view`)
// and returns the statements that write their triples:
//  - UPDATE: `__vw_eav` = select <key>, <value>… from <logical table> where <pred>, before
//    anything changes; per attribute, a NULL value deletes the entity's triple and any
//    other upserts it: insert into <pivot> (e, a, v) select k, '<attr>', vN from __vw_eav
//    where vN is not null on conflict (e, a) do update set v = excluded.v;
//  - INSERT: `__vw_eav` = the source rows, once; the base insert reads its other columns
//    from there, then one triple per non-NULL attribute.
EavSplit split_eav_writes(const ViewEntry& view, const std::vector<LensSlot::EavMember>& eav, ast::Statement& stmt,
                          const SourceSite& site) {
  EavSplit out;
  const LensSlot& slot = *view.lens;
  const std::string what = "cannot write through logical table '" + slot.logical_schema + "." + slot.table + "': ";
  auto member_of = [&](const std::string& column) -> const LensSlot::EavMember* {
    for (const LensSlot::EavMember& m : eav)
      for (const std::string& c : m.columns)
        if (iequals(c, column)) return &m;
    return nullptr;
  };
  const std::vector<std::string> pk = logical_key(slot);
  auto refuse = [&](const std::string& why) {
    throw Error(StatusCode::kUnsupported, what + why, site);
  };
  const std::string cap = "__vw_eav";
  // The entity of a captured row: its logical key `k`, or, under a surrogate shared key,
  // the anchor's surrogate found by the anchor column backing the logical key —
  //   (select <surrogate> from <anchor> where <key backing> = __vw_eav.k)
  // (an INSERT's triples go after the anchor row, an UPDATE's before any base write).
  auto entity = [&](const LensSlot::EavMember& m) -> ExprPtr {
    if (!m.surrogate) return ast::column_ref(cap, "k");
    if (m.key_backing.empty())
      refuse("writing an EAV attribute under a surrogate shared key needs the logical key on the anchor '" +
             m.anchor_table + "'");
    std::vector<ast::ResultColumn> sk;
    sk.push_back(ast::result_column(ast::column_ref("__vw_anchor", m.anchor_key)));
    return ast::scalar_subquery(ast::select(
        std::move(sk), ast::table_source({m.anchor_schema, m.anchor_table, {}}, "__vw_anchor"),
        ast::binary(ast::BinaryOp::kEq, ast::column_ref("__vw_anchor", m.key_backing), ast::column_ref(cap, "k"))));
  };
  // The statements of one attribute, reading key column `k` and value column `val` of
  // the capture.
  auto triple_writes = [&](const LensSlot::EavMember& m, const std::string& attr, const std::string& val,
                           bool deletes) {
    if (deletes) {
      auto d = std::make_unique<ast::DeleteStmt>();
      d->table = {m.schema, m.table, {}};
      std::vector<ast::ResultColumn> k;
      k.push_back(ast::result_column(entity(m)));
      d->where = conjoin(ast::binary(ast::BinaryOp::kEq, ast::column_ref(m.table, m.attribute), ast::string_literal(attr)),
                         ast::in_subquery(ast::column_ref(m.table, m.entity),
                                          ast::select(std::move(k), ast::table_source({"", cap, {}}, ""),
                                                      ast::logical_not(ast::is_not_null(ast::column_ref(cap, val))))));
      out.statements.push_back(std::move(d));
    }
    std::vector<ast::ResultColumn> cols;
    cols.push_back(ast::result_column(entity(m)));
    cols.push_back(ast::result_column(ast::string_literal(attr)));
    cols.push_back(ast::result_column(ast::column_ref(cap, val)));
    out.statements.push_back(triple_upsert(
        m, ast::select(std::move(cols), ast::table_source({"", cap, {}}, ""), ast::is_not_null(ast::column_ref(cap, val)))));
  };
  if (stmt.kind == ast::StmtKind::kUpdate) {
    auto& s = static_cast<ast::UpdateStmt&>(stmt);
    std::vector<ast::Assignment> rest;
    std::vector<std::pair<const LensSlot::EavMember*, ast::Assignment>> attrs;
    for (auto& a : s.assignments) {
      const LensSlot::EavMember* m = a.columns.size() == 1 ? member_of(a.columns[0]) : nullptr;
      if (m) attrs.emplace_back(m, std::move(a));
      else rest.push_back(std::move(a));
    }
    if (attrs.empty()) {
      s.assignments = std::move(rest);
      return out;
    }
    if (pk.size() != 1) refuse("writing an EAV attribute needs a one-column logical primary key");
    const std::string alias = s.alias.empty() ? s.table.name : s.alias;
    if (!s.returning.empty()) {
      // The new image of the rows addressed, read after the writes:
      //   select <items> from <logical table> where <key> in (select k from __vw_eav)
      for (const ast::Assignment& a : s.assignments)
        for (const std::string& c : a.columns)
          if (iequals(c, pk[0])) refuse("RETURNING from an update that moves the logical key is not supported");
      std::vector<ast::ResultColumn> k;
      k.push_back(ast::result_column(ast::column_ref(cap, "k")));
      auto q = std::make_unique<ast::SelectStmt>();
      q->select = ast::select(std::move(s.returning), ast::table_source(s.table, alias),
                              ast::in_subquery(ast::column_ref(alias, pk[0]),
                                               ast::select(std::move(k), ast::table_source({"", cap, {}}, ""))));
      q->select->schema_path = s.schema_path;
      s.returning.clear();
      out.returning = std::move(q);
    }
    // A row a member's conflict skipped would still have its triples rewritten: refused.
    if (!rest.empty() && (s.or_action == ast::ConflictClause::kIgnore || s.or_action == ast::ConflictClause::kReplace))
      refuse("UPDATE OR IGNORE / OR REPLACE of EAV attributes together with other columns is not supported yet");
    std::vector<ast::ResultColumn> cols;
    cols.push_back(ast::result_column(ast::column_ref(alias, pk[0]), "k"));
    for (size_t i = 0; i < attrs.size(); ++i) cols.push_back(ast::result_column(clone(*attrs[i].second.value), "v" + std::to_string(i)));
    auto sel = std::make_unique<ast::SelectStmt>();
    sel->select = ast::select(std::move(cols), ast::table_source(s.table, alias), s.where ? clone(*s.where) : nullptr);
    sel->select->schema_path = s.schema_path;
    if (s.with) sel->select->with = clone(*s.with);
    out.capture = {std::move(sel), cap};
    for (size_t i = 0; i < attrs.size(); ++i) {
      const std::string attr = attrs[i].second.columns[0];
      std::string declared = attr;
      for (const std::string& c : attrs[i].first->columns)
        if (iequals(c, attr)) declared = c;  // the attribute literal as the column is declared
      triple_writes(*attrs[i].first, declared, "v" + std::to_string(i), true);
    }
    s.assignments = std::move(rest);
    out.nothing_else = s.assignments.empty();
    return out;
  }
  if (stmt.kind != ast::StmtKind::kInsert) return out;
  auto& s = static_cast<ast::InsertStmt&>(stmt);
  std::vector<std::string> cols = s.columns;
  if (cols.empty() && !s.default_values) cols = view.columns;
  bool any = false;
  for (const std::string& c : cols) any = any || member_of(c);
  if (!any) return out;
  if (pk.size() != 1) refuse("writing an EAV attribute needs a one-column logical primary key");
  if (!s.returning.empty() || !s.upserts.empty())
    refuse("RETURNING or ON CONFLICT on an insert of EAV attributes is not supported yet");
  // A skipped or replaced anchor row would still get the triples: refused.
  if (s.or_action == ast::ConflictClause::kIgnore || s.or_action == ast::ConflictClause::kReplace)
    refuse("INSERT OR IGNORE / OR REPLACE of EAV attributes is not supported yet");
  int key_at = -1;
  for (size_t i = 0; i < cols.size(); ++i)
    if (iequals(cols[i], pk[0])) key_at = static_cast<int>(i);
  if (key_at < 0) refuse("an insert of EAV attributes must supply the logical key '" + pk[0] + "'");
  // __vw_eav = select * from (<source>) as __vw_src(c0, c1, …), plus k = the key column.
  std::vector<std::string> names;
  for (size_t i = 0; i < cols.size(); ++i) names.push_back("c" + std::to_string(i));
  std::vector<ast::ResultColumn> all;
  all.push_back(ast::star());
  all.push_back(ast::result_column(ast::column_ref("__vw_src", "c" + std::to_string(key_at)), "k"));
  auto path = s.source->schema_path;
  auto sel = std::make_unique<ast::SelectStmt>();
  sel->select = ast::select(std::move(all), ast::subquery_source(std::move(s.source), "__vw_src", names));
  sel->select->schema_path = s.schema_path.empty() ? path : s.schema_path;
  sel->select->with = std::move(s.with);
  out.capture = {std::move(sel), cap};
  // The base insert: the other columns, read back from the capture.
  std::vector<std::string> kept;
  std::vector<ast::ResultColumn> values;
  for (size_t i = 0; i < cols.size(); ++i) {
    if (const LensSlot::EavMember* m = member_of(cols[i])) {
      std::string declared = cols[i];
      for (const std::string& c : m->columns)
        if (iequals(c, cols[i])) declared = c;
      triple_writes(*m, declared, "c" + std::to_string(i), false);
      continue;
    }
    kept.push_back(cols[i]);
    values.push_back(ast::result_column(ast::column_ref(cap, "c" + std::to_string(i))));
  }
  s.columns = std::move(kept);
  s.source = ast::select(std::move(values), ast::table_source({"", cap, {}}, ""));
  return out;
}

// An advertised decomposition's UPDATE that assigns only EAV attributes, each a value
// reading no column, under a WHERE that reads only the anchor (spec/lens.md "The put
// fan-out", the constant shape): each attribute's triples are written straight off the
// anchor, no logical row captured —
//   delete from <pivot> where <attr> = '<a>' and <entity> in (select <key> from <anchor> where <pred>) and <v> is null
//   insert into <pivot> (e, a, v) select <key>, '<a>', <v> from <anchor> where <pred> and <v> is not null
//     on conflict (e, a) do update set v = excluded.v
// (a literal value keeps only the statement it needs). False when the statement has
// another shape (the capture path then lowers it).
bool lower_eav_constant_update(const ast::UpdateStmt& s, const ViewShape& v, LoweredWrite& out) {
  if (!v.decomposition || v.eav.empty() || !s.returning.empty() || s.with || v.where ||
      s.or_action != ast::ConflictClause::kNone || s.assignments.empty())
    return false;
  const std::shared_ptr<TableEntry>& anchor = v.join() ? v.sides[0].table : v.table;
  const std::string& aq = v.join() ? v.sides[0].qualifier : v.qualifier;
  if (!anchor) return false;
  std::vector<std::pair<const LensSlot::EavMember*, std::pair<std::string, ExprPtr>>> attrs;
  for (const ast::Assignment& a : s.assignments) {
    if (a.columns.size() != 1) return false;
    const LensSlot::EavMember* m = nullptr;
    std::string declared;
    for (const LensSlot::EavMember& e : v.eav)
      for (const std::string& c : e.columns)
        if (iequals(c, a.columns[0])) m = &e, declared = c;
    if (!m) return false;
    ExprPtr value = clone(*a.value);
    if (!reads_only(value, "") || calls_volatile(v, *value)) return false;
    attrs.emplace_back(m, std::make_pair(declared, std::move(value)));
  }
  Substituter sub(v, s.alias.empty() ? s.table.name : s.alias);
  ExprPtr where = s.where ? clone(*s.where) : nullptr;
  sub(where);
  if (where && !reads_only(where, aq)) return false;
  const ast::QualifiedName anchor_name{anchor->schema.schema_name, anchor->schema.name, {}};
  auto is_null_literal = [](const ast::Expr& e) {
    return e.kind == ast::ExprKind::kLiteral && static_cast<const ast::Literal&>(e).literal_kind == ast::LiteralKind::kNull;
  };
  for (auto& [m, av] : attrs) {
    auto& [attr, value] = av;
    const bool literal = value->kind == ast::ExprKind::kLiteral;
    const bool null = is_null_literal(*value);
    auto rows = [&](std::vector<ast::ResultColumn> cols, ExprPtr extra) {
      return ast::select(std::move(cols), ast::table_source(anchor_name, aq),
                         ast::conjoin(where ? clone(*where) : nullptr, std::move(extra)));
    };
    if (!literal || null) {
      std::vector<ast::ResultColumn> key;
      key.push_back(ast::result_column(ast::column_ref(aq, m->anchor_key)));
      auto d = std::make_unique<ast::DeleteStmt>();
      d->table = {m->schema, m->table, {}};
      d->where = ast::conjoin(
          ast::binary(ast::BinaryOp::kEq, ast::column_ref(m->table, m->attribute), ast::string_literal(attr)),
          ast::in_subquery(ast::column_ref(m->table, m->entity), rows(std::move(key), nullptr)));
      if (!null) d->where = ast::conjoin(ast::logical_not(ast::is_not_null(clone(*value))), std::move(d->where));
      d->context = clone(s.context);
      out.statements.push_back(std::move(d));
    }
    if (null) continue;
    std::vector<ast::ResultColumn> cols;
    cols.push_back(ast::result_column(ast::column_ref(aq, m->anchor_key)));
    cols.push_back(ast::result_column(ast::string_literal(attr)));
    cols.push_back(ast::result_column(clone(*value)));
    auto ins = triple_upsert(*m, rows(std::move(cols), literal ? nullptr : ast::is_not_null(clone(*value))));
    ins->context = clone(s.context);
    out.statements.push_back(std::move(ins));
  }
  return true;
}

// An UPDATE through an advertised decomposition may not assign a shared-key column (spec/
// lens.md "Current Limitations": a key write is an identity change, not a value write):
// moving the anchor's key alone would leave every member row, and every triple, behind.
void refuse_identity_write(const ast::UpdateStmt& s, const ViewShape& v, const LensSlot& slot) {
  for (const ast::Assignment& a : s.assignments)
    for (const std::string& name : a.columns) {
      const ViewColumn* c = v.find(name);
      if (!c || c->base.empty()) continue;
      const TableSchema& ts = v.join() ? v.sides[c->side].table->schema : v.table->schema;
      // A member with no declared key (a singleton's, stitched on the empty key) has no
      // identity column: its implicit whole-row key is not a shared key.
      if (!ts.primary_key_declared) continue;
      for (const KeyColumn& k : ts.primary_key)
        if (iequals(ts.columns[k.column].name, c->base))
          throw Error(StatusCode::kUnsupported,
                      "cannot write through logical table '" + slot.logical_schema + "." + slot.table + "': column '" +
                          c->name + "' is the decomposition's shared key ('" + ts.name + "." + c->base +
                          "'): an identity change is not supported (delete the row and insert it under the new key)",
                      s.table.site);
    }
}

// An INSERT … ON CONFLICT / RETURNING through an advertised decomposition (spec/lens.md
// "The put fan-out": on conflict composes across the member ops). The logical statement
// is re-expressed as plain writes on the logical table itself, each lowered again:
//   __vw_ups = select * from (<source>) as __vw_src(c0, c1, …)        (once)
//   __vw_new = the rows of __vw_ups whose logical key no logical row has
//   __vw_upd = with DO UPDATE: the logical rows a source row conflicts with (and the
//              arm's WHERE admits), keyed by their logical key
//   update <table> set <arm, excluded.c → the source row's value> where <key> in __vw_upd
//   insert into <table> (<cols>) select … from __vw_ups where <key> in __vw_new
//   RETURNING: the logical rows keyed in __vw_new ∪ __vw_upd, read after the writes.
// The conflict target is the logical primary key (or none); the key must be supplied.
void lower_decomposition_insert(const ast::InsertStmt& s, const LensSlot& slot, const std::vector<std::string>& path,
                                LoweredWrite& out) {
  const std::string what = "cannot write through logical table '" + slot.logical_schema + "." + slot.table + "': ";
  auto refuse = [&](const std::string& why) { throw Error(StatusCode::kUnsupported, what + why, s.table.site); };
  const std::vector<std::string> pk = logical_key(slot);
  // A singleton's empty key is matched by any logical row: the key matches below
  // conjoin nothing.
  if (pk.empty() && !singleton(slot))
    refuse("INSERT OR IGNORE / OR REPLACE, ON CONFLICT or RETURNING needs a logical primary key");
  if (s.default_values || !s.source) refuse("INSERT OR IGNORE / OR REPLACE, ON CONFLICT or RETURNING must supply the logical key");
  // INSERT OR IGNORE skips a row whose logical key is taken, whole (DO NOTHING); INSERT
  // OR REPLACE deletes the logical row first, every member of it (a member row the new
  // row does not supply must not survive).
  const bool replace = s.replace || s.or_action == ast::ConflictClause::kReplace;
  const bool ignore = s.or_action == ast::ConflictClause::kIgnore;
  if ((s.or_action != ast::ConflictClause::kNone || s.replace) && !s.upserts.empty())
    refuse("INSERT OR … together with ON CONFLICT is not supported");
  if (s.or_action != ast::ConflictClause::kNone && !replace && !ignore)
    refuse("INSERT OR ABORT / FAIL / ROLLBACK together with RETURNING is not supported");
  if (s.upserts.size() > 1) refuse("more than one ON CONFLICT clause is not supported");
  std::vector<std::string> cols = s.columns;
  if (cols.empty())
    for (const LensColumn& c : slot.columns) cols.push_back(c.name);
  std::vector<std::string> key_col;  // per logical key column: its capture column
  for (const std::string& k : pk) {
    std::string found;
    for (size_t i = 0; i < cols.size(); ++i)
      if (iequals(cols[i], k)) found = "c" + std::to_string(i);
    if (found.empty()) refuse("INSERT OR IGNORE / OR REPLACE, ON CONFLICT or RETURNING must supply the logical key '" + k + "'");
    key_col.push_back(found);
  }
  ast::UpsertClause skip;  // OR IGNORE: DO NOTHING on the logical key
  const ast::UpsertClause* up = s.upserts.empty() ? (ignore ? &skip : nullptr) : &s.upserts[0];
  if (up) {
    if (up->target_where) refuse("a partial ON CONFLICT target is not supported");
    bool is_key = up->target.empty() || up->target.size() == pk.size();
    for (const auto& t : up->target) {
      bool in = false;
      for (const std::string& k : pk) in = in || iequals(t.name, k);
      is_key = is_key && in;
    }
    if (!is_key) refuse("the ON CONFLICT target must be the logical primary key (" + join(pk, ", ") + ")");
    for (const ast::Assignment& a : up->set)
      for (const std::string& c : a.columns)
        for (const std::string& k : pk)
          if (iequals(c, k)) refuse("ON CONFLICT DO UPDATE may not assign the logical key '" + k + "'");
  }
  const std::string ups = "__vw_ups", fresh = "__vw_new", upd = "__vw_upd";
  const std::string alias = s.alias.empty() ? s.table.name : s.alias;
  // `<q>.<key> = <r>.<capture key>` for every key column.
  auto key_match = [&](const std::string& q, const std::string& r, bool capture_side) {
    ExprPtr on;
    for (size_t j = 0; j < pk.size(); ++j)
      on = conjoin(std::move(on), binary(ast::BinaryOp::kEq, ast::column_ref(q, pk[j]),
                                         ast::column_ref(r, capture_side ? key_col[j] : pk[j])));
    return on;
  };
  auto one = [] {
    std::vector<ast::ResultColumn> c;
    c.push_back(ast::result_column(ast::integer_literal(1)));
    return c;
  };
  auto select_from = [&](const std::string& name, const std::string& as, ExprPtr where,
                         std::vector<ast::ResultColumn> cols_out) {
    auto q = ast::select(std::move(cols_out), ast::table_source({"", name, {}}, as), std::move(where));
    q->schema_path = path;
    return q;
  };
  auto logical = [&](const std::string& as, ExprPtr where, std::vector<ast::ResultColumn> cols_out) {
    auto q = ast::select(std::move(cols_out), ast::table_source(s.table, as), std::move(where));
    q->schema_path = path;
    return q;
  };
  auto capture = [&](std::unique_ptr<ast::Select> q, const std::string& name) {
    auto st = std::make_unique<ast::SelectStmt>();
    st->select = std::move(q);
    out.pre_captures.push_back({std::move(st), name});
  };
  // __vw_ups: the source, once.
  {
    std::vector<std::string> names;
    for (size_t i = 0; i < cols.size(); ++i) names.push_back("c" + std::to_string(i));
    std::vector<ast::ResultColumn> all;
    all.push_back(ast::star());
    // __vw_n: the source row's position (a key the source repeats is inserted once, from
    // its first row, when the conflict arm does nothing).
    auto n = std::make_unique<ast::FunctionCall>();
    n->name = "row_number";
    n->over = std::make_shared<ast::WindowSpec>();
    // Ordered by a constant: the window's sort is stable, so the numbering is the source's
    // own order (row_number() needs an ORDER BY).
    n->over->order_by.push_back({ast::integer_literal(0)});
    all.push_back(ast::result_column(std::move(n), "__vw_n"));
    auto q = ast::select(std::move(all), ast::subquery_source(clone(*s.source), "__vw_src", names));
    q->schema_path = s.schema_path.empty() ? s.source->schema_path : s.schema_path;
    if (s.with) q->with = clone(*s.with);
    capture(std::move(q), ups);
  }
  // __vw_new: the source rows no logical row conflicts with (read by the conflict arms'
  // insert and by RETURNING; a REPLACE deletes first and returns every source row).
  if (up || (!s.returning.empty() && !replace)) {
    std::vector<ast::ResultColumn> k;
    for (const std::string& c : key_col) k.push_back(ast::result_column(ast::column_ref(ups, c), c));
    capture(select_from(ups, ups, ast::logical_not(ast::exists(logical("__vw_old", key_match("__vw_old", ups, true), one()))),
                        std::move(k)),
            fresh);
  }
  // excluded.<c> → the conflicting source row's value of <c>.
  auto excluded = [&](ExprPtr& e) {
    walk(e, [&](ExprPtr& x, int) {
      if (x->kind != ast::ExprKind::kColumn) return false;
      auto& c = static_cast<ast::ColumnRef&>(*x);
      if (!iequals(c.table, "excluded")) return false;
      int at = -1;
      for (size_t i = 0; i < cols.size(); ++i)
        if (iequals(cols[i], c.column)) at = static_cast<int>(i);
      bool known = at >= 0;
      for (const LensColumn& lc : slot.columns) known = known || iequals(lc.name, c.column);
      if (!known) throw Error(StatusCode::kError, "no such column: excluded." + c.column, c.site);
      if (at < 0) {
        x = ast::null_literal();  // a column the insert leaves out: its proposed value is NULL
        return true;
      }
      std::vector<ast::ResultColumn> v;
      v.push_back(ast::result_column(ast::column_ref(ups, "c" + std::to_string(at))));
      x = ast::scalar_subquery(select_from(ups, ups, key_match(alias, ups, true), std::move(v)));
      return true;
    });
  };
  if (up && !up->do_nothing) {
    // One source row per logical key: a second one would have to update the first (row by
    // row, SQLite applies it so); refused by name rather than by its scalar subquery.
    {
      auto q = select_from(ups, ups, nullptr, one());
      for (const std::string& c : key_col) q->core.group_by.push_back(ast::column_ref(ups, c));
      auto count = std::make_unique<ast::FunctionCall>();
      count->name = "count";
      count->star = true;
      q->core.having = binary(ast::BinaryOp::kGt, std::move(count), ast::integer_literal(1));
      auto st = std::make_unique<ast::SelectStmt>();
      st->select = std::move(q);
      out.pre_checks.push_back({std::move(st), what + "two rows of the INSERT's source have one logical key (" +
                                                   join(pk, ", ") + "); ON CONFLICT DO UPDATE through a "
                                                   "decomposition takes each key once"});
    }
    // __vw_upd: the logical rows the arm updates, before anything changes.
    std::vector<ast::ResultColumn> k;
    for (const std::string& c : pk) k.push_back(ast::result_column(ast::column_ref(alias, c), c));
    ExprPtr where = ast::exists(select_from(ups, ups, key_match(alias, ups, true), one()));
    if (up->where) {
      ExprPtr w = clone(*up->where);
      excluded(w);
      where = conjoin(std::move(where), std::move(w));
    }
    capture(logical(alias, std::move(where), std::move(k)), upd);
    auto u = std::make_unique<ast::UpdateStmt>();
    u->table = s.table;
    u->alias = s.alias;
    u->schema_path = path;
    for (const ast::Assignment& a : up->set) {
      ast::Assignment c;
      c.columns = a.columns;
      c.value = clone(*a.value);
      excluded(c.value);
      u->assignments.push_back(std::move(c));
    }
    u->where = ast::exists(select_from(upd, upd, key_match(alias, upd, false), one()));
    u->context = clone(s.context);
    out.statements.push_back(std::move(u));
  }
  if (replace) {
    // delete from <table> where exists (select 1 from __vw_ups where <key match>)
    auto d = std::make_unique<ast::DeleteStmt>();
    d->table = s.table;
    d->alias = s.alias;
    d->schema_path = path;
    d->where = ast::exists(select_from(ups, ups, key_match(alias, ups, true), one()));
    d->context = clone(s.context);
    out.statements.push_back(std::move(d));
  }
  // The insert of the rows no logical row had.
  {
    auto ins = std::make_unique<ast::InsertStmt>();
    ins->table = s.table;
    ins->alias = s.alias;
    ins->columns = cols;
    ins->schema_path = path;
    std::vector<ast::ResultColumn> v;
    for (size_t i = 0; i < cols.size(); ++i) v.push_back(ast::result_column(ast::column_ref(ups, "c" + std::to_string(i))));
    ExprPtr is_new;
    for (size_t j = 0; j < key_col.size(); ++j)
      is_new = conjoin(std::move(is_new), binary(ast::BinaryOp::kEq, ast::column_ref(fresh, key_col[j]),
                                                 ast::column_ref(ups, key_col[j])));
    ExprPtr where = up ? ast::exists(select_from(fresh, fresh, std::move(is_new), one())) : nullptr;
    if (up && up->do_nothing) {
      // DO NOTHING / OR IGNORE: a later source row with a key an earlier one inserts
      // conflicts with that row and is skipped, as it would be row by row.
      ExprPtr earlier = binary(ast::BinaryOp::kLt, ast::column_ref("__vw_dup", "__vw_n"), ast::column_ref(ups, "__vw_n"));
      for (const std::string& c : key_col)
        earlier = conjoin(std::move(earlier),
                          binary(ast::BinaryOp::kEq, ast::column_ref("__vw_dup", c), ast::column_ref(ups, c)));
      where = conjoin(std::move(where), ast::logical_not(ast::exists(select_from(ups, "__vw_dup", std::move(earlier), one()))));
    }
    ins->source = select_from(ups, ups, std::move(where), std::move(v));
    ins->context = clone(s.context);
    out.statements.push_back(std::move(ins));
  }
  if (!s.returning.empty()) {
    // The new image of every row the statement inserted or updated.
    ExprPtr keyed;
    for (const std::string& set : {fresh, upd, ups}) {
      if (set == upd && (!up || up->do_nothing)) continue;
      if ((set == ups) != replace) continue;  // REPLACE: every source row's key
      ExprPtr on;
      for (size_t j = 0; j < pk.size(); ++j)
        on = conjoin(std::move(on), binary(ast::BinaryOp::kEq, ast::column_ref(alias, pk[j]),
                                           ast::column_ref(set, set == upd ? pk[j] : key_col[j])));
      keyed = ast::disjoin(std::move(keyed), ast::exists(select_from(set, set, std::move(on), one())));
    }
    std::vector<ast::ResultColumn> items;
    for (const ast::ResultColumn& rc : s.returning) items.push_back(clone(rc));
    auto q = std::make_unique<ast::SelectStmt>();
    q->select = logical(alias, std::move(keyed), std::move(items));
    out.returning_query = std::move(q);
  }
}

// A single-source body's own WITH blocks ride its lowered statement, ahead of the
// statement's own: the fragments the lowering copies out of the body (its WHERE, a
// column's term, an authored put) read them (view-updateability.md, "Schema resolution
// during write-through"). A block named like one of the statement's own is refused.
void carry_body_with(ast::Statement& stmt, const ast::WithClause& body, const ViewShape& v) {
  std::unique_ptr<ast::WithClause>* with = nullptr;
  switch (stmt.kind) {
    case ast::StmtKind::kInsert: with = &static_cast<ast::InsertStmt&>(stmt).with; break;
    case ast::StmtKind::kUpdate: with = &static_cast<ast::UpdateStmt&>(stmt).with; break;
    case ast::StmtKind::kDelete: with = &static_cast<ast::DeleteStmt&>(stmt).with; break;
    default: return;
  }
  if (!*with) *with = std::make_unique<ast::WithClause>();
  for (const ast::CommonTableExpr& own : (*with)->ctes)
    for (const ast::CommonTableExpr& block : body.ctes)
      if (iequals(own.name, block.name))
        v.refuse("the body's WITH block '" + block.name + "' has the name of a CTE of the writing statement");
  std::unique_ptr<ast::WithClause> carried = clone(body);
  (*with)->ctes.insert((*with)->ctes.begin(), std::make_move_iterator(carried->ctes.begin()),
                       std::make_move_iterator(carried->ctes.end()));
}

// A logical table's column DEFAULTs: an INSERT through the lens that leaves such a column
// out writes its default, evaluated per row, as if it had supplied it (the produced
// logical row reads an unsupplied column as its declared logical default, else NULL), so
// the value reaches whichever member stores the column — an optional member's row and
// an EAV triple included. A basis column's own DEFAULT fills only what the logical
// declaration leaves open. A default reading the row (`new.<c>`) reads the supplied value
// (NULL when <c> is not supplied).
void supply_logical_defaults(ast::InsertStmt& s, const LensSlot& slot) {
  if (!slot.spec || (s.columns.empty() && !s.default_values && s.source)) return;
  std::vector<std::string> names;
  std::vector<ExprPtr> values;
  for (const ast::ColumnDef& c : slot.spec->columns) {
    if (std::any_of(s.columns.begin(), s.columns.end(), [&](const std::string& n) { return iequals(n, c.name); }))
      continue;
    // A computed (read-only) column has nowhere to write its default (an EAV attribute,
    // read through a subquery, is written as its triple).
    bool eav = false;
    for (const LensSlot::EavMember& m : slot.eav)
      for (const std::string& a : m.columns) eav = eav || iequals(a, c.name);
    if (!eav && std::any_of(slot.columns.begin(), slot.columns.end(), [&](const LensColumn& lc) {
          return iequals(lc.name, c.name) && lc.inverse == LensColumn::Inverse::kNone;
        }))
      continue;
    for (const ast::ColumnConstraint& k : c.constraints)
      if (k.kind == ast::ColumnConstraint::Kind::kDefault && k.expr) {
        names.push_back(c.name);
        values.push_back(clone(*k.expr));
      }
  }
  if (names.empty()) return;
  // `value` with each `new.<c>` (or bare <c>, at its own level) replaced by `cell(i)`, i the
  // supplied column <c>'s position, or NULL; `mutation_ordinal()` (the row's 1-based
  // ordinal in the statement, valid only in a column default) by `ordinal()`.
  auto over_row = [&](const ast::Expr& value, const std::function<ExprPtr(size_t)>& cell,
                      const std::function<ExprPtr()>& ordinal) {
    ExprPtr out = clone(value);
    walk(out, [&](ExprPtr& x, int depth) {
      if (x->kind == ast::ExprKind::kFunction) {
        auto& f = static_cast<const ast::FunctionCall&>(*x);
        if (!iequals(f.name, "mutation_ordinal") || !f.args.empty() || f.over) return false;
        x = ordinal();
        return true;
      }
      if (x->kind != ast::ExprKind::kColumn) return false;
      auto& r = static_cast<const ast::ColumnRef&>(*x);
      if (!iequals(r.table, "new") && !(r.table.empty() && depth == 0)) return false;
      bool logical = false;
      for (const ast::ColumnDef& c : slot.spec->columns) logical = logical || iequals(c.name, r.column);
      if (!logical) return false;
      for (size_t i = 0; i < s.columns.size(); ++i)
        if (iequals(s.columns[i], r.column)) {
          x = cell(i);
          return true;
        }
      x = ast::null_literal();
      return true;
    });
    return out;
  };
  if (s.default_values || !s.source) {
    s.source = std::make_unique<ast::Select>();
    s.source->core.values.emplace_back();
    for (const ExprPtr& d : values)
      s.source->core.values[0].push_back(
          over_row(*d, [](size_t) { return ast::null_literal(); }, [] { return ast::integer_literal(1); }));
    s.default_values = false;
  } else if (s.source->compounds.empty() && !s.source->core.values.empty() && !s.source->with &&
             s.source->order_by.empty() && !s.source->limit && !s.source->offset && !s.source->dml) {
    int64_t ordinal = 0;
    for (auto& row : s.source->core.values) {
      const size_t width = row.size();
      ++ordinal;
      for (const ExprPtr& d : values)
        row.push_back(over_row(
            *d, [&](size_t i) { return i < width ? clone(*row[i]) : ast::null_literal(); },
            [&] { return ast::integer_literal(ordinal); }));
    }
  } else {
    // select *, <defaults over __vw_src.c<i>> from (<source>) as __vw_src(c0, c1, …)
    std::vector<std::string> path = s.source->schema_path;
    std::vector<std::string> cols;
    for (size_t i = 0; i < s.columns.size(); ++i) cols.push_back("c" + std::to_string(i));
    std::vector<ast::ResultColumn> all;
    all.push_back(ast::star());
    for (const ExprPtr& d : values)
      all.push_back(ast::result_column(over_row(
          *d, [](size_t i) { return ast::column_ref("__vw_src", "c" + std::to_string(i)); },
          [] {
            auto rn = std::make_unique<ast::FunctionCall>();
            rn->name = "row_number";
            rn->over = std::make_shared<ast::WindowSpec>();
            rn->over->order_by.emplace_back();
            rn->over->order_by.back().expr = ast::null_literal();  // the rows as they come
            return ExprPtr(std::move(rn));
          })));
    s.source = ast::select(std::move(all), ast::subquery_source(std::move(s.source), "__vw_src", std::move(cols)));
    s.source->schema_path = std::move(path);
  }
  for (std::string& n : names) s.columns.push_back(std::move(n));
}

LoweredWrite lower_view_write(PlanningContext& db, const ast::Statement& stmt, const std::vector<std::string>* nested) {
  LoweredWrite out;
  const ast::QualifiedName* name = nullptr;
  const std::vector<std::string>* path = nullptr;
  const ast::WithClause* with = nullptr;
  switch (stmt.kind) {
    case ast::StmtKind::kInsert: {
      auto& s = static_cast<const ast::InsertStmt&>(stmt);
      name = &s.table;
      path = !s.schema_path.empty() || !s.source ? &s.schema_path : &s.source->schema_path;
      with = s.with.get();
      break;
    }
    case ast::StmtKind::kUpdate:
      name = &static_cast<const ast::UpdateStmt&>(stmt).table;
      path = &static_cast<const ast::UpdateStmt&>(stmt).schema_path;
      with = static_cast<const ast::UpdateStmt&>(stmt).with.get();
      break;
    case ast::StmtKind::kDelete:
      name = &static_cast<const ast::DeleteStmt&>(stmt).table;
      path = &static_cast<const ast::DeleteStmt&>(stmt).schema_path;
      with = static_cast<const ast::DeleteStmt&>(stmt).with.get();
      break;
    default: return out;
  }
  // The target resolves as the statement's own builder resolves it: a CTE of its own
  // WITH first.
  Planner planner(db);
  planner.set_statement_path(*path);
  if (nested) planner.inherit_statement_path(*nested);
  ResolvedRelation rel;
  rel.view = cte_target(db, with, *name, planner.search_path().front());
  if (const ast::Select* inline_target = target_query(stmt))
    rel.view = subquery_target(db, with, *inline_target, target_columns(stmt), *name, planner.search_path().front());
  const bool ephemeral = rel.view != nullptr;
  if (!rel.view) rel = planner.resolve_relation(*name);
  if (!rel.view && rel.table && rel.table->schema.derivation) rel.view = maintained_view(db, *rel.table, name->site);
  if (!rel.view) return out;
  // A view's stored tags are checked against the reserved registry lazily, on the first
  // write through it (vu-inverses.md, Tags): CREATE VIEW stores them as written.
  if (!ephemeral && !rel.view->lens) {
    try {
      validate_reserved_tags(rel.view->tags, TagSite::kViewDdl);
    } catch (const Error& e) {
      throw Error(e.code(), "cannot write through view '" + rel.view->name + "': " + e.raw_message(), name->site);
    }
  }
  // A logical table whose primary key the lens cannot reconstruct is read-only.
  if (rel.view->lens && !rel.view->lens->read_only.empty())
    throw Error(StatusCode::kReadOnly, "cannot write through logical table '" + rel.view->lens->logical_schema + "." +
                                           rel.view->lens->table + "': it is read-only: " + rel.view->lens->read_only);
  if (rel.view->lens) refuse_commit_time_resolution(*rel.view->lens, stmt);
  if (std::optional<SetOpBody> body = set_op_body(db, *rel.view)) {
    if (body->flat_union()) lower_set_op_write(db, *rel.view, body->leaves(), stmt, planner.search_path(), out);
    else lower_membership_write(db, *rel.view, *body, stmt, planner.search_path(), ephemeral, out);
    return out;
  }
  // A logical parent's propagating foreign-key actions: the child writes go first.
  LensPrologue prologue;
  // (Every such action comes from a logical foreign key: none while pragma foreign_keys is off.)
  if (rel.view->lens && !rel.view->lens->cascades.empty() && db.foreign_keys_on())
    prologue = lens_prologue(*rel.view->lens, stmt);
  ast::StatementPtr& widened = prologue.replaced;
  std::vector<ast::StatementPtr>& cascades = prologue.statements;
  ViewShape v = analyze(db, *rel.view);
  v.decomposition = rel.view->lens && !rel.view->lens->anchor.empty();
  if (v.decomposition) v.eav = rel.view->lens->eav;
  v.db = &db;
  v.caller_path = planner.search_path();
  if (prologue.descendants && v.join()) widened = std::move(prologue.whole);
  ast::StatementPtr copy = clone(widened ? *widened : stmt);
  if (rel.view->lens && copy->kind == ast::StmtKind::kInsert)
    supply_logical_defaults(static_cast<ast::InsertStmt&>(*copy), *rel.view->lens);
  if (v.decomposition && copy->kind == ast::StmtKind::kUpdate)
    refuse_identity_write(static_cast<const ast::UpdateStmt&>(*copy), v, *rel.view->lens);
  if (v.decomposition && copy->kind == ast::StmtKind::kInsert && cascades.empty()) {
    const auto& ins = static_cast<const ast::InsertStmt&>(*copy);
    if (!ins.upserts.empty() || !ins.returning.empty() || ins.replace ||
        ins.or_action == ast::ConflictClause::kIgnore || ins.or_action == ast::ConflictClause::kReplace) {
      lower_decomposition_insert(ins, *rel.view->lens, *path, out);
      return out;
    }
  }
  // An advertised decomposition's EAV attributes: their triples are written from a row
  // set captured before anything changes, and the rest of the statement is lowered as if
  // the attributes were not there.
  if (copy->kind == ast::StmtKind::kUpdate && cascades.empty() &&
      lower_eav_constant_update(static_cast<const ast::UpdateStmt&>(*copy), v, out))
    return out;
  EavSplit eav;
  if (v.decomposition && !v.eav.empty()) eav = split_eav_writes(*rel.view, v.eav, *copy, name->site);
  if (eav.nothing_else) {
    out.pre_captures.push_back(std::move(eav.capture));
    out.statements = std::move(eav.statements);
    out.returning_query = std::move(eav.returning);
    return out;
  }
  if (v.join()) {
    switch (copy->kind) {
      case ast::StmtKind::kInsert: lower_join_insert(static_cast<ast::InsertStmt&>(*copy), v, out); break;
      case ast::StmtKind::kUpdate: lower_join_update(static_cast<ast::UpdateStmt&>(*copy), v, out); break;
      default: lower_join_delete(static_cast<ast::DeleteStmt&>(*copy), v, out); break;
    }
  } else {
    switch (copy->kind) {
      case ast::StmtKind::kInsert: lower_insert(static_cast<ast::InsertStmt&>(*copy), v); break;
      case ast::StmtKind::kUpdate: lower_update(static_cast<ast::UpdateStmt&>(*copy), v); break;
      default: lower_delete(static_cast<ast::DeleteStmt&>(*copy), v); break;
    }
    if (prologue.descendants) {
      lower_delete(static_cast<ast::DeleteStmt&>(*prologue.descendants), v);
      out.statements.push_back(std::move(prologue.descendants));
    }
    // An advertised decomposition of the anchor and EAV members only: each member's
    // triples of the rows the anchor delete takes go first (anchor last):
    //   delete from <pivot> where <entity> in (select <key> from <anchor> as __vw_self where <pred>)
    if (copy->kind == ast::StmtKind::kDelete && v.decomposition && v.table)
      for (const LensSlot::EavMember& m : v.eav) {
        auto& d = static_cast<ast::DeleteStmt&>(*copy);
        std::vector<ast::ResultColumn> key;
        key.push_back(ast::result_column(ast::column_ref(kSelf, m.anchor_key)));
        auto rows = ast::select(std::move(key), ast::table_source(d.table, kSelf), d.where ? clone(*d.where) : nullptr);
        rows->schema_path = d.schema_path;
        auto del = std::make_unique<ast::DeleteStmt>();
        del->table = {m.schema, m.table, {}};
        del->where = ast::in_subquery(ast::column_ref(m.table, m.entity), std::move(rows));
        del->context = clone(d.context);
        out.statements.push_back(std::move(del));
      }
    if (const ast::WithClause* body_with = rel.view->definition->select->with.get()) carry_body_with(*copy, *body_with, v);
    out.statements.push_back(std::move(copy));
    out.returning_from = static_cast<int>(out.statements.size()) - 1;
  }
  // A key move whose children were already written cannot let a basis constraint's
  // IGNORE (or FAIL) skip a parent row: the children would reference the wrong parent.
  // Such a conflict fails the statement instead (docs/lenses.md, foreign-key actions).
  if (stmt.kind == ast::StmtKind::kUpdate && !cascades.empty()) {
    bool skips = !v.join() && (!v.table || may_skip_rows(v.table->schema));
    for (const JoinSide& side : v.sides) skips = skips || may_skip_rows(side.table->schema);
    if (skips)
      for (ast::StatementPtr& s : out.statements)
        if (s->kind == ast::StmtKind::kUpdate) static_cast<ast::UpdateStmt&>(*s).or_action = ast::ConflictClause::kAbort;
  }
  if (rel.view->lens) attach_lens_checks(*rel.view->lens, out, db.foreign_keys_on());
  out.pre_checks = std::move(prologue.checks);
  out.pre_captures = std::move(prologue.captures);
  if (eav.capture.select) {
    // The triples go after the anchor's INSERT (its key exists first), before an
    // UPDATE's base statements (everything they write was captured already).
    out.pre_captures.push_back(std::move(eav.capture));
    if (stmt.kind == ast::StmtKind::kInsert) {
      for (auto& e : eav.statements) out.statements.push_back(std::move(e));
    } else {
      out.statements.insert(out.statements.begin(), std::make_move_iterator(eav.statements.begin()),
                            std::make_move_iterator(eav.statements.end()));
      if (out.returning_from >= 0) out.returning_from += static_cast<int>(eav.statements.size());
    }
  }
  if (eav.returning) {
    out.returning_query = std::move(eav.returning);
    out.returning_before = false;
    out.returning_from = -1;
  }
  if (!cascades.empty()) {
    out.statements.insert(out.statements.begin(), std::make_move_iterator(cascades.begin()),
                          std::make_move_iterator(cascades.end()));
    if (out.returning_from >= 0) out.returning_from += static_cast<int>(cascades.size());
  }
  return out;
}

}  // namespace quereus
