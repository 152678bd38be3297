// The shape of a view for view-write lowering (see view_shape.h): syntax helpers, and
// the analysis of a body into routed columns, join sides and key classes, read from the
// lineage service (planner/lineage.h).
#include "rewrite/view_shape.h"

#include <algorithm>
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
#include "parser/ast_visit.h"

namespace quereus::view_write {

namespace {

// The view's output names: its column list, or the body's. A column list whose length the
// body no longer matches (a column a `select *` body read was dropped since) is the error
// a read of the view gives, not an engine fault.
std::vector<std::string> output_names(const ViewEntry& view, const QueryPlan& qp) {
  if (view.columns.empty()) return qp.names;
  if (view.columns.size() != qp.names.size())
    throw Error(StatusCode::kError, "View '" + view.name + "' has " + std::to_string(view.columns.size()) +
                                        " declared columns but body produces " + std::to_string(qp.names.size()));
  return view.columns;
}

}  // namespace

// ------------------------------------------------------------------ syntax helpers


// A rewrite hook: returns true when it replaced `e` (the walk then does not descend into
// the replacement). `depth` is 0 at the statement's own level, +1 per subquery.
// The subquery cores enclosing the expression a Rewrite is looking at, innermost last. A
// walk started from inside another walk's hook (a term substituted into a subquery, then
// retargeted) continues the outer walk's stack, so it is passed along explicitly.

void walk_select(ast::Select& s, const Rewrite& fn, int depth, CoreStack& cores);
// A walk of its own (no enclosing walk).
void walk(ExprPtr& e, const Rewrite& fn) {
  CoreStack cores;
  walk(e, fn, 0, cores);
}

void walk_source(ast::TableSource& src, const Rewrite& fn, int depth, CoreStack& cores) {
  using K = ast::TableSource::Kind;
  if (src.kind == K::kSubquery && src.subquery) walk_select(*src.subquery, fn, depth, cores);
  if (src.kind == K::kJoin) {
    if (src.left) walk_source(*src.left, fn, depth, cores);
    if (src.right) walk_source(*src.right, fn, depth, cores);
    if (src.on) walk(src.on, fn, depth, cores);
  }
  if (src.kind == K::kFunction)
    for (auto& a : src.function_args) walk(a, fn, depth, cores);
}

void walk_core(ast::SelectCore& c, const Rewrite& fn, int depth, CoreStack& cores) {
  cores.push_back(&c);
  struct Pop {
    CoreStack& cores;
    ~Pop() { cores.pop_back(); }
  } pop{cores};
  if (c.nested) walk_select(*c.nested, fn, depth, cores);
  for (auto& rc : c.columns)
    if (rc.expr) walk(rc.expr, fn, depth, cores);
  if (c.from) walk_source(*c.from, fn, depth, cores);
  if (c.where) walk(c.where, fn, depth, cores);
  for (auto& g : c.group_by) walk(g, fn, depth, cores);
  if (c.having) walk(c.having, fn, depth, cores);
  for (auto& row : c.values)
    for (auto& v : row) walk(v, fn, depth, cores);
}

void walk_select(ast::Select& s, const Rewrite& fn, int depth, CoreStack& cores) {
  if (s.with)
    for (auto& cte : s.with->ctes)
      if (cte.select) walk_select(*cte.select, fn, depth + 1, cores);
  walk_core(s.core, fn, depth + 1, cores);
  for (auto& leg : s.compounds) walk_core(leg.core, fn, depth + 1, cores);
  for (auto& o : s.order_by) walk(o.expr, fn, depth + 1, cores);
  if (s.limit) walk(s.limit, fn, depth + 1, cores);
  if (s.offset) walk(s.offset, fn, depth + 1, cores);
}

void walk(ExprPtr& e, const Rewrite& fn, int depth, CoreStack& cores) {
  if (!e) return;
  if (fn(e, depth)) return;
  ast::for_each_child(
      *e, [&](ExprPtr& x) { walk(x, fn, depth, cores); },
      [&](ast::Select& q) { walk_select(q, fn, depth, cores); });
}

// Qualifies every column reference of `e` at its own level (not inside its subqueries)
// that is unqualified or qualified by `from` with `to`.
void requalify(ExprPtr& e, const std::string& from, const std::string& to) {
  walk(e, [&](ExprPtr& x, int depth) {
    if (depth > 0 || x->kind != ast::ExprKind::kColumn) return false;
    auto& c = static_cast<ast::ColumnRef&>(*x);
    if (c.table.empty() || (c.schema.empty() && iequals(c.table, from))) {
      c.table = to;
      c.schema.clear();
    }
    return true;
  });
}

// A view fragment (a term, the WHERE) moved under a target renamed `to`: every reference
// qualified by the body's name for its source, at any depth, follows — unless a subquery
// of the fragment itself names a source that way (then the name is that source's) — and,
// at the fragment's own level, every unqualified reference too.
void retarget(ExprPtr& e, const std::string& from, const std::string& to, CoreStack& cores) {
  const size_t outer = cores.size();  // subqueries around the fragment are not its own
  walk(e, [&](ExprPtr& x, int depth) {
    if (x->kind != ast::ExprKind::kColumn) return false;
    auto& c = static_cast<ast::ColumnRef&>(*x);
    if (depth == 0 && c.table.empty()) {
      c.table = to;
      return true;
    }
    if (!c.schema.empty() || !iequals(c.table, from)) return true;
    for (size_t i = outer; i < cores.size(); ++i) {
      const ast::SelectCore* core = cores[i];
      bool shadows = false;
      std::function<void(const ast::TableSource&)> look = [&](const ast::TableSource& src) {
        if (src.kind == ast::TableSource::Kind::kJoin) {
          look(*src.left);
          look(*src.right);
          return;
        }
        const std::string& name = src.alias.empty() ? src.table.name : src.alias;
        shadows = shadows || iequals(name, from);
      };
      if (core->from) look(*core->from);
      if (shadows) return true;
    }
    c.table = to;
    return true;
  }, 0, cores);
}

bool is_image(const std::string& q) { return iequals(q, "new") || iequals(q, "old") || iequals(q, "excluded"); }

// The AND-conjuncts of `e`.
void conjuncts(const ast::Expr* e, std::vector<const ast::Expr*>& out) {
  if (!e) return;
  if (e->kind == ast::ExprKind::kBinary) {
    auto& b = static_cast<const ast::BinaryExpr&>(*e);
    if (b.op == ast::BinaryOp::kAnd) {
      conjuncts(b.left.get(), out);
      conjuncts(b.right.get(), out);
      return;
    }
  }
  out.push_back(e);
}


// Equal / different / unknown at plan time, for two non-null literals.
std::optional<bool> literals_equal(const ast::Literal& a, const ast::Literal& b) {
  using L = ast::LiteralKind;
  auto numeric = [](const ast::Literal& l) { return l.literal_kind == L::kInteger || l.literal_kind == L::kReal; };
  if (numeric(a) && numeric(b)) {
    try {
      return std::stod(a.text) == std::stod(b.text);
    } catch (...) {
      return std::nullopt;
    }
  }
  if (a.literal_kind == L::kString && b.literal_kind == L::kString) return a.text == b.text;
  auto boolean = [](const ast::Literal& l) { return l.literal_kind == L::kTrue || l.literal_kind == L::kFalse; };
  if (boolean(a) && boolean(b)) return a.literal_kind == b.literal_kind;
  return std::nullopt;
}

// ------------------------------------------------------------------ the view's shape



// A numeric constant of an inverse step as syntax (a negative one as a negation).
ExprPtr number(const Value& k) { return ast::value_literal(k.type() == ValueType::kInteger ? k : Value::Real(k.to_double())); }

// The base value a written view value `v` stands for, through the lineage's inverse steps.
ExprPtr apply_inverse(const std::vector<InverseStep>& steps, ExprPtr v) {
  using Op = InverseStep::Op;
  for (const InverseStep& step : steps) {
    switch (step.op) {
      case Op::kSubtract: v = binary(ast::BinaryOp::kSub, std::move(v), number(step.constant)); break;
      case Op::kAdd: v = binary(ast::BinaryOp::kAdd, std::move(v), number(step.constant)); break;
      case Op::kFromConstant: v = binary(ast::BinaryOp::kSub, number(step.constant), std::move(v)); break;
      case Op::kNegate: v = negate(std::move(v)); break;
      case Op::kFunction: {
        std::vector<ExprPtr> args;
        args.push_back(std::move(v));
        for (const Value& a : step.args) args.push_back(ast::value_literal(a));
        v = ast::call(step.function, std::move(args));
        break;
      }
    }
  }
  return v;
}

bool any_call_at_level(const ast::Expr& e, const std::function<bool(const ast::FunctionCall&)>& pred) {
  bool found = false;
  std::function<void(const ast::Expr&)> look = [&](const ast::Expr& x) {
    if (x.kind == ast::ExprKind::kFunction) {
      auto& f = static_cast<const ast::FunctionCall&>(x);
      if (pred(f)) found = true;
      for (auto& a : f.args) look(*a);
    } else if (x.kind == ast::ExprKind::kBinary) {
      auto& b = static_cast<const ast::BinaryExpr&>(x);
      if (b.left) look(*b.left);
      if (b.right) look(*b.right);
    } else if (x.kind == ast::ExprKind::kUnary) {
      look(*static_cast<const ast::UnaryExpr&>(x).operand);
    } else if (x.kind == ast::ExprKind::kCast) {
      look(*static_cast<const ast::CastExpr&>(x).operand);
    }
  };
  look(e);
  return found;
}

bool has_window(const ast::Expr& e) {
  return any_call_at_level(e, [](const ast::FunctionCall& f) { return f.over != nullptr; });
}

bool has_aggregate(PlanningContext& db, const ast::Expr& e) {
  return any_call_at_level(e, [&](const ast::FunctionCall& f) {
    return !f.over && db.registry().find_aggregate(to_lower(f.name), static_cast<int>(f.args.size()));
  });
}

// The output column names of a relation the body reads.
std::vector<std::string> relation_columns(PlanningContext& db, const ResolvedRelation& rel) {
  std::vector<std::string> out;
  if (rel.table) {
    for (auto& c : rel.table->schema.columns) out.push_back(c.name);
    return out;
  }
  if (!rel.view->columns.empty()) return rel.view->columns;
  Planner p(db);
  return p.plan_view_body(*rel.view->definition->select, rel.view->schema_name).names;
}

// The home-schema path a view body's names resolve along.
std::vector<std::string> body_path(PlanningContext& db, const ViewEntry& view) {
  const ast::Select& body = *view.definition->select;
  std::vector<std::string> path{view.schema_name};
  for (auto& s : body.schema_path.empty() ? db.schema_path() : body.schema_path)
    if (std::find(path.begin(), path.end(), s) == path.end()) path.push_back(s);
  return path;
}

void flatten_join(PlanningContext& db, const ast::TableSource& src, const std::vector<std::string>& path, ViewShape& v,
                  std::vector<const ast::Expr*>& on) {
  using K = ast::TableSource::Kind;
  if (src.kind == K::kJoin) {
    // USING (c) is the equality l.c = r.c: the plan's lineage carries it like an ON.
    for (const std::string& c : src.using_columns) v.using_columns.push_back(c);
    bool outer = src.join == ast::JoinKind::kLeft || src.join == ast::JoinKind::kRight;
    if (!src.exists_columns.empty() && !outer)
      v.refuse("existence columns are written only through a LEFT or RIGHT join (the non-preserved side's flag)");
    if (src.join != ast::JoinKind::kInner && !outer)
      v.refuse("a FULL or CROSS join body has no preserved side to anchor a write; it is not updatable");
    // An outer join is written through when its padded side is one table: a RIGHT join
    // of exactly two tables, or a left-deep chain whose every LEFT join pads the table on
    // its right (a decomposition's optional members, each joined to the anchor).
    if (src.join == ast::JoinKind::kRight && (!v.sides.empty() || src.left->kind != K::kTable || src.right->kind != K::kTable))
      v.refuse("an outer join of more than two tables is not updatable yet");
    if (src.join == ast::JoinKind::kLeft && src.right->kind != K::kTable)
      v.refuse("an outer join whose padded side is itself a join is not updatable yet");
    flatten_join(db, *src.left, path, v, on);
    flatten_join(db, *src.right, path, v, on);
    if (src.join == ast::JoinKind::kLeft) v.sides.back().padded = true;
    if (src.join == ast::JoinKind::kRight) v.sides[v.sides.size() - 2].padded = true;
    conjuncts(src.on.get(), on);
    return;
  }
  if (src.kind != K::kTable) v.refuse("a join side that is not a table is not updatable yet");
  ResolvedRelation rel = db.resolve_relation(src.table.schema, src.table.name, &path);
  if (!rel.table) v.refuse("a join side that is a view ('" + rel.view->name + "') is not updatable yet");
  v.sides.push_back({rel.table, src.alias.empty() ? src.table.name : src.alias});
}

// (side, column) of a column reference in a join body; (-1, -1) when it is not one.
std::pair<int, int> join_column(const ViewShape& v, const ast::Expr* e) {
  if (!e || e->kind != ast::ExprKind::kColumn) return {-1, -1};
  auto& ref = static_cast<const ast::ColumnRef&>(*e);
  std::pair<int, int> found{-1, -1};
  for (size_t s = 0; s < v.sides.size(); ++s) {
    if (!ref.table.empty() && !iequals(ref.table, v.sides[s].qualifier)) continue;
    int c = v.sides[s].find(ref.column);
    if (c < 0) continue;
    if (found.first >= 0) {
      // A bare USING column is the first side's; anything else ambiguous the body's
      // plan refuses anyway.
      bool shared = ref.table.empty() && std::any_of(v.using_columns.begin(), v.using_columns.end(),
                                                      [&](const std::string& u) { return iequals(u, ref.column); });
      return shared ? found : std::pair<int, int>{-1, -1};
    }
    found = {static_cast<int>(s), c};
  }
  return found;
}

void analyze_join(PlanningContext& db, const ViewEntry& view, ViewShape& v) {
  const ast::Select& body = *view.definition->select;
  v.body = &body;
  v.where = body.core.where.get();
  std::vector<const ast::Expr*> on;
  flatten_join(db, *body.core.from, body_path(db, view), v, on);
  Planner planner(db);
  QueryPlan qp = planner.plan_view_body(body, view.schema_name);
  v.lineage = derive_lineage(*qp.root);
  const RelLineage& lin = v.lineage;
  if (lin.scans.size() != v.sides.size())
    throw Error(StatusCode::kInternal, "view write: the join sides of '" + view.name + "' disagree with its plan");
  for (size_t s = 0; s < v.sides.size(); ++s)
    if (lin.scans[s].table != v.sides[s].table || lin.scans[s].padded != v.sides[s].padded)
      throw Error(StatusCode::kInternal, "view write: the join sides of '" + view.name + "' disagree with its plan");
  // Equivalence classes of (side, column) from the ON equalities.
  for (const JoinEquality& eq : lin.join_equalities) {
    std::pair<int, int> l{eq.left_scan, eq.left_column}, r{eq.right_scan, eq.right_column};
    int li = -1, ri = -1;
    for (size_t k = 0; k < v.classes.size(); ++k)
      for (auto& m : v.classes[k]) {
        if (m == l) li = static_cast<int>(k);
        if (m == r) ri = static_cast<int>(k);
      }
    if (li < 0 && ri < 0) v.classes.push_back({l, r});
    else if (li < 0) v.classes[ri].push_back(l);
    else if (ri < 0) v.classes[li].push_back(r);
    else if (li != ri) {
      v.classes[li].insert(v.classes[li].end(), v.classes[ri].begin(), v.classes[ri].end());
      v.classes.erase(v.classes.begin() + ri);
    }
  }
  std::vector<std::string> names = output_names(view, qp);
  // The terms, as syntax every statement over the join reads the same way (each column
  // qualified by its side).
  auto side_columns = [&](size_t s) {
    for (auto& c : v.sides[s].table->schema.columns) {
      ViewColumn col;
      col.qualified = ast::column_ref(v.sides[s].qualifier, c.name);
      v.columns.push_back(std::move(col));
    }
  };
  // `*` reads the join as the planner lays it out: each join's left columns, its right
  // columns, then its existence flags (`exists as f`), which `t.*` never includes.
  std::function<void(const ast::TableSource&, size_t&)> star = [&](const ast::TableSource& src, size_t& side) {
    if (src.kind != ast::TableSource::Kind::kJoin) {
      side_columns(side++);
      return;
    }
    star(*src.left, side);
    star(*src.right, side);
    for (const ast::ExistenceColumn& ec : src.exists_columns) {
      ViewColumn col;
      col.qualified = ast::column_ref("", ec.name);
      v.columns.push_back(std::move(col));
    }
  };
  for (auto& rc : body.core.columns) {
    using RK = ast::ResultColumn::Kind;
    if (rc.kind == RK::kStar) {
      size_t side = 0;
      star(*body.core.from, side);
      continue;
    }
    if (rc.kind == RK::kTableStar) {
      for (size_t s = 0; s < v.sides.size(); ++s)
        if (iequals(rc.table, v.sides[s].qualifier)) side_columns(s);
      continue;
    }
    ViewColumn col;
    col.term = rc.expr.get();
    if (!rc.inverse.empty()) col.authored = &rc.inverse;
    ExprPtr t = clone(*rc.expr);
    walk(t, [&](ExprPtr& x, int depth) {
      if (depth > 0 || x->kind != ast::ExprKind::kColumn) return false;
      auto [s, c] = join_column(v, x.get());
      if (s >= 0) {
        auto& ref = static_cast<ast::ColumnRef&>(*x);
        ref.schema.clear();
        ref.table = v.sides[s].qualifier;
        ref.column = v.sides[s].table->schema.columns[c].name;
      }
      return true;
    });
    col.qualified = std::move(t);
    v.columns.push_back(std::move(col));
  }
  if (v.columns.size() != lin.columns.size())
    throw Error(StatusCode::kInternal, "view write: column count of '" + view.name + "' disagrees with its plan");
  // Routing: each column's site, from the lineage.
  for (size_t i = 0; i < v.columns.size(); ++i) {
    const ColumnLineage& c = lin.columns[i];
    // An outer join's existence flag over its padded side is written through an effect
    // (vu-operators.md, "Writing the flag"); a flag over the preserved side is computed.
    if (c.kind == ColumnLineage::Kind::kExistence && c.scan >= 0 && v.sides[c.scan].padded &&
        (!v.columns[i].term || v.columns[i].term->kind == ast::ExprKind::kColumn))  // null: `*`'s flag
      v.columns[i].existence_side = c.scan;
    if (c.kind != ColumnLineage::Kind::kBase || c.scan < 0) continue;
    v.columns[i].side = c.scan;
    v.columns[i].base = v.sides[c.scan].table->schema.columns[c.column].name;
    v.columns[i].inverse = c.inverse;
  }
  if (v.columns.size() != names.size())
    throw Error(StatusCode::kInternal, "view write: column count of '" + view.name + "' disagrees with its plan");
  for (size_t i = 0; i < names.size(); ++i) {
    v.columns[i].name = names[i];
    v.columns[i].output = i < qp.names.size() ? qp.names[i] : names[i];
  }
}

ViewShape analyze(PlanningContext& db, const ViewEntry& view) {
  ViewShape v;
  v.name = view.name;
  v.schema = view.schema_name;
  v.decomposition = view.lens && !view.lens->anchor.empty();
  const ast::Select& body = *view.definition->select;
  if (body.dml) v.refuse("its body is a data-modifying statement");
  if (!body.compounds.empty()) v.refuse("set-operation body (UNION / INTERSECT / EXCEPT) is not updatable yet");
  const ast::SelectCore& core = body.core;
  if (core.nested) v.refuse("parenthesized body is not updatable yet");
  if (!core.values.empty()) v.refuse("no recoverable base operation (a VALUES body reads no base table)");
  if (body.limit || body.offset)
    v.refuse("LIMIT/OFFSET body cannot be reproduced as a predicate on the base rows (unsupported-limit)");
  if (core.distinct) v.refuse("DISTINCT body has no one-to-one base-row lineage (unsupported-distinct)");
  if (!core.group_by.empty() || core.having) v.refuse("aggregate body is not row-decomposable (unsupported-aggregate)");
  for (auto& rc : core.columns) {
    if (!rc.expr) continue;
    if (has_aggregate(db, *rc.expr)) v.refuse("aggregate body is not row-decomposable (unsupported-aggregate)");
    // A window function's column is computed (read-only); the other columns stay
    // writable (vu-operators.md, Window Functions): the window keeps its rows one-to-one.
  }
  if (!core.from) v.refuse("no recoverable base operation (the body reads no table)");
  using K = ast::TableSource::Kind;
  switch (core.from->kind) {
    case K::kTable: break;
    case K::kFunction: v.refuse("no recoverable base operation (a table-valued function is read-only)");
    case K::kSubquery: v.refuse("a FROM-subquery body is not updatable yet");
    case K::kJoin: break;
  }
  if (body.with) {
    // A single-source body's blocks ride the lowered statement (view_writes.cc,
    // carry_body_with); a join's capture, a recursive block, or a source that is one of
    // the blocks is not lowered yet.
    // A recursive block is view-updateability.md's `recursive-cte` diagnostic.
    if (body.with->recursive) v.refuse("a body with a recursive WITH clause is not updatable (recursive-cte)");
    if (core.from->kind == K::kJoin || v.decomposition)
      v.refuse("a body with its own WITH clause is not updatable yet");
    for (const ast::CommonTableExpr& cte : body.with->ctes)
      if (core.from->table.schema.empty() && iequals(cte.name, core.from->table.name))
        v.refuse("a body reading its own WITH block '" + cte.name + "' is not updatable yet");
  }
  if (core.from->kind == K::kJoin) {
    analyze_join(db, view, v);
    return v;
  }

  // The source resolves as the body's read resolves it: the view's home schema first.
  std::vector<std::string> path = body_path(db, view);
  const ast::TableSource& from = *core.from;
  ResolvedRelation rel = db.resolve_relation(from.table.schema, from.table.name, &path);
  v.source.schema = rel.table ? rel.table->schema.schema_name : rel.view->schema_name;
  v.source.name = rel.table ? rel.table->schema.name : rel.view->name;
  v.table = rel.table;
  v.alias = from.alias;
  v.qualifier = from.alias.empty() ? from.table.name : from.alias;
  v.source_columns = relation_columns(db, rel);
  v.where = core.where.get();
  v.defaults = &body.defaults;

  // The body plans as a read would (this also refuses a self-referencing view).
  Planner planner(db);
  QueryPlan qp = planner.plan_view_body(body, view.schema_name);
  std::vector<std::string> names = output_names(view, qp);
  v.lineage = derive_lineage(*qp.root);
  for (auto& rc : core.columns) {
    using RK = ast::ResultColumn::Kind;
    if (rc.kind == RK::kStar || rc.kind == RK::kTableStar) {
      for (size_t i = 0; i < v.source_columns.size(); ++i) v.columns.emplace_back();
      continue;
    }
    ViewColumn col;
    col.term = rc.expr.get();
    if (!rc.inverse.empty()) col.authored = &rc.inverse;
    v.columns.push_back(std::move(col));
  }
  if (v.columns.size() != v.lineage.reads.size())
    throw Error(StatusCode::kInternal, "view write: column count of '" + view.name + "' disagrees with its plan");
  // Routing: what the body's projection reads of its source row (the source's columns,
  // in order), through its own inverse; the source (a view) routes the rest itself.
  for (size_t i = 0; i < v.columns.size(); ++i) {
    const SourceRead& read = v.lineage.reads[i];
    if (read.slot < 0 || static_cast<size_t>(read.slot) >= v.source_columns.size()) continue;
    v.columns[i].base = v.source_columns[read.slot];
    v.columns[i].inverse = read.inverse;
  }
  if (v.columns.size() != names.size())
    throw Error(StatusCode::kInternal, "view write: column count of '" + view.name + "' disagrees with its plan");
  for (size_t i = 0; i < names.size(); ++i) {
    v.columns[i].name = names[i];
    v.columns[i].output = i < qp.names.size() ? qp.names[i] : names[i];
  }
  return v;
}

// `col = literal` conjuncts of the view's WHERE: source column → literal.
std::vector<std::pair<std::string, const ast::Literal*>> constant_bindings(const ViewShape& v) {
  std::vector<std::pair<std::string, const ast::Literal*>> out;
  std::vector<const ast::Expr*> cs;
  conjuncts(v.where, cs);
  auto column_of = [&](const ast::Expr* e) -> std::string {
    if (e->kind != ast::ExprKind::kColumn) return "";
    auto& ref = static_cast<const ast::ColumnRef&>(*e);
    if (!ref.table.empty() && !iequals(ref.table, v.qualifier)) return "";
    for (auto& c : v.source_columns)
      if (iequals(c, ref.column)) return c;
    return "";
  };
  auto literal_of = [](const ast::Expr* e) -> const ast::Literal* {
    if (e->kind != ast::ExprKind::kLiteral) return nullptr;
    auto* l = static_cast<const ast::Literal*>(e);
    return l->literal_kind == ast::LiteralKind::kNull ? nullptr : l;
  };
  for (const ast::Expr* c : cs) {
    if (c->kind == ast::ExprKind::kBinary) {
      auto& b = static_cast<const ast::BinaryExpr&>(*c);
      if (b.op != ast::BinaryOp::kEq && b.op != ast::BinaryOp::kEqEq && b.op != ast::BinaryOp::kIs) continue;
      std::string col = column_of(b.left.get());
      const ast::Literal* lit = literal_of(b.right.get());
      if (col.empty() || !lit) {
        col = column_of(b.right.get());
        lit = literal_of(b.left.get());
      }
      if (!col.empty() && lit) out.emplace_back(col, lit);
    } else if (c->kind == ast::ExprKind::kIn) {
      auto& in = static_cast<const ast::InExpr&>(*c);
      if (in.negated || in.subquery || in.list.size() != 1) continue;
      std::string col = column_of(in.operand.get());
      const ast::Literal* lit = literal_of(in.list[0].get());
      if (!col.empty() && lit) out.emplace_back(col, lit);
    } else {
      // A BOOLEAN column as a conjunct (`where isDog`, `where not isDog`) binds it to true
      // / false (vu-operators.md, Union All).
      bool negated = c->kind == ast::ExprKind::kUnary && static_cast<const ast::UnaryExpr*>(c)->op == ast::UnaryOp::kNot;
      const ast::Expr* e = negated ? static_cast<const ast::UnaryExpr*>(c)->operand.get() : c;
      std::string col = column_of(e);
      if (col.empty() || !v.table) continue;
      int at = v.table->schema.find_column(col);
      if (at < 0 || v.table->schema.columns[at].logical_type != QRS_LT_BOOLEAN) continue;
      struct BoolLiteral : ast::Literal {
        explicit BoolLiteral(bool b) { literal_kind = b ? ast::LiteralKind::kTrue : ast::LiteralKind::kFalse; }
      };
      static const BoolLiteral kTrue(true), kFalse(false);
      out.emplace_back(col, negated ? static_cast<const ast::Literal*>(&kFalse) : &kTrue);
    }
  }
  auto bound = [&](const std::string& col) {
    return std::any_of(out.begin(), out.end(), [&](const auto& b) { return iequals(b.first, col); });
  };
  // A range closed on one value (`year >= 2026 and year <= 2026`, `between k and k`)
  // binds the column to it.
  std::vector<std::pair<std::string, const ast::Literal*>> lower, upper;
  for (const ast::Expr* c : cs) {
    if (c->kind == ast::ExprKind::kBetween) {
      auto& b = static_cast<const ast::BetweenExpr&>(*c);
      std::string col = column_of(b.operand.get());
      const ast::Literal* lo = literal_of(b.low.get());
      const ast::Literal* hi = literal_of(b.high.get());
      if (!b.negated && !col.empty() && lo && hi) {
        lower.emplace_back(col, lo);
        upper.emplace_back(col, hi);
      }
      continue;
    }
    if (c->kind != ast::ExprKind::kBinary) continue;
    auto& b = static_cast<const ast::BinaryExpr&>(*c);
    const bool ge = b.op == ast::BinaryOp::kGe, le = b.op == ast::BinaryOp::kLe;
    if (!ge && !le) continue;
    if (std::string col = column_of(b.left.get()); !col.empty())
      if (const ast::Literal* lit = literal_of(b.right.get())) (ge ? lower : upper).emplace_back(col, lit);
    if (std::string col = column_of(b.right.get()); !col.empty())
      if (const ast::Literal* lit = literal_of(b.left.get())) (ge ? upper : lower).emplace_back(col, lit);
  }
  for (const auto& [col, lo] : lower)
    for (const auto& [col2, hi] : upper)
      if (iequals(col, col2) && !bound(col) && literals_equal(*lo, *hi) == true) out.emplace_back(col, lo);
  // `coalesce(col, d) = k and col is not null` binds col to k.
  auto not_null = [&](const std::string& col) {
    for (const ast::Expr* c : cs) {
      if (c->kind != ast::ExprKind::kIsNull) continue;
      auto& n = static_cast<const ast::IsNullExpr&>(*c);
      if (n.negated && iequals(column_of(n.operand.get()), col)) return true;
    }
    return false;
  };
  for (const ast::Expr* c : cs) {
    if (c->kind != ast::ExprKind::kBinary) continue;
    auto& b = static_cast<const ast::BinaryExpr&>(*c);
    if (b.op != ast::BinaryOp::kEq && b.op != ast::BinaryOp::kEqEq) continue;
    const ast::Expr* call = b.left.get();
    const ast::Literal* lit = literal_of(b.right.get());
    if (!lit) {
      call = b.right.get();
      lit = literal_of(b.left.get());
    }
    if (!lit || call->kind != ast::ExprKind::kFunction) continue;
    auto& f = static_cast<const ast::FunctionCall&>(*call);
    if (!iequals(f.name, "coalesce") || f.args.empty()) continue;
    std::string col = column_of(f.args[0].get());
    if (!col.empty() && !bound(col) && not_null(col)) out.emplace_back(col, lit);
  }
  return out;
}


}  // namespace quereus::view_write
