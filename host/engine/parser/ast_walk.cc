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

bool contains_subquery(const Expr& e) {
  bool found = false;
  for_each_child(
      e, [&](const ExprPtr& x) { found = found || contains_subquery(*x); }, [&](const Select&) { found = true; });
  return found;
}

}  // namespace quereus::ast
