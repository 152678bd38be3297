// Rewriting a scalar expression's column references (planner/scalar_rewrite.h).
#include "planner/scalar_rewrite.h"

#include <typeinfo>

namespace quereus {

namespace {

template <class T>
std::shared_ptr<ScalarExpr> copy_as(const ScalarExpr& e) {
  return std::make_shared<T>(static_cast<const T&>(e));
}

// A copy of `e` whose operand slots the caller then replaces; null for a class not known
// here (a rewrite through it is refused).
std::shared_ptr<ScalarExpr> copy_node(const ScalarExpr& e) {
  const std::type_info& t = typeid(e);
  if (t == typeid(BinaryScalar)) return copy_as<BinaryScalar>(e);
  if (t == typeid(UnaryScalar)) return copy_as<UnaryScalar>(e);
  if (t == typeid(FunctionScalar)) return copy_as<FunctionScalar>(e);
  if (t == typeid(CastScalar)) return copy_as<CastScalar>(e);
  if (t == typeid(CollateScalar)) return copy_as<CollateScalar>(e);
  if (t == typeid(CaseScalar)) return copy_as<CaseScalar>(e);
  if (t == typeid(InListScalar)) return copy_as<InListScalar>(e);
  if (t == typeid(BetweenScalar)) return copy_as<BetweenScalar>(e);
  if (t == typeid(IsNullScalar)) return copy_as<IsNullScalar>(e);
  if (t == typeid(SubqueryScalar)) return copy_as<SubqueryScalar>(e);
  return nullptr;
}

}  // namespace

std::shared_ptr<ColumnScalar> copy_column(const ColumnScalar& c) { return std::make_shared<ColumnScalar>(c); }

ScalarPtr rewrite_columns(const ScalarPtr& e, const ColumnRewrite& column) {
  const ScalarExpr& x = *e;
  if (x.kind == ScalarKind::kColumn) return column(static_cast<const ColumnScalar&>(x), e);
  if ((x.kind == ScalarKind::kInSubquery || x.kind == ScalarKind::kExists || x.kind == ScalarKind::kSubquery) &&
      static_cast<const SubqueryScalar&>(x).correlated)
    return nullptr;
  std::vector<ScalarPtr> ops;
  bool changed = false;
  for (const ScalarPtr* o : x.operands()) {
    ScalarPtr r = rewrite_columns(*o, column);
    if (!r) return nullptr;
    changed = changed || r != *o;
    ops.push_back(std::move(r));
  }
  if (!changed) return e;
  std::shared_ptr<ScalarExpr> n = copy_node(x);
  if (!n) return nullptr;
  std::vector<const ScalarPtr*> slots = n->operands();
  for (size_t i = 0; i < slots.size(); ++i) *const_cast<ScalarPtr*>(slots[i]) = ops[i];
  return n;
}

}  // namespace quereus
