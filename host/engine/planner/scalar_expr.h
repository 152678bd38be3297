// Bound scalar expressions: what the planner makes of AST expressions once names,
// types and collations are resolved. Immutable; evaluated by runtime/scalar_eval.cc.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "catalog/function.h"
#include "parser/ast.h"
#include "quereus/abi.h"
#include "eval/exec_context.h"
#include "types/collation.h"
#include "types/conversions.h"
#include "types/patterns.h"
#include "types/value.h"

namespace quereus {

class RelNode;
class Operator;

enum class ScalarKind {
  kLiteral, kColumn, kParam, kUnary, kBinary, kAnd, kOr, kXor, kNot, kFunction, kCast,
  kCollate, kCase, kIn, kInSubquery, kExists, kSubquery, kBetween, kIsNull, kIs, kLike, kGlob,
};

// Where a value's collation comes from, in rising rank when a comparison resolves its
// collation (types.md, "Comparison collation resolution"): a defaulted column collation
// (a defaulted BINARY contributes nothing), a column declared with COLLATE, a COLLATE
// clause.
enum class CollationSource { kDefault, kDeclared, kExplicit };

class ScalarExpr;
using ScalarPtr = std::shared_ptr<const ScalarExpr>;

class ScalarExpr {
 public:
  explicit ScalarExpr(ScalarKind k) : kind(k) {}
  virtual ~ScalarExpr() = default;
  virtual Value eval(const EvalEnv& env) const = 0;
  // True when the value cannot change within one execution (no columns, no params
  // that change, no non-deterministic functions, no correlated subqueries).
  virtual bool is_constant() const { return false; }
  // The operand slots of this expression, in evaluation order, for generic walkers
  // (constant folding, query_plan rows). A subquery's body is not an operand.
  virtual std::vector<const ScalarPtr*> operands() const { return {}; }

  ScalarKind kind;
  qrs_logical_type type = QRS_LT_ANY;      // plan-time type
  const Collation* collation = nullptr;    // null: BINARY
  bool explicit_collation = false;         // from a COLLATE clause
  bool declared_collation = false;         // a column's declared COLLATE (not a default)

  CollationSource collation_source() const {
    return explicit_collation ? CollationSource::kExplicit
                              : declared_collation ? CollationSource::kDeclared : CollationSource::kDefault;
  }
  void set_collation(const Collation* c, CollationSource source) {
    collation = c;
    explicit_collation = source == CollationSource::kExplicit;
    declared_collation = source == CollationSource::kDeclared;
  }
};
struct LiteralScalar : ScalarExpr {
  explicit LiteralScalar(Value v) : ScalarExpr(ScalarKind::kLiteral), value(std::move(v)) {}
  Value eval(const EvalEnv&) const override { return value; }
  bool is_constant() const override { return true; }
  Value value;
};

// A column of the current row (level 0) or of an enclosing query's row (level ≥ 1).
struct ColumnScalar : ScalarExpr {
  ColumnScalar(int level, int slot, int attr_id)
      : ScalarExpr(ScalarKind::kColumn), level(level), slot(slot), attr_id(attr_id) {}
  Value eval(const EvalEnv& env) const override;
  int level, slot, attr_id;
};

// The value `e` evaluates to, read where it is held when `e` is a column or a literal
// (no copy; valid while the row lives); null for any other expression, which must be
// evaluated. The hot paths (comparisons, projections, aggregate arguments) use it.
inline const Value* value_in_place(const ScalarExpr& e, const EvalEnv& env) {
  if (e.kind == ScalarKind::kColumn) {
    auto& c = static_cast<const ColumnScalar&>(e);
    const EvalEnv* at = &env;
    for (int i = 0; i < c.level; ++i) at = at->outer;
    return &(*at->row)[c.slot];
  }
  if (e.kind == ScalarKind::kLiteral) return &static_cast<const LiteralScalar&>(e).value;
  return nullptr;
}

struct ParamScalar : ScalarExpr {
  explicit ParamScalar(int index) : ScalarExpr(ScalarKind::kParam), index(index) {}
  Value eval(const EvalEnv& env) const override;
  bool is_constant() const override { return true; }
  int index;         // 1-based; 0 for a named parameter
  std::string name;  // named parameter without its sigil
};

struct UnaryScalar : ScalarExpr {
  UnaryScalar(ast::UnaryOp op, ScalarPtr e) : ScalarExpr(ScalarKind::kUnary), op(op), operand(std::move(e)) {}
  Value eval(const EvalEnv& env) const override;
  bool is_constant() const override { return operand->is_constant(); }
  ast::UnaryOp op;
  ScalarPtr operand;
  std::vector<const ScalarPtr*> operands() const override { return {&operand}; }
};

struct BinaryScalar : ScalarExpr {
  BinaryScalar(ast::BinaryOp op, ScalarPtr l, ScalarPtr r)
      : ScalarExpr(ScalarKind::kBinary), op(op), left(std::move(l)), right(std::move(r)) {}
  Value eval(const EvalEnv& env) const override;
  bool is_constant() const override { return left->is_constant() && right->is_constant(); }
  ast::BinaryOp op;
  ScalarPtr left, right, escape;
  std::vector<const ScalarPtr*> operands() const override {
    return escape ? std::vector<const ScalarPtr*>{&left, &right, &escape} : std::vector<const ScalarPtr*>{&left, &right};
  }
  const Collation* compare_collation = nullptr;  // resolved for comparisons
  bool duration_order = false;  // a TIMESPAN operand: durations compare by elapsed time
};

struct FunctionScalar : ScalarExpr {
  FunctionScalar() : ScalarExpr(ScalarKind::kFunction) {}
  Value eval(const EvalEnv& env) const override;
  bool is_constant() const override;
  const ScalarFunction* fn = nullptr;
  std::vector<ScalarPtr> args;
  std::vector<const ScalarPtr*> operands() const override {
    std::vector<const ScalarPtr*> out;
    for (const auto& a : args) out.push_back(&a);
    return out;
  }
  // Comparison builtins (ScalarFunction::compare_call): each argument's key conversion
  // and the group's collation.
  std::vector<qrs_logical_type> key_casts;
  const Collation* compare_collation = nullptr;
};

struct CastScalar : ScalarExpr {
  CastScalar() : ScalarExpr(ScalarKind::kCast) {}
  Value eval(const EvalEnv& env) const override;
  bool is_constant() const override { return operand->is_constant(); }
  ScalarPtr operand;
  qrs_logical_type target = QRS_LT_ANY;
  // Inserted by the planner for a comparison (type_coercion.h): converts with
  // comparison_value (blank text against a number is NULL), not cast_value.
  bool comparison = false;
  std::vector<const ScalarPtr*> operands() const override { return {&operand}; }
};

// `x COLLATE c`: the operand's value, with the collation of the clause attached.
struct CollateScalar : ScalarExpr {
  CollateScalar() : ScalarExpr(ScalarKind::kCollate) {}
  Value eval(const EvalEnv& env) const override { return operand->eval(env); }
  bool is_constant() const override { return operand->is_constant(); }
  ScalarPtr operand;
  std::vector<const ScalarPtr*> operands() const override { return {&operand}; }
};

struct CaseScalar : ScalarExpr {
  CaseScalar() : ScalarExpr(ScalarKind::kCase) {}
  Value eval(const EvalEnv& env) const override;
  ScalarPtr base;
  std::vector<std::pair<ScalarPtr, ScalarPtr>> whens;
  ScalarPtr else_expr;
  std::vector<const Collation*> when_collations;  // with a base: each WHEN's comparison collation
  std::vector<const ScalarPtr*> operands() const override {
    std::vector<const ScalarPtr*> out;
    if (base) out.push_back(&base);
    for (const auto& [w, t] : whens) {
      out.push_back(&w);
      out.push_back(&t);
    }
    if (else_expr) out.push_back(&else_expr);
    return out;
  }
};

struct InListScalar : ScalarExpr {
  InListScalar() : ScalarExpr(ScalarKind::kIn) {}
  Value eval(const EvalEnv& env) const override;
  bool negated = false;
  ScalarPtr operand;
  std::vector<ScalarPtr> list;
  std::vector<const ScalarPtr*> operands() const override {
    std::vector<const ScalarPtr*> out{&operand};
    for (const auto& x : list) out.push_back(&x);
    return out;
  }
  bool duration_order = false;  // a TIMESPAN operand: durations compare by elapsed time
};

// A subquery used as a value: scalar (first column of first row), EXISTS, or IN.
struct SubqueryScalar : ScalarExpr {
  explicit SubqueryScalar(ScalarKind k) : ScalarExpr(k) {}
  Value eval(const EvalEnv& env) const override;
  // IN: the distinct non-NULL member values (after value_cast), for a seek that takes them
  // as its IN list. Uncorrelated subqueries only: the rows are those eval caches.
  std::vector<Value> member_values(const EvalEnv& env) const;
  std::shared_ptr<const RelNode> plan;
  bool correlated = false;
  bool negated = false;   // NOT EXISTS / NOT IN
  ScalarPtr operand;      // IN
  std::vector<const ScalarPtr*> operands() const override {
    return operand ? std::vector<const ScalarPtr*>{&operand} : std::vector<const ScalarPtr*>{};
  }
  // IN: the plan-time comparison coercion, applied per row (type_coercion.h).
  qrs_logical_type probe_cast = QRS_LT_ANY, value_cast = QRS_LT_ANY;
  bool duration_order = false;  // IN over a TIMESPAN side: durations compare by elapsed time
  // Uncorrelated results are computed once per execution.
  mutable uint64_t cache_generation = 0;
  mutable std::vector<Row> cache;
  mutable MemoryCharge cache_memory;  // cache
  // IN over a large uncorrelated result: its non-NULL values sorted under the site's
  // order, searched per probe (rebuilt with the cache), and whether a NULL was among them.
  mutable uint64_t sorted_generation = 0;
  mutable std::vector<Value> sorted;
  mutable bool sorted_saw_null = false;
  // The operator tree of `plan`, built once and re-opened per evaluation (a correlated
  // subquery runs once per outer row). `op_busy` guards against re-entrant evaluation.
  mutable std::shared_ptr<Operator> op;
  mutable bool op_busy = false;
  // Correlated and marked by the subquery_cache pass (a read-only statement, a result
  // that depends on nothing but the outer columns read): the last evaluation's rows are
  // kept with the values of `memo_inputs` ((frame, slot) from the row it is evaluated on)
  // and replayed while they are unchanged within one execution.
  bool memo = false;
  std::vector<std::pair<int, int>> memo_inputs;
  mutable bool memo_kept = false;
  mutable uint64_t memo_generation = 0;
  mutable std::vector<Value> memo_key;
  mutable std::vector<Row> memo_rows;
  mutable MemoryCharge memo_memory;
};

struct BetweenScalar : ScalarExpr {
  BetweenScalar() : ScalarExpr(ScalarKind::kBetween) {}
  Value eval(const EvalEnv& env) const override;
  bool negated = false;
  ScalarPtr operand, low, high;
  std::vector<const ScalarPtr*> operands() const override { return {&operand, &low, &high}; }
  // Each bound compares under its own resolved collation (BETWEEN is `>= low AND <= high`).
  const Collation* low_collation = nullptr;
  const Collation* high_collation = nullptr;
  bool duration_order = false;  // a TIMESPAN operand: durations compare by elapsed time
};

struct IsNullScalar : ScalarExpr {
  IsNullScalar(ScalarPtr e, bool negated) : ScalarExpr(ScalarKind::kIsNull), negated(negated), operand(std::move(e)) {}
  Value eval(const EvalEnv& env) const override;
  bool is_constant() const override { return operand->is_constant(); }
  bool negated;
  ScalarPtr operand;
  std::vector<const ScalarPtr*> operands() const override { return {&operand}; }
};

// Splits a predicate into its AND-ed conjuncts (x BETWEEN a AND b counts as two).
void split_conjuncts(const ScalarPtr& e, std::vector<ScalarPtr>& out);
// The AND of `conjuncts` (typed BOOLEAN); null when there are none.
ScalarPtr conjoin(const std::vector<ScalarPtr>& conjuncts);
// Whether `e` reads nothing but literals and deterministic functions (no column, no
// parameter, no subquery): its value is known when the statement is planned.
bool is_closed(const ScalarExpr& e);

}  // namespace quereus
