// Writes through flag-less UNION / UNION ALL views, leg by leg (vu-setops.md, flag-less
// writes), and the write-through surface view_info() and column_info() report.
#include "rewrite/view_writes.h"

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
#include "rewrite/view_shape.h"

namespace quereus {
namespace view_write {

// ------------------------------------------------------------------ set operations

// The leg's literal term for view column `name` (a discriminator, `'red' as kind`), or null.
const ast::Literal* leg_literal(const ViewShape& v, const std::string& name) {
  const ViewColumn* c = v.find(name);
  if (!c || !c->base.empty() || c->authored || !c->term || c->term->kind != ast::ExprKind::kLiteral) return nullptr;
  return static_cast<const ast::Literal*>(c->term);
}

// True when an INSERT … VALUES row (the view columns `cols`) contradicts none of a leg's
// `col = literal` conjuncts and literal discriminator columns: the row belongs in that leg.
bool row_fits_leg(const ViewShape& v, const std::vector<std::string>& cols, const std::vector<ExprPtr>& row) {
  for (size_t i = 0; i < cols.size() && i < row.size(); ++i) {
    const ast::Literal* lit = leg_literal(v, cols[i]);
    if (!lit || row[i]->kind != ast::ExprKind::kLiteral) continue;  // not provable: the row goes there
    auto& given = static_cast<const ast::Literal&>(*row[i]);
    if (given.literal_kind == ast::LiteralKind::kNull || literals_equal(given, *lit) == false) return false;
  }
  for (auto& [col, lit] : constant_bindings(v)) {
    for (size_t i = 0; i < cols.size() && i < row.size(); ++i) {
      const ViewColumn* c = v.find(cols[i]);
      if (!c || !iequals(c->base, col) || !c->inverse.empty() || c->authored) continue;
      if (row[i]->kind != ast::ExprKind::kLiteral) continue;  // not provable: the row goes there
      auto& given = static_cast<const ast::Literal&>(*row[i]);
      if (given.literal_kind == ast::LiteralKind::kNull || literals_equal(given, *lit) == false) return false;
    }
  }
  return true;
}

// True when an UPDATE assigns one of the leg's discriminators (a `col = literal` of its
// WHERE) a literal that contradicts it.
bool update_leaves_leg(const ViewShape& v, const ast::UpdateStmt& s) {
  for (const ast::Assignment& a : s.assignments) {
    if (a.columns.size() != 1 || !a.value || a.value->kind != ast::ExprKind::kLiteral) continue;
    const ViewColumn* c = v.find(a.columns[0]);
    if (!c || c->base.empty() || !c->inverse.empty() || c->authored) continue;
    auto& given = static_cast<const ast::Literal&>(*a.value);
    for (auto& [col, lit] : constant_bindings(v))
      if (iequals(col, c->base) && (given.literal_kind == ast::LiteralKind::kNull || literals_equal(given, *lit) == false))
        return true;
  }
  return false;
}

// A write through a UNION / UNION ALL view: each leg is written as its own view. UPDATE
// and DELETE reach every leg (a leg whose predicate excludes the addressed rows changes
// nothing); an INSERT … VALUES sends each row to every leg whose `col = literal`
// discriminators it does not contradict (a row that fits no leg is refused). A leg over
// an inner join is written as its own CTE target (leg_as_cte_target). RETURNING and
// INSERT … SELECT are not written through yet.
void lower_set_op_write(PlanningContext& db, const ViewEntry& view,
                        const std::vector<std::shared_ptr<const ViewEntry>>& legs, const ast::Statement& stmt,
                        const std::vector<std::string>& caller_path, LoweredWrite& out) {
  auto refuse = [&](const std::string& why) {
    throw Error(StatusCode::kError, "cannot write through view '" + view.name + "': " + why);
  };
  std::vector<ViewShape> shapes;
  for (const auto& leg : legs) {
    shapes.push_back(analyze(db, *leg));
    shapes.back().db = &db;
    shapes.back().caller_path = caller_path;
  }
  auto has_returning = [&] {
    switch (stmt.kind) {
      case ast::StmtKind::kInsert: return !static_cast<const ast::InsertStmt&>(stmt).returning.empty();
      case ast::StmtKind::kUpdate: return !static_cast<const ast::UpdateStmt&>(stmt).returning.empty();
      default: return !static_cast<const ast::DeleteStmt&>(stmt).returning.empty();
    }
  };
  if (has_returning()) refuse("RETURNING through a set-operation view is not supported yet");
  if (stmt.kind != ast::StmtKind::kInsert) {
    for (size_t leg = 0; leg < shapes.size(); ++leg) {
      const ViewShape& v = shapes[leg];
      // An UPDATE that sets a leg's discriminator (`col = literal` in its WHERE) to a
      // literal it contradicts routes away from that leg (vu-operators.md, Union all).
      if (stmt.kind == ast::StmtKind::kUpdate && update_leaves_leg(v, static_cast<const ast::UpdateStmt&>(stmt)))
        continue;
      // A leg over an inner join composes through the join path (its own key capture).
      if (v.join()) {
        out.statements.push_back(leg_as_cte_target(v, stmt, leg));
        continue;
      }
      ast::StatementPtr copy = clone(stmt);
      if (copy->kind == ast::StmtKind::kUpdate) lower_update(static_cast<ast::UpdateStmt&>(*copy), v);
      else lower_delete(static_cast<ast::DeleteStmt&>(*copy), v);
      out.statements.push_back(std::move(copy));
    }
    return;
  }
  auto& ins = static_cast<const ast::InsertStmt&>(stmt);
  const bool plain_values = ins.source && ins.source->compounds.empty() && !ins.source->core.values.empty() &&
                            ins.source->order_by.empty() && !ins.source->limit && !ins.source->with;
  if (!plain_values) refuse("an INSERT through a set-operation view needs a VALUES source (each row is routed to its legs)");
  if (!ins.upserts.empty()) refuse("ON CONFLICT through a set-operation view is not supported yet");
  std::vector<std::string> cols = ins.columns;
  if (cols.empty())
    for (auto& c : shapes.front().columns) cols.push_back(c.name);
  const auto& rows = ins.source->core.values;
  std::vector<bool> placed(rows.size(), false);
  for (size_t leg = 0; leg < shapes.size(); ++leg) {
    const ViewShape& v = shapes[leg];
    std::vector<size_t> mine;
    for (size_t r = 0; r < rows.size(); ++r)
      if (row_fits_leg(v, cols, rows[r])) mine.push_back(r);
    if (mine.empty()) continue;
    ast::StatementPtr copy = clone(stmt);
    auto& leg_ins = static_cast<ast::InsertStmt&>(*copy);
    std::vector<std::vector<ExprPtr>> kept;
    for (size_t r : mine) {
      kept.push_back(std::move(leg_ins.source->core.values[r]));
      placed[r] = true;
    }
    leg_ins.source->core.values = std::move(kept);
    // A discriminator column is implied by the leg: it is not written.
    leg_ins.columns = cols;
    for (size_t i = cols.size(); i-- > 0;) {
      if (!leg_literal(v, cols[i])) continue;
      leg_ins.columns.erase(leg_ins.columns.begin() + static_cast<std::ptrdiff_t>(i));
      for (auto& row : leg_ins.source->core.values)
        if (i < row.size()) row.erase(row.begin() + static_cast<std::ptrdiff_t>(i));
    }
    if (v.join()) {
      out.statements.push_back(leg_as_cte_target(v, leg_ins, leg));
      continue;
    }
    lower_insert(leg_ins, v);
    out.statements.push_back(std::move(copy));
  }
  for (size_t r = 0; r < rows.size(); ++r)
    if (!placed[r])
      refuse("the inserted row " + std::to_string(r + 1) + " contradicts the selection predicate of every branch");
}

}  // namespace view_write

using namespace view_write;

namespace {

// A set operation's surface, from its legs' own: a data column is writable when every leg
// a write reaches writes it (one base trace only when they all trace the same base
// column); a membership flag is writable through its effect, with no base column. The
// legs an UPDATE / DELETE never reaches (an EXCEPT's right operand) need not be covered.
ViewWriteSurface describe_set_op_writes(PlanningContext& db, const ViewEntry& view, const SetOpBody& body) {
  ViewWriteSurface out;
  auto legs = body.leaves();
  std::vector<bool> reached(legs.size(), true);
  if (!body.flat_union()) {
    std::vector<std::shared_ptr<const ViewEntry>> fan;
    try {
      for (int side : body.fan_sides())
        for (auto& t : fan_targets(view, body, side)) fan.push_back(t.leg);
    } catch (const Error&) {
      return out;
    }
    for (size_t i = 0; i < legs.size(); ++i) reached[i] = std::find(fan.begin(), fan.end(), legs[i]) != fan.end();
    // Inserting into an operand that is itself a set operation has no single target leg.
    out.insert_refused = body.root.sides[0].tree || body.root.sides[1].tree;
  }
  std::vector<ViewWriteSurface> parts;
  for (const auto& leg : legs) {
    parts.push_back(describe_view_writes(db, *leg));
    if (!parts.back().ok || parts.back().names.size() != body.data) return ViewWriteSurface{};
  }
  out.names = body.names;
  out.sites.resize(out.names.size());
  const size_t first = std::find(reached.begin(), reached.end(), true) - reached.begin();
  for (size_t i = 0; i < body.data && first < parts.size(); ++i) {
    bool all = true, same = true;
    for (size_t p = 0; p < parts.size(); ++p) {
      if (!reached[p]) continue;
      const auto& site = parts[p].sites[i];
      all = all && site.table;
      same = same && site.table == parts[first].sites[i].table && site.column == parts[first].sites[i].column;
    }
    if (!all) continue;
    out.sites[i] = parts[first].sites[i];
    if (!same) out.sites[i].column = -1;
  }
  // A leg neither reached nor a flagged operand of its own (a flag-less EXCEPT's right
  // operand) is never written: it is no target.
  const size_t left_legs = body.leaves(0).size();
  auto flagged_leg = [&](int side) { return !body.flags[side].empty() && body.root.sides[side].leg; };
  int offset = 0;
  std::vector<int> side_offset;
  for (size_t p = 0; p < parts.size(); ++p) {
    side_offset.push_back(offset);
    const bool touched = reached[p] || flagged_leg(p < left_legs ? 0 : 1);
    for (auto side : parts[p].sides) {
      side.optional = side.optional || !reached[p];
      out.sides.push_back(side);
    }
    offset += static_cast<int>(parts[p].sides.size());
    if (!touched) continue;
    for (auto site : parts[p].filled) {
      site.side += side_offset[p];
      out.filled.push_back(site);
    }
    // Coverage is judged per leg: a leg's columns are the set operation's, on its sides.
    for (auto site : parts[p].reach) {
      site.side += side_offset[p];
      out.reach.push_back(site);
    }
    for (auto site : parts[p].inserted) {
      site.side += side_offset[p];
      out.inserted.push_back(site);
    }
  }
  // A flag's site: its operand's first leg's first table, with no base column.
  for (int side = 0; side < 2; ++side) {
    if (body.flags[side].empty()) continue;
    auto mine = body.leaves(side);
    size_t p = std::find(legs.begin(), legs.end(), mine.front()) - legs.begin();
    if (parts[p].sides.empty()) continue;
    for (size_t i = body.data; i < out.names.size(); ++i)
      if (iequals(out.names[i], body.flags[side])) out.sites[i] = {parts[p].sides.front().table, -1, side_offset[p]};
  }
  out.ok = true;
  return out;
}

}  // namespace

ViewWriteSurface describe_view_writes(PlanningContext& db, const ViewEntry& view) {
  ViewWriteSurface out;
  std::optional<SetOpBody> body;
  try {
    body = set_op_body(db, view);
  } catch (const Error&) {
    return out;
  }
  if (body) return describe_set_op_writes(db, view, *body);
  ViewShape v;
  try {
    v = analyze(db, view);
  } catch (const Error&) {
    return out;
  }
  using Site = ViewWriteSurface::Site;
  for (auto& c : v.columns) out.names.push_back(c.name);
  out.sites.resize(v.columns.size());
  if (v.join()) {
    for (size_t i = 0; i < v.columns.size(); ++i) {
      const ViewColumn& c = v.columns[i];
      if (c.authored) {
        // Writable through its puts: one put is its base trace; several have none.
        int owner = -1, column = -1;
        for (size_t side = 0; side < v.sides.size() && owner < 0; ++side)
          if ((column = v.sides[side].find(c.authored->front().name)) >= 0) owner = static_cast<int>(side);
        if (owner >= 0) out.sites[i] = {v.sides[owner].table, c.authored->size() == 1 ? column : -1, owner};
        continue;
      }
      // An existence flag writes through an effect: updatable, no base column.
      if (c.existence_side >= 0) out.sites[i] = {v.sides[c.existence_side].table, -1, c.existence_side};
      if (!c.base.empty()) out.sites[i] = {v.sides[c.side].table, v.sides[c.side].find(c.base), c.side};
    }
    // A join key class is filled when one member is written or declares a DEFAULT.
    for (auto& cls : v.classes) {
      if (!v.shares_keys()) break;
      bool fed = false;
      for (auto& [side, col] : cls) {
        const ColumnSchema& cs = v.sides[side].table->schema.columns[col];
        fed = fed || (cs.default_expr && !cs.generated());
        for (auto& s : out.sites) fed = fed || (s.table && s.side == side && s.column == col);
      }
      if (fed)
        for (auto& [side, col] : cls) out.filled.push_back({v.sides[side].table, col, side});
    }
    for (auto& s : v.sides) out.sides.push_back({s.table, s.padded});
    out.insert_refused = !v.join_key_exposed_twice().empty();
    for (size_t i = 0; i < out.sites.size(); ++i) {
      const Site& site = out.sites[i];
      if (!site.table || site.column < 0) continue;
      out.reach.push_back(site);
      // A join insert writes supplied values verbatim: not through an inverse, and not
      // through authored puts (deferred).
      if (v.columns[i].inverse.empty() && !v.columns[i].authored) out.inserted.push_back(site);
    }
    out.ok = true;
    return out;
  }
  // The source's own sites: the table's columns, or (a view over a view) its surface.
  std::vector<std::string> source_names = v.source_columns;
  std::vector<Site> source_sites;
  std::vector<Site> inner_inserted;  // a view over a view: what the inner view's INSERT writes
  if (v.table) {
    for (size_t i = 0; i < source_names.size(); ++i) source_sites.push_back({v.table, static_cast<int>(i), 0});
    out.sides.push_back({v.table, false});
  } else {
    ResolvedRelation rel = db.resolve_relation(v.source.schema, v.source.name);
    if (!rel.view) return out;
    ViewWriteSurface inner = describe_view_writes(db, *rel.view);
    if (!inner.ok) return out;
    source_names = inner.names;
    source_sites = inner.sites;
    out.filled = inner.filled;
    out.sides = inner.sides;
    inner_inserted = inner.inserted;
  }
  auto site_of = [&](const std::string& name) -> Site {
    for (size_t i = 0; i < source_names.size(); ++i)
      if (iequals(source_names[i], name)) return source_sites[i];
    return {};
  };
  for (size_t i = 0; i < v.columns.size(); ++i) {
    const ViewColumn& c = v.columns[i];
    if (c.authored) {
      // Writable through its puts (one put is its base trace; several have none), and
      // every put target is filled by an INSERT.
      Site first = site_of(c.authored->front().name);
      if (c.authored->size() > 1) first.column = -1;
      out.sites[i] = first;
      for (const ast::NamedExpr& p : *c.authored) out.filled.push_back(site_of(p.name));
      continue;
    }
    if (!c.base.empty()) out.sites[i] = site_of(c.base);
  }
  auto inner_inserts = [&](const Site& site) {
    if (v.table) return true;
    return std::any_of(inner_inserted.begin(), inner_inserted.end(), [&](const Site& x) {
      return x.table == site.table && x.column == site.column && x.side == site.side;
    });
  };
  for (size_t i = 0; i < out.sites.size(); ++i) {
    const Site& site = out.sites[i];
    if (!site.table || site.column < 0) continue;
    out.reach.push_back(site);
    if (v.columns[i].inverse.empty() && inner_inserts(site)) out.inserted.push_back(site);
  }
  for (auto& [col, lit] : constant_bindings(v)) out.filled.push_back(site_of(col));
  if (v.defaults)
    for (const ast::NamedExpr& d : *v.defaults) {
      const ViewColumn* c = v.find(d.name);
      out.filled.push_back(site_of(c && !c->base.empty() ? c->base : d.name));
    }
  out.ok = true;
  return out;
}

}  // namespace quereus
