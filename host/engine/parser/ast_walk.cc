// A deep walk over expressions and the subqueries inside them (see ast_walk.h).
#include "parser/ast_walk.h"

#include "parser/ast_visit.h"

namespace quereus::ast {

namespace {

using Pred = std::function<bool(const Expr&)>;

bool in_select(const Select& s, const Pred& pred);

bool in_expr(const Expr* e, const Pred& pred) { return e && any_expr_deep(*e, pred); }

bool in_source(const TableSource& src, const Pred& pred) {
  switch (src.kind) {
    case TableSource::Kind::kSubquery: return src.subquery && in_select(*src.subquery, pred);
    case TableSource::Kind::kJoin:
      return (src.left && in_source(*src.left, pred)) || (src.right && in_source(*src.right, pred)) ||
             in_expr(src.on.get(), pred);
    case TableSource::Kind::kFunction:
      for (const auto& a : src.function_args)
        if (in_expr(a.get(), pred)) return true;
      return false;
    default: return false;
  }
}

bool in_core(const SelectCore& c, const Pred& pred) {
  if (c.nested && in_select(*c.nested, pred)) return true;
  for (const auto& rc : c.columns)
    if (in_expr(rc.expr.get(), pred)) return true;
  if (c.from && in_source(*c.from, pred)) return true;
  if (in_expr(c.where.get(), pred) || in_expr(c.having.get(), pred)) return true;
  for (const auto& g : c.group_by)
    if (in_expr(g.get(), pred)) return true;
  for (const auto& row : c.values)
    for (const auto& v : row)
      if (in_expr(v.get(), pred)) return true;
  return false;
}

bool in_select(const Select& s, const Pred& pred) {
  if (s.with)
    for (const auto& cte : s.with->ctes)
      if (cte.select && in_select(*cte.select, pred)) return true;
  if (in_core(s.core, pred)) return true;
  for (const auto& leg : s.compounds)
    if (in_core(leg.core, pred)) return true;
  for (const auto& o : s.order_by)
    if (in_expr(o.expr.get(), pred)) return true;
  return in_expr(s.limit.get(), pred) || in_expr(s.offset.get(), pred);
}

}  // namespace

bool any_expr_deep(const Expr& e, const Pred& pred) {
  if (pred(e)) return true;
  bool found = false;
  for_each_child(
      e, [&](const ExprPtr& x) { found = found || any_expr_deep(*x, pred); },
      [&](const Select& q) { found = found || in_select(q, pred); });
  return found;
}

bool any_expr_in_select(const Select& s, const std::function<bool(const Expr&)>& pred) { return in_select(s, pred); }

bool select_contains_subquery(const Select& s) {
  return in_select(s, [](const Expr& e) { return contains_subquery(e); });
}

namespace {

void sources_in_select(const Select& s, std::vector<const QualifiedName*>& out);

void sources_in_expr(const Expr* e, std::vector<const QualifiedName*>& out) {
  if (!e) return;
  for_each_child(
      *e, [&](const ExprPtr& x) { sources_in_expr(x.get(), out); },
      [&](const Select& q) { sources_in_select(q, out); });
}

void sources_in_source(const TableSource& t, std::vector<const QualifiedName*>& out) {
  switch (t.kind) {
    case TableSource::Kind::kTable: out.push_back(&t.table); break;
    case TableSource::Kind::kSubquery:
      if (t.subquery) sources_in_select(*t.subquery, out);
      break;
    case TableSource::Kind::kJoin:
      if (t.left) sources_in_source(*t.left, out);
      if (t.right) sources_in_source(*t.right, out);
      sources_in_expr(t.on.get(), out);
      break;
    case TableSource::Kind::kFunction:
      for (const auto& a : t.function_args) sources_in_expr(a.get(), out);
      break;
    default: break;
  }
}

void sources_in_core(const SelectCore& c, std::vector<const QualifiedName*>& out) {
  if (c.nested) sources_in_select(*c.nested, out);
  for (const auto& rc : c.columns) sources_in_expr(rc.expr.get(), out);
  if (c.from) sources_in_source(*c.from, out);
  sources_in_expr(c.where.get(), out);
  sources_in_expr(c.having.get(), out);
  for (const auto& g : c.group_by) sources_in_expr(g.get(), out);
  for (const auto& row : c.values)
    for (const auto& v : row) sources_in_expr(v.get(), out);
}

void sources_in_select(const Select& s, std::vector<const QualifiedName*>& out) {
  if (s.with)
    for (const auto& cte : s.with->ctes)
      if (cte.select) sources_in_select(*cte.select, out);
  sources_in_core(s.core, out);
  for (const auto& leg : s.compounds) sources_in_core(leg.core, out);
  for (const auto& o : s.order_by) sources_in_expr(o.expr.get(), out);
  sources_in_expr(s.limit.get(), out);
  sources_in_expr(s.offset.get(), out);
}

}  // namespace

void named_sources(const Select& s, std::vector<const QualifiedName*>& out) { sources_in_select(s, out); }
void named_sources(const SelectCore& c, std::vector<const QualifiedName*>& out) { sources_in_core(c, out); }

bool contains_parameter(const Expr& e) {
  return any_expr_deep(e, [](const Expr& x) { return x.kind == ExprKind::kParameter; });
}

bool contains_subquery(const Expr& e) {
  bool found = false;
  for_each_child(
      e, [&](const ExprPtr& x) { found = found || contains_subquery(*x); }, [&](const Select&) { found = true; });
  return found;
}

}  // namespace quereus::ast
