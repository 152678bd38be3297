// How a reference reads a logical table over an advertised decomposition (docs/decompositions.md):
// auxiliary-access routing and mandatory-member elimination.
//
// Auxiliary-access read-path routing (spec/lens.md "Auxiliary-access read-path routing";
// docs/decompositions.md "Auxiliary access").
//
// A logical table whose decomposition has an auxiliary-access advertisement (a structure
// keyed like the anchor that answers predicates of some form — "contains" over a text
// column, say) reads through it when the query's WHERE holds such a predicate: the
// reference's body is planned as
//
//   select <body columns> from <aux> __qrs_aux inner join <anchor> on <anchor key> = __qrs_aux.<key> …
//   where <the predicate over __qrs_aux's column>
//
// so the auxiliary's own module answers the predicate (planner/access_forms.h: a
// QRS_OP_FORM filter) and the optimizer can drive the join from its few matching rows.
// The auxiliary's key is unique (checked when the lens compiled), so the join neither
// drops nor repeats a logical row beyond what the predicate removes. The conjunct also
// stays in the outer WHERE: a module that does not answer the form still gives the right
// rows, and a structure that is not exact is corrected — the read never gets wrong rows
// through a route, only (at worst) no faster. Nothing is routed when the form has no
// recognizer, the conjunct reads anything but its access column, or the reference is not
// a plain logical-table name.
#include <set>

#include "catalog/catalog.h"
#include "catalog/lens.h"
#include "catalog/registry.h"
#include "common/status.h"
#include "common/strings.h"
#include "parser/ast_build.h"
#include "parser/ast_clone.h"
#include "parser/ast_visit.h"
#include "parser/ast_walk.h"
#include "planner/access_forms.h"
#include "planner/planner.h"
#include "planner/planning_context.h"

namespace quereus {

namespace {

constexpr const char* kAuxAlias = "__qrs_aux";

void leaf_tables(const ast::TableSource& s, std::vector<const ast::TableSource*>& out) {
  if (s.kind == ast::TableSource::Kind::kJoin) {
    leaf_tables(*s.left, out);
    leaf_tables(*s.right, out);
  } else if (s.kind == ast::TableSource::Kind::kTable) {
    out.push_back(&s);
  }
}

void conjuncts(const ast::Expr& e, std::vector<const ast::Expr*>& out) {
  if (e.kind == ast::ExprKind::kBinary && static_cast<const ast::BinaryExpr&>(e).op == ast::BinaryOp::kAnd) {
    conjuncts(*static_cast<const ast::BinaryExpr&>(e).left, out);
    conjuncts(*static_cast<const ast::BinaryExpr&>(e).right, out);
    return;
  }
  out.push_back(&e);
}

// Every column reference of `e` (the access column, the only one a recognized conjunct
// holds) renamed to the auxiliary's column.
void retarget(ast::Expr& e, const std::string& column) {
  if (e.kind == ast::ExprKind::kColumn) {
    auto& c = static_cast<ast::ColumnRef&>(e);
    c.schema.clear();
    c.table = kAuxAlias;
    c.column = column;
    return;
  }
  ast::for_each_child(e, [&](ast::ExprPtr& child) { retarget(*child, column); }, [](ast::Select&) {});
}

}  // namespace

void Planner::note_lens_reads(const ast::SelectCore& core, const std::vector<ast::OrderingTerm>* order_by) {
  std::vector<const ast::TableSource*> leaves;
  leaf_tables(*core.from, leaves);
  std::vector<LensReference> refs;
  std::vector<std::string> path;
  for (const ast::TableSource* s : leaves) {
    if (s->table.schema.empty()) {  // a CTE of that name shadows the catalog
      bool cte = false;
      for (const auto& level : cte_stack_) cte = cte || level.count(to_lower(s->table.name));
      if (cte) continue;
    }
    if (path.empty()) path = search_path();
    // A name that does not resolve (or `committed.<table>`) is for plan_from to report.
    ResolvedRelation rel;
    try {
      rel = db_.resolve_relation(s->table.schema, s->table.name, &path);
    } catch (const Error&) {
      continue;
    }
    if (rel.view && rel.view->lens) refs.push_back({s, rel.view});
  }
  if (refs.empty()) return;
  if (core.where) route_auxiliary_access(core, refs, leaves.size());
  note_used_columns(core, order_by, refs);
}

void Planner::route_auxiliary_access(const ast::SelectCore& core, const std::vector<LensReference>& refs,
                                     size_t leaves) {
  std::vector<const LensReference*> candidates;  // the references with routes
  for (const LensReference& r : refs)
    if (!r.view->lens->aux_routes.empty()) candidates.push_back(&r);
  if (candidates.empty()) return;
  std::vector<const ast::Expr*> where;
  conjuncts(*core.where, where);
  auto find_function = [this](const std::string& name, int argc) { return db_.registry().find_scalar(name, argc); };
  for (const ast::Expr* c : where) {
    std::optional<AstFormMatch> m = recognize_form(*c, find_function);
    if (!m) continue;
    // The reference the access column belongs to: named by its qualifier, or the only
    // table of the FROM when unqualified.
    const LensReference* at = nullptr;
    for (const LensReference* cand : candidates) {
      const std::string& name = cand->src->alias.empty() ? cand->src->table.name : cand->src->alias;
      if (m->column->table.empty() ? leaves == 1 : iequals(m->column->table, name)) at = cand;
    }
    if (!at || aux_routing_.count(at->src)) continue;
    const LensSlot& slot = *at->view->lens;
    for (size_t i = 0; i < slot.aux_routes.size(); ++i) {
      const LensSlot::AuxRoute& r = slot.aux_routes[i];
      if (!iequals(r.column, m->column->column) ||
          std::find(r.forms.begin(), r.forms.end(), m->form) == r.forms.end())
        continue;
      AuxRouting routing;
      routing.slot = at->view->lens;
      routing.route = i;
      routing.predicate = ast::clone(*c);
      retarget(*routing.predicate, r.aux_column);
      aux_routing_.emplace(at->src, std::move(routing));
      return;  // one routed predicate per query
    }
  }
}

std::unique_ptr<ast::Select> Planner::routed_body(const ast::Select& body, const AuxRouting& routing) const {
  const LensSlot::AuxRoute& r = routing.slot->aux_routes[routing.route];
  if (!body.compounds.empty() || !body.core.from) return nullptr;
  std::unique_ptr<ast::Select> out = ast::clone(body);
  // The left-most table of the body's join spine is the anchor.
  ast::TableSourcePtr* leaf = &out->core.from;
  while ((*leaf)->kind == ast::TableSource::Kind::kJoin) leaf = &(*leaf)->left;
  const ast::TableSource& anchor = **leaf;
  if (anchor.kind != ast::TableSource::Kind::kTable ||
      !iequals(anchor.alias.empty() ? anchor.table.name : anchor.alias, r.anchor_qualifier))
    return nullptr;
  auto join = std::make_unique<ast::TableSource>();
  join->kind = ast::TableSource::Kind::kJoin;
  join->join = ast::JoinKind::kInner;
  join->site = anchor.site;
  join->left = ast::table_source({r.schema, r.table, {}}, kAuxAlias);
  ast::ExprPtr on;
  for (const auto& [aux_key, anchor_key] : r.key)
    on = ast::conjoin(std::move(on), ast::binary(ast::BinaryOp::kEq, ast::column_ref(r.anchor_qualifier, anchor_key),
                                                 ast::column_ref(kAuxAlias, aux_key)));
  join->on = std::move(on);
  join->right = std::move(*leaf);
  *leaf = std::move(join);
  out->core.where = ast::conjoin(std::move(out->core.where), ast::clone(*routing.predicate));
  return out;
}

// ---- mandatory-member elimination (spec/lens.md "The existence-anchor
// inclusion-dependency contract"): a mandatory member has exactly one row per anchor row
// (its key is the anchor's, and the advertisement promises the row exists), so an inner
// join to it neither drops nor repeats a logical row. A reference that reads none of its
// columns reads the body without it.

namespace {

// Adds to `used` every column name `e` (subqueries included) could read of the reference
// named `name`: unqualified names and names qualified by it. False: it reads all (a star).
void names_read(const ast::Expr& e, const std::string& name, std::set<std::string>& used) {
  ast::any_expr_deep(e, [&](const ast::Expr& x) {
    if (x.kind == ast::ExprKind::kColumn) {
      auto& c = static_cast<const ast::ColumnRef&>(x);
      if (c.table.empty() || iequals(c.table, name)) used.insert(to_lower(c.column));
    }
    return false;
  });
}

// (A star inside a derived table names that table's own sources only.)
bool select_reads(const ast::Select& s, const std::string& name, std::set<std::string>& used) {
  ast::any_expr_in_select(s, [&](const ast::Expr& x) {
    names_read(x, name, used);
    return false;
  });
  return true;
}

// Every name the FROM tree's joins read (ON, USING), its derived tables and functions.
bool from_reads(const ast::TableSource& t, const std::string& name, std::set<std::string>& used) {
  switch (t.kind) {
    case ast::TableSource::Kind::kJoin:
      if (t.on) names_read(*t.on, name, used);
      for (const std::string& u : t.using_columns) used.insert(to_lower(u));
      return from_reads(*t.left, name, used) && from_reads(*t.right, name, used);
    case ast::TableSource::Kind::kSubquery: return !t.subquery || select_reads(*t.subquery, name, used);
    case ast::TableSource::Kind::kFunction:
      for (const auto& a : t.function_args)
        if (a) names_read(*a, name, used);
      return true;
    case ast::TableSource::Kind::kTable: return true;
  }
  return false;
}

}  // namespace

void Planner::note_used_columns(const ast::SelectCore& core, const std::vector<ast::OrderingTerm>* order_by,
                                const std::vector<LensReference>& refs) {
  for (const LensReference& r : refs) {
    if (r.view->lens->inds.empty()) continue;
    const ast::TableSource* s = r.src;
    const std::string name = s->alias.empty() ? s->table.name : s->alias;
    std::set<std::string> used;
    bool all = false;
    for (const ast::ResultColumn& rc : core.columns) {
      if (rc.kind == ast::ResultColumn::Kind::kStar) all = true;
      else if (rc.kind == ast::ResultColumn::Kind::kTableStar && (iequals(rc.table, name) || rc.table.empty())) all = true;
      else if (rc.expr) names_read(*rc.expr, name, used);
    }
    if (core.where) names_read(*core.where, name, used);
    for (const auto& g : core.group_by)
      if (g) names_read(*g, name, used);
    if (core.having) names_read(*core.having, name, used);
    if (order_by)
      for (const ast::OrderingTerm& o : *order_by)
        if (o.expr) names_read(*o.expr, name, used);
    if (!from_reads(*core.from, name, used)) all = true;
    if (!all) used_columns_[s] = std::move(used);
  }
}

void Planner::forget_lens_reads(const ast::TableSource& from) {
  if (aux_routing_.empty() && used_columns_.empty()) return;
  std::vector<const ast::TableSource*> leaves;
  leaf_tables(from, leaves);
  for (const ast::TableSource* s : leaves) {
    aux_routing_.erase(s);
    used_columns_.erase(s);
  }
}

std::unique_ptr<ast::Select> Planner::reduced_body(const ast::Select& body, const LensSlot& slot,
                                                   const std::set<std::string>& used) const {
  if (!body.compounds.empty() || !body.core.from) return nullptr;
  std::unique_ptr<ast::Select> out;
  for (const LensSlot::InclusionDependency& ind : slot.inds) {
    bool read = false;
    for (const std::string& c : ind.columns) read = read || used.count(to_lower(c));
    if (read) continue;
    ast::Select& sel = out ? *out : *(out = ast::clone(body));
    // The inner join whose right side is the member, on the left-deep spine.
    ast::TableSourcePtr* at = &sel.core.from;
    bool removed = false;
    while ((*at)->kind == ast::TableSource::Kind::kJoin) {
      ast::TableSource& j = **at;
      const ast::TableSource& r = *j.right;
      if (j.join == ast::JoinKind::kInner && r.kind == ast::TableSource::Kind::kTable && !j.lateral &&
          iequals(r.alias.empty() ? r.table.name : r.alias, ind.qualifier)) {
        *at = std::move(j.left);
        removed = true;
        break;
      }
      at = &j.left;
    }
    if (!removed) continue;
    // Its columns, read by nobody, become NULL under their names.
    for (ast::ResultColumn& rc : sel.core.columns) {
      if (rc.kind != ast::ResultColumn::Kind::kExpr || !rc.expr) continue;
      bool reads_member = ast::any_expr_deep(*rc.expr, [&](const ast::Expr& x) {
        return x.kind == ast::ExprKind::kColumn && iequals(static_cast<const ast::ColumnRef&>(x).table, ind.qualifier);
      });
      if (reads_member) rc.expr = ast::null_literal();
    }
  }
  return out;
}

}  // namespace quereus
