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

void Planner::route_auxiliary_access(const ast::SelectCore& core) {
  std::vector<const ast::TableSource*> leaves;
  leaf_tables(*core.from, leaves);
  // The references that name a logical table with routes.
  struct Candidate {
    const ast::TableSource* src;
    std::shared_ptr<const ViewEntry> view;
  };
  std::vector<Candidate> candidates;
  std::vector<std::string> path = search_path();
  for (const ast::TableSource* s : leaves) {
    if (s->table.schema.empty()) {  // a CTE of that name shadows the catalog
      bool cte = false;
      for (const auto& level : cte_stack_) cte = cte || level.count(to_lower(s->table.name));
      if (cte) continue;
    }
    // A name that does not resolve (or `committed.<table>`) is for plan_from to report.
    ResolvedRelation rel;
    try {
      rel = db_.resolve_relation(s->table.schema, s->table.name, &path);
    } catch (const Error&) {
      continue;
    }
    if (rel.view && rel.view->lens && !rel.view->lens->aux_routes.empty()) candidates.push_back({s, rel.view});
  }
  if (candidates.empty()) return;
  std::vector<const ast::Expr*> where;
  conjuncts(*core.where, where);
  auto find_function = [this](const std::string& name, int argc) { return db_.registry().find_scalar(name, argc); };
  for (const ast::Expr* c : where) {
    std::optional<AstFormMatch> m = recognize_form(*c, find_function);
    if (!m) continue;
    // The reference the access column belongs to: named by its qualifier, or the only
    // table of the FROM when unqualified.
    const Candidate* at = nullptr;
    for (const Candidate& cand : candidates) {
      const std::string& name = cand.src->alias.empty() ? cand.src->table.name : cand.src->alias;
      if (m->column->table.empty() ? leaves.size() == 1 : iequals(m->column->table, name)) at = &cand;
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

}  // namespace quereus
