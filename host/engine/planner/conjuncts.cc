// Predicates as lists of AND-ed conjuncts (declared in planner/scalar_expr.h).
#include "planner/scalar_expr.h"

namespace quereus {

void split_conjuncts(const ScalarPtr& e, std::vector<ScalarPtr>& out) {
  if (e->kind == ScalarKind::kBinary) {
    auto& b = static_cast<const BinaryScalar&>(*e);
    if (b.op == ast::BinaryOp::kAnd) {
      split_conjuncts(b.left, out);
      split_conjuncts(b.right, out);
      return;
    }
  }
  if (e->kind == ScalarKind::kBetween) {
    // x BETWEEN a AND b is exactly x >= a AND x <= b, which the access plan can seek.
    auto& b = static_cast<const BetweenScalar&>(*e);
    if (!b.negated) {
      auto ge = std::make_shared<BinaryScalar>(ast::BinaryOp::kGe, b.operand, b.low);
      auto le = std::make_shared<BinaryScalar>(ast::BinaryOp::kLe, b.operand, b.high);
      ge->compare_collation = b.low_collation;
      le->compare_collation = b.high_collation;
      for (auto* c : {ge.get(), le.get()}) {
        c->type = QRS_LT_BOOLEAN;
        c->duration_order = b.duration_order;
      }
      out.push_back(ge);
      out.push_back(le);
      return;
    }
  }
  out.push_back(e);
}

ScalarPtr conjoin(const std::vector<ScalarPtr>& conjuncts) {
  if (conjuncts.empty()) return nullptr;
  ScalarPtr pred = conjuncts[0];
  for (size_t i = 1; i < conjuncts.size(); ++i) {
    auto b = std::make_shared<BinaryScalar>(ast::BinaryOp::kAnd, pred, conjuncts[i]);
    b->type = QRS_LT_BOOLEAN;
    pred = b;
  }
  return pred;
}

}  // namespace quereus
