// Runtime: evaluation of bound scalar expressions (planner/scalar_expr.h).
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>

#include "common/limits.h"
#include "common/status.h"
#include "types/json_value.h"
#include "types/temporal.h"
#include "planner/rel_node.h"
#include "planner/scalar_expr.h"
#include "catalog/catalog.h"
#include "types/big_int.h"
#include "types/compare.h"
#include "types/conversions.h"
#include "types/patterns.h"

namespace quereus {

namespace {

Value bool_value(bool b) { return Value::Boolean(b); }

// Numeric view of a value for arithmetic (text is read leniently, like SQLite).
Value as_numeric(const Value& v) {
  switch (v.type()) {
    case ValueType::kInteger:
    case ValueType::kReal:
    case ValueType::kBigInt: return v;
    case ValueType::kBoolean: return Value::Integer(v.as_int());
    case ValueType::kText: {
      Value n = parse_number(v.str(), true);
      return n.is_null() ? Value::Integer(0) : n;
    }
    default: return Value::Integer(0);
  }
}

// The operator as the temporal table and bigint::arith spell it.
char op_char(ast::BinaryOp op) {
  switch (op) {
    case ast::BinaryOp::kAdd: return '+';
    case ast::BinaryOp::kSub: return '-';
    case ast::BinaryOp::kMul: return '*';
    case ast::BinaryOp::kDiv: return '/';
    default: return '%';
  }
}

// Arithmetic that is not int64 op int64: a big integer or a real takes part.
// An integer past ±(2^53 - 1) meeting an integral real stays exact (the reference keeps
// its bigint operand in the bigint domain): the real joins as an exact integer.
// Integer-only operands are computed exactly; anything else in double.
Value mixed_arith(ast::BinaryOp op, Value a, Value b) {
  constexpr int64_t kMaxSafe = (int64_t{1} << 53) - 1;
  auto big = [](const Value& v) {
    return v.type() == ValueType::kBigInt ||
           (v.type() == ValueType::kInteger && (v.as_int() > kMaxSafe || v.as_int() < -kMaxSafe));
  };
  auto integral = [](const Value& v) {
    if (v.type() != ValueType::kReal) return false;
    double d = v.as_real();
    return std::isfinite(d) && std::floor(d) == d;
  };
  if (big(a) && integral(b)) b = bigint::from_double(b.as_real());
  else if (big(b) && integral(a)) a = bigint::from_double(a.as_real());
  if (a.is_integer() && b.is_integer()) return bigint::arith(op_char(op), a, b);
  double x = a.to_double(), y = b.to_double(), r;
  switch (op) {
    case ast::BinaryOp::kAdd: r = x + y; break;
    case ast::BinaryOp::kSub: r = x - y; break;
    case ast::BinaryOp::kMul: r = x * y; break;
    case ast::BinaryOp::kDiv:
      if (y == 0) return Value();
      r = x / y;
      break;
    case ast::BinaryOp::kMod: return y == 0 ? Value() : Value::Real(std::fmod(x, y));
    default: return Value();
  }
  // A non-finite result is NULL, as the reference's binary operators give it (functions.md,
  // "Aggregate Functions": sum() overflows to Infinity "unlike binary +").
  return std::isfinite(r) ? Value::Real(r) : Value();
}

// int64 op int64 (`a` and `b` hold x and y); a result outside int64 continues as a big
// integer.
Value int_arith(ast::BinaryOp op, const Value& a, const Value& b) {
  {
    int64_t x = a.as_int(), y = b.as_int(), r = 0;
    switch (op) {
      case ast::BinaryOp::kAdd:
        if (!__builtin_add_overflow(x, y, &r)) return Value::Integer(r);
        return bigint::arith('+', a, b);
      case ast::BinaryOp::kSub:
        if (!__builtin_sub_overflow(x, y, &r)) return Value::Integer(r);
        return bigint::arith('-', a, b);
      case ast::BinaryOp::kMul:
        if (!__builtin_mul_overflow(x, y, &r)) return Value::Integer(r);
        return bigint::arith('*', a, b);
      case ast::BinaryOp::kDiv: {
        if (y == 0) return Value();
        if (x == std::numeric_limits<int64_t>::min() && y == -1) return bigint::negate(a);
        // The reference divides two safe integers (|v| < 2^53, JS numbers) as reals:
        // 7 / 2 is 3.5, 20 / 10 stays 2 (types-inference.md, "Binary operator result
        // types"). Past 2^53 it is on its bigint path, which truncates.
        constexpr int64_t kMaxSafe = (int64_t{1} << 53) - 1;
        bool safe = x >= -kMaxSafe && x <= kMaxSafe && y >= -kMaxSafe && y <= kMaxSafe;
        if (!safe || x % y == 0) return Value::Integer(x / y);
        return Value::Real(static_cast<double>(x) / static_cast<double>(y));
      }
      case ast::BinaryOp::kMod:
        if (y == 0) return Value();
        if (y == -1) return Value::Integer(0);
        return Value::Integer(x % y);
      default: return Value();
    }
  }
}

Value arith(ast::BinaryOp op, const Value& a0, const Value& b0) {
  // Temporal operands (by value shape) take the temporal operation table.
  if (!(a0.is_numeric() && b0.is_numeric())) {
    Value out;
    if (temporal::temporal_arithmetic(op_char(op), a0, b0, &out)) return out;
  }
  if (a0.is_null() || b0.is_null()) return Value();
  Value a = as_numeric(a0), b = as_numeric(b0);
  if (a.type() == ValueType::kInteger && b.type() == ValueType::kInteger) return int_arith(op, a, b);
  return mixed_arith(op, std::move(a), std::move(b));
}

// A bitwise operand: bitwise operators work on int64 (two's complement), so an integer
// outside int64 is refused rather than silently clamped.
int64_t bit_operand(const Value& v) {
  if (v.is_null()) return 0;
  if (v.type() == ValueType::kBigInt)
    throw Error(StatusCode::kRange, "integer value " + v.str() +
                                        " is out of range for a bitwise operator (64-bit integers only)");
  return v.as_int();
}

Value bitop(ast::BinaryOp op, const Value& a0, const Value& b0) {
  if (a0.is_null() || b0.is_null()) return Value();
  int64_t x = bit_operand(cast_value(a0, QRS_LT_INTEGER)), y = bit_operand(cast_value(b0, QRS_LT_INTEGER));
  switch (op) {
    case ast::BinaryOp::kBitAnd: return Value::Integer(x & y);
    case ast::BinaryOp::kBitOr: return Value::Integer(x | y);
    case ast::BinaryOp::kShl:
      if (y < 0) return Value::Integer(y <= -64 ? (x < 0 ? -1 : 0) : x >> -y);
      return Value::Integer(y >= 64 ? 0 : static_cast<int64_t>(static_cast<uint64_t>(x) << y));
    case ast::BinaryOp::kShr:
      if (y < 0) return Value::Integer(y <= -64 ? 0 : static_cast<int64_t>(static_cast<uint64_t>(x) << -y));
      return Value::Integer(y >= 64 ? (x < 0 ? -1 : 0) : x >> y);
    default: return Value();
  }
}

// The number a unary arithmetic operator works on: numbers and booleans as they are,
// text only when it spells a whole number; nullopt for anything else (the operator then
// yields NULL, or works on a duration string).
std::optional<Value> unary_operand(const Value& v) {
  switch (v.type()) {
    case ValueType::kInteger:
    case ValueType::kReal:
    case ValueType::kBigInt: return v;
    case ValueType::kBoolean: return Value::Integer(v.as_int());
    case ValueType::kText: {
      Value n = parse_number(v.str(), false);
      if (n.is_null()) return std::nullopt;
      return n;
    }
    default: return std::nullopt;
  }
}

// The order a comparison site applies: durations by elapsed time when an operand is
// declared TIMESPAN, otherwise the engine's value order under the site's collation.
// nullopt when either side is NULL.
std::optional<int> site_compare(const Value& a, const Value& b, const Collation* coll, bool duration_order) {
  if (duration_order && a.type() == ValueType::kText && b.type() == ValueType::kText)
    return temporal::compare_timespan_texts(a.str(), b.str());
  return sql_compare(a, b, coll);
}

// Three-valued truth: 1 true, 0 false, -1 unknown.
int truth(const Value& v) {
  bool is_null = false;
  bool t = v.truthy(&is_null);
  return is_null ? -1 : (t ? 1 : 0);
}

}  // namespace

Value ColumnScalar::eval(const EvalEnv& env) const {
  const EvalEnv* e = &env;
  for (int i = 0; i < level; ++i) e = e->outer;
  return (*e->row)[slot];
}

Value ParamScalar::eval(const EvalEnv& env) const {
  if (!name.empty()) {
    const auto* named = env.ctx->named_params;
    if (!named) return Value();
    auto it = named->find(name);
    return it == named->end() ? Value() : it->second;
  }
  const auto* params = env.ctx->params;
  if (!params || index < 1 || index > static_cast<int>(params->size())) return Value();
  return (*params)[index - 1];
}

Value UnaryScalar::eval(const EvalEnv& env) const {
  Value v = operand->eval(env);
  switch (op) {
    case ast::UnaryOp::kNot: {
      int t = truth(v);
      return t < 0 ? Value() : bool_value(t == 0);
    }
    case ast::UnaryOp::kPlus: {
      if (v.is_numeric() || v.is_null()) return v;
      if (std::optional<Value> n = unary_operand(v)) return *n;
      if (v.type() == ValueType::kText && temporal::parse_duration(v.str())) return v;
      return Value();
    }
    case ast::UnaryOp::kNegate: {
      std::optional<Value> n = unary_operand(v);
      if (!n) {
        if (v.type() != ValueType::kText) return Value();
        std::optional<std::string> negated = temporal::negate_timespan(v.str());
        return negated ? Value::Text(std::move(*negated)) : Value();
      }
      if (n->type() == ValueType::kInteger) {
        if (n->as_int() == std::numeric_limits<int64_t>::min()) return bigint::negate(*n);
        return Value::Integer(-n->as_int());
      }
      if (n->type() == ValueType::kBigInt) return bigint::negate(*n);
      return Value::Real(-n->to_double());
    }
    case ast::UnaryOp::kBitNot: {
      std::optional<Value> n = unary_operand(v);
      if (!n) return Value();
      Value i = cast_value(*n, QRS_LT_INTEGER);
      // ~x is -x - 1 over the whole integer domain (exact past int64 too).
      if (i.type() == ValueType::kBigInt) return bigint::arith('-', bigint::negate(i), Value::Integer(1));
      return Value::Integer(~i.as_int());
    }
  }
  return Value();
}

namespace {

// Limits::max_length of the running statement (the default outside one, e.g. when a
// constant is folded at plan time).
int64_t max_length_of(const EvalEnv& env) { return env.ctx ? env.ctx->max_length : Limits{}.max_length; }

[[noreturn]] void too_big(int64_t max) {
  throw Error(StatusCode::kTooBig, "string or blob too big (max_length " + std::to_string(max) + ")");
}

// A function's result, refused when it is a TEXT or BLOB longer than max_length.
Value checked_length(Value v, const EvalEnv& env) {
  if (v.type() == ValueType::kText || v.type() == ValueType::kBlob || v.type() == ValueType::kJson) {
    const int64_t max = max_length_of(env);
    if (static_cast<int64_t>(v.str().size()) > max) too_big(max);
  }
  return v;
}

}  // namespace

Value BinaryScalar::eval(const EvalEnv& env) const {
  using Op = ast::BinaryOp;
  switch (op) {
    case Op::kAnd: {
      int l = truth(left->eval(env));
      if (l == 0) return bool_value(false);
      int r = truth(right->eval(env));
      if (r == 0) return bool_value(false);
      if (l < 0 || r < 0) return Value();
      return bool_value(true);
    }
    case Op::kOr: {
      int l = truth(left->eval(env));
      if (l == 1) return bool_value(true);
      int r = truth(right->eval(env));
      if (r == 1) return bool_value(true);
      if (l < 0 || r < 0) return Value();
      return bool_value(false);
    }
    case Op::kXor: {
      int l = truth(left->eval(env)), r = truth(right->eval(env));
      if (l < 0 || r < 0) return Value();
      return bool_value(l != r);
    }
    case Op::kEq: case Op::kEqEq: case Op::kNe: case Op::kLt: case Op::kLe: case Op::kGt: case Op::kGe: {
      // Columns and literals are compared where they are held.
      Value held_a, held_b;
      const Value* pa = value_in_place(*left, env);
      if (!pa) pa = &(held_a = left->eval(env));
      const Value* pb = value_in_place(*right, env);
      if (!pb) pb = &(held_b = right->eval(env));
      std::optional<int> c;
      if (pa->type() == ValueType::kInteger && pb->type() == ValueType::kInteger) {
        const int64_t x = pa->as_int(), y = pb->as_int();  // the common case, compared in place
        c = x < y ? -1 : (x > y ? 1 : 0);
      } else {
        c = site_compare(*pa, *pb, compare_collation, duration_order);
      }
      if (!c) return Value();
      switch (op) {
        case Op::kEq: case Op::kEqEq: return bool_value(*c == 0);
        case Op::kNe: return bool_value(*c != 0);
        case Op::kLt: return bool_value(*c < 0);
        case Op::kLe: return bool_value(*c <= 0);
        case Op::kGt: return bool_value(*c > 0);
        default: return bool_value(*c >= 0);
      }
    }
    case Op::kIs: case Op::kIsNot: {
      Value held_a, held_b;
      const Value* pa = value_in_place(*left, env);
      if (!pa) pa = &(held_a = left->eval(env));
      const Value* pb = value_in_place(*right, env);
      if (!pb) pb = &(held_b = right->eval(env));
      const Value &a = *pa, &b = *pb;
      bool eq;
      if (a.is_null() || b.is_null()) eq = a.is_null() && b.is_null();
      else if (b.type() == ValueType::kBoolean && a.type() != ValueType::kBoolean) {
        int t = truth(a);
        eq = t == (b.as_bool() ? 1 : 0);
      } else eq = site_compare(a, b, compare_collation, duration_order) == 0;
      return bool_value(op == Op::kIs ? eq : !eq);
    }
    case Op::kAdd: case Op::kSub: case Op::kMul: case Op::kDiv: case Op::kMod: {
      Value held_a, held_b;
      const Value* pa = value_in_place(*left, env);
      if (!pa) pa = &(held_a = left->eval(env));
      const Value* pb = value_in_place(*right, env);
      if (!pb) pb = &(held_b = right->eval(env));
      if (pa->type() == ValueType::kInteger && pb->type() == ValueType::kInteger) return int_arith(op, *pa, *pb);
      return arith(op, *pa, *pb);
    }
    default: break;
  }
  Value a = left->eval(env);
  Value b = right->eval(env);
  switch (op) {
    case Op::kAdd: case Op::kSub: case Op::kMul: case Op::kDiv: case Op::kMod:
      return arith(op, a, b);
    case Op::kConcat: {
      if (a.is_null() || b.is_null()) return Value();
      // The one value-to-text conversion (types.md "Value to text").
      std::string left_text = value_to_text(a), right_text = value_to_text(b);
      const int64_t max = max_length_of(env);
      if (static_cast<int64_t>(left_text.size() + right_text.size()) > max) too_big(max);
      return Value::Text(std::move(left_text) + right_text);
    }
    case Op::kBitAnd: case Op::kBitOr: case Op::kShl: case Op::kShr:
      return bitop(op, a, b);
    case Op::kLike: case Op::kNotLike: {
      if (a.is_null() || b.is_null()) return Value();
      int esc = -1;
      if (escape) {
        Value e = escape->eval(env);
        if (e.is_null()) return Value();
        esc = like_escape_code_point(e.to_text());
        if (esc < 0) throw Error(StatusCode::kError, "ESCAPE expression must be a single character");
      }
      // a LIKE b: a is the text, b the pattern.
      InterruptCheck* check = env.ctx ? &env.ctx->interrupt : nullptr;
      bool m = like_match(value_to_text(b), value_to_text(a), esc, check);
      return bool_value(op == Op::kLike ? m : !m);
    }
    case Op::kGlob: case Op::kNotGlob: {
      if (a.is_null() || b.is_null()) return Value();
      InterruptCheck* check = env.ctx ? &env.ctx->interrupt : nullptr;
      bool m = glob_match(value_to_text(b), value_to_text(a), check);
      return bool_value(op == Op::kGlob ? m : !m);
    }
    default:
      throw Error(StatusCode::kUnsupported, "operator not supported");
  }
}

bool is_closed(const ScalarExpr& e) {
  switch (e.kind) {
    case ScalarKind::kColumn:
    case ScalarKind::kParam:
    case ScalarKind::kSubquery:
    case ScalarKind::kExists:
    case ScalarKind::kInSubquery: return false;
    case ScalarKind::kFunction: {
      auto& f = static_cast<const FunctionScalar&>(e);
      if (!f.fn || !(f.fn->flags & kDeterministic) || (f.fn->flags & kPerRow)) return false;
      break;
    }
    default: break;
  }
  for (const ScalarPtr* o : e.operands())
    if (*o && !is_closed(**o)) return false;
  return true;
}

bool FunctionScalar::is_constant() const {
  if (!(fn->flags & kDeterministic) || (fn->flags & kPerRow)) return false;
  for (auto& a : args)
    if (!a->is_constant()) return false;
  return true;
}

Value FunctionScalar::eval(const EvalEnv& env) const {
  if (fn->compare_call) {
    std::vector<Value> vals, keys;
    vals.reserve(args.size());
    keys.reserve(args.size());
    for (size_t i = 0; i < args.size(); ++i) {
      vals.push_back(args[i]->eval(env));
      keys.push_back(i < key_casts.size() ? comparison_value(vals.back(), key_casts[i]) : vals.back());
    }
    return fn->compare_call(vals, keys, compare_collation);
  }
  if (fn->context_call) {
    static const ExecContext kNoRun;
    std::vector<Value> vals;
    for (auto& a : args) vals.push_back(a->eval(env));
    return fn->context_call(vals, env.ctx ? *env.ctx : kNoRun);
  }
  Value buf[8];
  if (args.size() <= 8) {
    for (size_t i = 0; i < args.size(); ++i) buf[i] = args[i]->eval(env);
    return checked_length(fn->call(std::span<const Value>(buf, args.size())), env);
  }
  std::vector<Value> vals;
  vals.reserve(args.size());
  for (auto& a : args) vals.push_back(a->eval(env));
  return checked_length(fn->call(vals), env);
}

Value CastScalar::eval(const EvalEnv& env) const {
  return comparison ? comparison_value(operand->eval(env), target) : cast_value(operand->eval(env), target);
}

Value CaseScalar::eval(const EvalEnv& env) const {
  if (base) {
    Value b = base->eval(env);
    for (size_t i = 0; i < whens.size(); ++i) {
      auto c = sql_compare(b, whens[i].first->eval(env), when_collations[i]);
      if (c && *c == 0) return whens[i].second->eval(env);
    }
  } else {
    for (auto& [w, t] : whens)
      if (truth(w->eval(env)) == 1) return t->eval(env);
  }
  return else_expr ? else_expr->eval(env) : Value();
}

Value InListScalar::eval(const EvalEnv& env) const {
  Value v = operand->eval(env);
  if (v.is_null()) return list.empty() ? bool_value(negated) : Value();
  bool saw_null = false;
  for (auto& e : list) {
    Value x = e->eval(env);
    if (x.is_null()) { saw_null = true; continue; }
    if (site_compare(v, x, collation, duration_order) == 0) return bool_value(!negated);
  }
  if (saw_null) return Value();
  return bool_value(negated);
}

namespace {

// The rows of a subquery's plan for this evaluation: at most `max_rows` (0: all). An
// uncorrelated subquery's rows are computed once per execution and cached on the node;
// a correlated one's land in `local` (charged to `local_memory` until it goes).
const std::vector<Row>& subquery_rows(const SubqueryScalar& sq, const EvalEnv& env, size_t max_rows,
                                      std::vector<Row>& local, MemoryCharge& local_memory) {
  auto run = [&](std::vector<Row>& out, MemoryCharge& memory) {
    std::shared_ptr<Operator> fresh;
    Operator* tree;
    if (sq.op_busy) {  // re-entered while running: use a private tree
      fresh = sq.plan->instantiate();
      tree = fresh.get();
    } else {
      if (!sq.op) sq.op = sq.plan->instantiate();
      tree = sq.op.get();
    }
    struct Busy {
      bool& flag;
      bool was;
      ~Busy() { flag = was; }
    } busy{sq.op_busy, sq.op_busy};
    sq.op_busy = true;
    tree->open(env);
    memory.reset(memory_budget(env.ctx));
    out.emplace_back();
    while ((max_rows == 0 || out.size() <= max_rows) && tree->next(out.back())) {
      memory.add_row(out.back());
      out.emplace_back();
    }
    out.pop_back();  // the slot the last next() did not fill
  };
  if (sq.correlated) {
    if (sq.memo && !sq.op_busy && env.ctx) {
      // The values it reads from the rows it is evaluated under: unchanged since the kept
      // evaluation (same execution) means the same rows.
      std::vector<Value> key;
      key.reserve(sq.memo_inputs.size());
      for (auto [frame, slot] : sq.memo_inputs) {
        const EvalEnv* e = &env;
        for (int i = 0; e && i < frame; ++i) e = e->outer;
        if (!e || !e->row || slot >= static_cast<int>(e->row->size())) {
          run(local, local_memory);
          return local;
        }
        key.push_back((*e->row)[slot]);
      }
      if (sq.memo_kept && sq.memo_generation == env.ctx->generation && key == sq.memo_key) return sq.memo_rows;
      sq.memo_kept = false;  // (keeps nothing, should the run fail)
      sq.memo_rows.clear();
      run(sq.memo_rows, sq.memo_memory);
      sq.memo_key = std::move(key);
      sq.memo_generation = env.ctx->generation;
      sq.memo_kept = true;
      return sq.memo_rows;
    }
    run(local, local_memory);
    return local;
  }
  if (sq.cache_generation != env.ctx->generation) {
    sq.cache.clear();
    run(sq.cache, sq.cache_memory);
    sq.cache_generation = env.ctx->generation;
  }
  return sq.cache;
}

size_t row_limit(ScalarKind kind) { return kind == ScalarKind::kInSubquery ? 0 : (kind == ScalarKind::kExists ? 1 : 2); }

}  // namespace

std::vector<Value> SubqueryScalar::member_values(const EvalEnv& env) const {
  std::vector<Row> local;
  MemoryCharge local_memory;
  const std::vector<Row>& rows = subquery_rows(*this, env, 0, local, local_memory);
  std::vector<Value> out;
  out.reserve(rows.size());
  for (auto& r : rows) {
    Value x = comparison_value(r[0], value_cast);
    if (!x.is_null()) out.push_back(std::move(x));
  }
  return out;
}

Value SubqueryScalar::eval(const EvalEnv& env) const {
  std::vector<Row> local;
  MemoryCharge local_memory;  // local's rows, given back when this evaluation ends
  const std::vector<Row>* rows = &subquery_rows(*this, env, row_limit(kind), local, local_memory);
  switch (kind) {
    case ScalarKind::kExists: return bool_value(negated ? rows->empty() : !rows->empty());
    case ScalarKind::kSubquery:
      if (rows->empty()) return Value();
      if (rows->size() > 1) throw Error(StatusCode::kError, "Scalar subquery returned more than one row");
      return (*rows)[0][0];
    case ScalarKind::kInSubquery: {
      Value v = comparison_value(operand->eval(env), probe_cast);
      if (rows->empty()) return bool_value(negated);
      if (v.is_null()) return Value();
      if (!correlated && !duration_order && rows->size() >= 16) {
        // Sorted once per execution, then a binary search per probe.
        auto less = [&](const Value& a, const Value& b) { return *sql_compare(a, b, collation) < 0; };
        if (sorted_generation != cache_generation) {
          sorted.clear();
          sorted_saw_null = false;
          for (auto& r : *rows) {
            Value x = comparison_value(r[0], value_cast);
            if (x.is_null()) sorted_saw_null = true;
            else sorted.push_back(std::move(x));
          }
          std::sort(sorted.begin(), sorted.end(), less);
          sorted_generation = cache_generation;
        }
        auto it = std::lower_bound(sorted.begin(), sorted.end(), v, less);
        if (it != sorted.end() && *sql_compare(*it, v, collation) == 0) return bool_value(!negated);
        if (sorted_saw_null) return Value();
        return bool_value(negated);
      }
      bool saw_null = false;
      for (auto& r : *rows) {
        Value x = comparison_value(r[0], value_cast);
        if (x.is_null()) { saw_null = true; continue; }
        if (site_compare(v, x, collation, duration_order) == 0) return bool_value(!negated);
      }
      if (saw_null) return Value();
      return bool_value(negated);
    }
    default: return Value();
  }
}

Value BetweenScalar::eval(const EvalEnv& env) const {
  Value v = operand->eval(env), lo = low->eval(env), hi = high->eval(env);
  auto c1 = site_compare(v, lo, low_collation, duration_order);
  auto c2 = site_compare(v, hi, high_collation, duration_order);
  // v >= lo AND v <= hi with three-valued logic
  int t1 = c1 ? (*c1 >= 0 ? 1 : 0) : -1;
  int t2 = c2 ? (*c2 <= 0 ? 1 : 0) : -1;
  int r;
  if (t1 == 0 || t2 == 0) r = 0;
  else if (t1 < 0 || t2 < 0) r = -1;
  else r = 1;
  if (r < 0) return Value();
  return bool_value(negated ? r == 0 : r == 1);
}

Value IsNullScalar::eval(const EvalEnv& env) const {
  bool n = operand->eval(env).is_null();
  return bool_value(negated ? !n : n);
}

}  // namespace quereus
