// A deep walk over expressions and the subqueries inside them (see ast_walk.h).
#include "parser/ast_walk.h"

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
  switch (e.kind) {
    case ExprKind::kUnary: return in_expr(static_cast<const UnaryExpr&>(e).operand.get(), pred);
    case ExprKind::kBinary: {
      auto& b = static_cast<const BinaryExpr&>(e);
      return in_expr(b.left.get(), pred) || in_expr(b.right.get(), pred) || in_expr(b.escape.get(), pred);
    }
    case ExprKind::kFunction:
      for (const auto& a : static_cast<const FunctionCall&>(e).args)
        if (in_expr(a.get(), pred)) return true;
      return false;
    case ExprKind::kCast: return in_expr(static_cast<const CastExpr&>(e).operand.get(), pred);
    case ExprKind::kCollate: return in_expr(static_cast<const CollateExpr&>(e).operand.get(), pred);
    case ExprKind::kCase: {
      auto& c = static_cast<const CaseExpr&>(e);
      for (const auto& [w, t] : c.whens)
        if (in_expr(w.get(), pred) || in_expr(t.get(), pred)) return true;
      return in_expr(c.base.get(), pred) || in_expr(c.else_expr.get(), pred);
    }
    case ExprKind::kBetween: {
      auto& b = static_cast<const BetweenExpr&>(e);
      return in_expr(b.operand.get(), pred) || in_expr(b.low.get(), pred) || in_expr(b.high.get(), pred);
    }
    case ExprKind::kIn: {
      auto& in = static_cast<const InExpr&>(e);
      if (in_expr(in.operand.get(), pred)) return true;
      for (const auto& x : in.list)
        if (in_expr(x.get(), pred)) return true;
      return in.subquery && in_select(*in.subquery, pred);
    }
    case ExprKind::kExists: {
      auto& x = static_cast<const ExistsExpr&>(e);
      return x.subquery && in_select(*x.subquery, pred);
    }
    case ExprKind::kSubquery: {
      auto& x = static_cast<const SubqueryExpr&>(e);
      return x.subquery && in_select(*x.subquery, pred);
    }
    case ExprKind::kIsNull: return in_expr(static_cast<const IsNullExpr&>(e).operand.get(), pred);
    default: return false;
  }
}

}  // namespace quereus::ast
