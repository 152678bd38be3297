// The access-form recognizers (access_forms.h).
#include "planner/access_forms.h"

#include "catalog/function.h"
#include "common/strings.h"
#include "parser/ast_walk.h"

namespace quereus {

namespace {

// The form a LIKE pattern spells with its wildcards at the ends only: 'lit%' → prefix,
// '%lit%' → contains; `lit` (non-empty, no wildcard) in *lit.
const char* like_form(const std::string& pattern, std::string* lit) {
  if (pattern.size() < 2 || pattern.back() != '%') return nullptr;
  const bool lead = pattern.front() == '%';
  std::string body = pattern.substr(lead ? 1 : 0, pattern.size() - (lead ? 2 : 1));
  if (body.empty() || body.find_first_of("%_") != std::string::npos) return nullptr;
  *lit = std::move(body);
  return lead ? "contains" : "prefix";
}

}  // namespace

std::optional<FormMatch> recognize_form(const ScalarExpr& e) {
  if (e.kind == ScalarKind::kBinary) {
    auto& b = static_cast<const BinaryScalar&>(e);
    if (b.op == ast::BinaryOp::kLike && !b.escape && b.right->kind == ScalarKind::kLiteral &&
        b.left->kind == ScalarKind::kColumn) {
      const Value& v = static_cast<const LiteralScalar&>(*b.right).value;
      std::string lit;
      const char* form = v.type() == ValueType::kText ? like_form(v.str(), &lit) : nullptr;
      if (!form) return std::nullopt;
      return FormMatch{form, b.left.get(), std::make_shared<LiteralScalar>(Value::Text(lit))};
    }
    // `instr(col, v) > 0` / `0 < instr(col, v)`.
    const ScalarExpr* call = nullptr;
    const ScalarExpr* zero = nullptr;
    if (b.op == ast::BinaryOp::kGt) call = b.left.get(), zero = b.right.get();
    else if (b.op == ast::BinaryOp::kLt) call = b.right.get(), zero = b.left.get();
    if (!call || call->kind != ScalarKind::kFunction || zero->kind != ScalarKind::kLiteral) return std::nullopt;
    const Value& z = static_cast<const LiteralScalar&>(*zero).value;
    if (z.type() != ValueType::kInteger || z.as_int() != 0) return std::nullopt;
    auto& f = static_cast<const FunctionScalar&>(*call);
    if (!f.fn || f.fn->name != "instr" || f.args.size() != 2 || f.args[0]->kind != ScalarKind::kColumn)
      return std::nullopt;
    return FormMatch{"contains", f.args[0].get(), f.args[1]};
  }
  if (e.kind == ScalarKind::kFunction) {
    auto& f = static_cast<const FunctionScalar&>(e);
    if (!f.fn || f.fn->access_form.empty()) return std::nullopt;
    const size_t c = static_cast<size_t>(f.fn->form_column_arg), v = static_cast<size_t>(f.fn->form_value_arg);
    if (c >= f.args.size() || v >= f.args.size() || f.args[c]->kind != ScalarKind::kColumn) return std::nullopt;
    return FormMatch{f.fn->access_form, f.args[c].get(), f.args[v]};
  }
  return std::nullopt;
}

namespace {

bool reads_nothing(const ast::Expr& e) {
  return !ast::any_expr_deep(e, [](const ast::Expr& x) {
    return x.kind == ast::ExprKind::kColumn || x.kind == ast::ExprKind::kSubquery ||
           x.kind == ast::ExprKind::kExists || x.kind == ast::ExprKind::kIn;
  });
}

const ast::ColumnRef* as_column(const ast::Expr& e) {
  return e.kind == ast::ExprKind::kColumn ? &static_cast<const ast::ColumnRef&>(e) : nullptr;
}

}  // namespace

std::optional<AstFormMatch> recognize_form(
    const ast::Expr& e, const std::function<const ScalarFunction*(const std::string&, int)>& find_function) {
  if (e.kind == ast::ExprKind::kBinary) {
    auto& b = static_cast<const ast::BinaryExpr&>(e);
    if (b.op == ast::BinaryOp::kLike && !b.escape && b.right->kind == ast::ExprKind::kLiteral) {
      auto& l = static_cast<const ast::Literal&>(*b.right);
      const ast::ColumnRef* col = as_column(*b.left);
      std::string lit;
      const char* form = l.literal_kind == ast::LiteralKind::kString ? like_form(l.text, &lit) : nullptr;
      if (!col || !form) return std::nullopt;
      return AstFormMatch{form, col};
    }
    const ast::Expr* call = nullptr;
    const ast::Expr* zero = nullptr;
    if (b.op == ast::BinaryOp::kGt) call = b.left.get(), zero = b.right.get();
    else if (b.op == ast::BinaryOp::kLt) call = b.right.get(), zero = b.left.get();
    if (!call || call->kind != ast::ExprKind::kFunction || zero->kind != ast::ExprKind::kLiteral) return std::nullopt;
    auto& z = static_cast<const ast::Literal&>(*zero);
    if (z.literal_kind != ast::LiteralKind::kInteger || z.text != "0") return std::nullopt;
    auto& f = static_cast<const ast::FunctionCall&>(*call);
    if (to_lower(f.name) != "instr" || f.args.size() != 2 || f.over || f.distinct) return std::nullopt;
    const ast::ColumnRef* col = as_column(*f.args[0]);
    if (!col || !reads_nothing(*f.args[1])) return std::nullopt;
    return AstFormMatch{"contains", col};
  }
  if (e.kind == ast::ExprKind::kFunction) {
    auto& f = static_cast<const ast::FunctionCall&>(e);
    if (f.over || f.distinct || f.star) return std::nullopt;
    const ScalarFunction* fn = find_function(to_lower(f.name), static_cast<int>(f.args.size()));
    if (!fn || fn->access_form.empty()) return std::nullopt;
    const size_t c = static_cast<size_t>(fn->form_column_arg);
    if (c >= f.args.size()) return std::nullopt;
    const ast::ColumnRef* col = as_column(*f.args[c]);
    if (!col) return std::nullopt;
    for (size_t i = 0; i < f.args.size(); ++i)
      if (i != c && !reads_nothing(*f.args[i])) return std::nullopt;
    return AstFormMatch{fn->access_form, col};
  }
  return std::nullopt;
}

}  // namespace quereus
