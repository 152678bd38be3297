// The one place that knows which expressions and subqueries each kind of expression node
// holds. Every walk over expressions (deep searches, DDL rewrites such as RENAME, the
// determinism and dependency checks, view-write analysis) goes through for_each_child, so
// a node kind or a field added to the AST is visited everywhere at once.
#pragma once

#include <type_traits>

#include "parser/ast.h"

namespace quereus::ast {

namespace visit_detail {
template <class T, class E>
using like_t = std::conditional_t<std::is_const_v<E>, const T, T>;
template <class T, class E>
like_t<T, E>& as(E& e) {
  return static_cast<like_t<T, E>&>(e);
}
}  // namespace visit_detail

// Calls on_expr(child) for each direct, non-null sub-expression of `e` — operands, function
// arguments, CASE arms, IN lists, LIKE … ESCAPE, and a window call's PARTITION BY,
// ORDER BY and frame offsets — and on_select(subquery) for each subquery `e` holds
// (IN (select …), EXISTS, a scalar subquery), in the order they are written. A child is
// passed as its owning ExprPtr, so a rewrite may replace it; `E` is ast::Expr or
// const ast::Expr, and what is passed on has the same constness.
template <class E, class OnExpr, class OnSelect>
void for_each_child(E& e, OnExpr&& on_expr, OnSelect&& on_select) {
  using visit_detail::as;
  auto sub = [&](auto& p) {
    if (p) on_expr(p);
  };
  auto query = [&](auto& q) {
    if (q) on_select(*q);
  };
  switch (e.kind) {
    case ExprKind::kUnary: sub(as<UnaryExpr>(e).operand); break;
    case ExprKind::kBinary: {
      auto& b = as<BinaryExpr>(e);
      sub(b.left), sub(b.right), sub(b.escape);
      break;
    }
    case ExprKind::kFunction: {
      auto& f = as<FunctionCall>(e);
      for (auto& a : f.args) sub(a);
      if (f.over) {
        for (auto& p : f.over->partition_by) sub(p);
        for (auto& o : f.over->order_by) sub(o.expr);
        if (f.over->frame) sub(f.over->frame->start.offset), sub(f.over->frame->end.offset);
      }
      break;
    }
    case ExprKind::kCast: sub(as<CastExpr>(e).operand); break;
    case ExprKind::kCollate: sub(as<CollateExpr>(e).operand); break;
    case ExprKind::kCase: {
      auto& c = as<CaseExpr>(e);
      sub(c.base);
      for (auto& [w, t] : c.whens) sub(w), sub(t);
      sub(c.else_expr);
      break;
    }
    case ExprKind::kBetween: {
      auto& b = as<BetweenExpr>(e);
      sub(b.operand), sub(b.low), sub(b.high);
      break;
    }
    case ExprKind::kIn: {
      auto& in = as<InExpr>(e);
      sub(in.operand);
      for (auto& x : in.list) sub(x);
      query(in.subquery);
      break;
    }
    case ExprKind::kExists: query(as<ExistsExpr>(e).subquery); break;
    case ExprKind::kSubquery: query(as<SubqueryExpr>(e).subquery); break;
    case ExprKind::kIsNull: sub(as<IsNullExpr>(e).operand); break;
    default: break;  // leaves: literals, columns, parameters, …
  }
}

// for_each_child without the subqueries.
template <class E, class OnExpr>
void for_each_child_expr(E& e, OnExpr&& on_expr) {
  for_each_child(e, on_expr, [](auto&) {});
}

}  // namespace quereus::ast
