// Built-in functions: scalar (string, math, null handling, types) and aggregates.
// Recipe for adding one: docs/recipes.md.
#include "functions/builtins.h"

#include "quereus/text_case.hpp"

#include <cmath>
#include <limits>
#include <random>

#include "common/status.h"
#include "catalog/registry.h"
#include "functions/function_util.h"
#include "types/conversions.h"
#include "types/patterns.h"
#include "eval/exec_context.h"
#include "types/big_int.h"
#include "types/compare.h"
#include "types/json_value.h"

namespace quereus {

namespace {

// A finite real as int64, truncated toward zero and saturated at the range's ends.
int64_t clamp_to_int64(double r) {
  if (r >= 9223372036854775808.0) return std::numeric_limits<int64_t>::max();
  if (r <= -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(r);
}

using Args = std::span<const Value>;

ScalarFunction& scalar(Registry& r, const char* name, int argc, std::function<Value(Args)> fn,
                       uint32_t flags = kDeterministic | kReplicable) {
  return fnutil::add_scalar(r, name, argc, std::move(fn), flags);
}

size_t utf8_length(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) if ((c & 0xC0) != 0x80) ++n;
  return n;
}

// Byte offset of the `chars`-th UTF-8 character.
size_t utf8_offset(const std::string& s, int64_t chars) {
  size_t i = 0;
  while (i < s.size() && chars > 0) {
    ++i;
    while (i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) ++i;
    --chars;
  }
  return i;
}

// The text a string built-in reads from a non-text argument. The reference's substr, trim,
// replace and instr use JavaScript's own String(v) here (functions.md, "String
// Functions"): a number as JS prints it, a boolean as true/false, and a BLOB as its
// comma-joined byte numbers (x'6162' reads as '97,98'), not its UTF-8 decoding.
std::string string_arg(const Value& v) { return v.type() == ValueType::kText ? v.str() : fnutil::js_string(v); }

// The text of an argument the reference's lower / upper only accept as a string: a
// non-text argument makes them return NULL (functions.md, "String Functions").
std::optional<std::string> text_only_arg(const Value& v) {
  if (v.type() == ValueType::kText) return v.str();
  if (v.type() == ValueType::kJson) {
    auto j = jsonv::parse(v.str());
    if (j && j->is_string()) return j->get<std::string>();
  }
  return std::nullopt;
}

Value substr(Args a) {
  if (a[0].is_null() || a[1].is_null() || (a.size() > 2 && a[2].is_null())) return Value();
  std::string s = string_arg(a[0]);
  int64_t len = static_cast<int64_t>(utf8_length(s));
  // The reference's rule: 1-based start, negative counts from the end, 0 is the start;
  // a negative length gives the empty string.
  int64_t start = cast_value(a[1], QRS_LT_INTEGER).as_int();
  int64_t begin = start > 0 ? start - 1 : (start < 0 ? len + start : 0);
  if (begin < 0) begin = 0;
  if (begin > len) begin = len;
  int64_t count = a.size() > 2 ? cast_value(a[2], QRS_LT_INTEGER).as_int() : len - begin;
  if (count < 0) count = 0;
  int64_t end = count > len - begin ? len : begin + count;  // no overflow for a huge count
  size_t b = utf8_offset(s, begin), e = utf8_offset(s, end);
  return Value::Text(s.substr(b, e - b));
}

Value trim_impl(Args a, bool left, bool right) {
  if (a[0].is_null()) return Value();
  if (a.size() > 1 && a[1].is_null()) return Value();
  std::string s = string_arg(a[0]);
  std::string chars = a.size() > 1 ? string_arg(a[1]) : " ";
  size_t b = 0, e = s.size();
  if (left) while (b < e && chars.find(s[b]) != std::string::npos) ++b;
  if (right) while (e > b && chars.find(s[e - 1]) != std::string::npos) --e;
  return Value::Text(s.substr(b, e - b));
}

std::string hex_of(const std::string& s) {
  static const char* d = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) { out += d[c >> 4]; out += d[c & 15]; }
  return out;
}

// ---------------------------------------------------------------- aggregates

class CountState : public AggregateState {
 public:
  explicit CountState(bool star) : star_(star) {}
  void step(Args a) override { if (star_ || a.empty() || !a[0].is_null()) ++n_; }
  Value final() override { return Value::Integer(n_); }

 private:
  bool star_;
  int64_t n_ = 0;
};

// Number.isSafeInteger: whole and within +-(2^53 - 1).
bool is_safe_integer(double d) {
  constexpr double kMaxSafe = 9007199254740991.0;
  return std::isfinite(d) && std::trunc(d) == d && std::fabs(d) <= kMaxSafe;
}

// sum / total / avg keep two parts, as the reference does: integers add exactly (past
// int64 as a big integer; a whole REAL in the safe range counts as an integer), reals add
// in double, and the two combine only in final(), so
// the answer does not depend on the order rows arrive in.
class SumState : public AggregateState {
 public:
  enum class Mode { kSum, kTotal, kAvg };
  explicit SumState(Mode m) : mode_(m) {}
  void step(Args a) override {
    if (a[0].is_null()) return;
    const Value* v = &a[0];
    Value parsed;
    if (v->type() == ValueType::kText) {
      // Numeric-looking text counts as its number; other text is skipped.
      parsed = parse_number(v->str(), false);
      if (parsed.is_null()) return;
      v = &parsed;
    }
    ++count_;
    ValueType t = v->type();
    if (t == ValueType::kInteger || t == ValueType::kBoolean) {
      exact_.add(v->as_int());
    } else if (t == ValueType::kBigInt) {
      exact_.add(*v);
    } else if (t == ValueType::kReal && is_safe_integer(v->as_real())) {
      // A whole REAL inside +-(2^53-1) is a safe integer and joins the exact part, so
      // a REAL column's total can finalize past 2^53 exactly (types-inference.md, sum()).
      exact_.add(static_cast<int64_t>(v->as_real()));
    } else {
      has_real_ = true;
      rsum_ += v->to_double();
    }
  }
  Value final() override {
    switch (mode_) {
      case Mode::kSum:
        if (count_ == 0) return Value();
        return has_real_ ? Value::Real(exact_.to_double() + rsum_) : exact_.total();
      case Mode::kTotal: return Value::Real(exact_.to_double() + rsum_);
      case Mode::kAvg:
        if (count_ == 0) return Value();
        return Value::Real((exact_.to_double() + rsum_) / static_cast<double>(count_));
    }
    return Value();
  }

 private:
  Mode mode_;
  int64_t count_ = 0;
  bigint::Accumulator exact_;
  double rsum_ = 0;
  bool has_real_ = false;
};

class MinMaxState : public AggregateState {
 public:
  explicit MinMaxState(bool is_max) : max_(is_max) {}
  void step(Args a) override {
    if (a[0].is_null()) return;
    // Numeric-looking text takes part as its number (the reference's aggregate coercion).
    if (a[0].type() == ValueType::kText) {
      Value n = parse_number(a[0].str(), false);
      if (!n.is_null()) return consider(n);
    }
    consider(a[0]);  // copied only when it is the new extreme
  }
  Value final() override { return v_; }
  // min/max rank as ORDER BY does: text under the argument's collation, a TIMESPAN
  // argument by elapsed time (its ordering_collation).
  void set_collation(const Collation* collation) override { collation_ = collation; }

 private:
  void consider(const Value& v) {
    if (!set_) {
      v_ = v;
      set_ = true;
      return;
    }
    int c = compare_values(v, v_, collation_);
    if (max_ ? c > 0 : c < 0) v_ = v;
  }
  bool max_;
  const Collation* collation_ = nullptr;
  bool set_ = false;
  Value v_;
};

class GroupConcatState : public AggregateState {
 public:
  void step(Args a) override {
    if (a[0].is_null()) return;
    std::string sep = a.size() > 1 && !a[1].is_null() ? a[1].to_text() : ",";
    if (any_) out_ += sep;
    out_ += value_to_text(a[0]);  // types.md "Value to text"
    any_ = true;
  }
  Value final() override { return any_ ? Value::Text(out_) : Value(); }

 private:
  std::string out_;
  bool any_ = false;
};

void aggregate(Registry& r, const char* name, int argc, std::function<std::unique_ptr<AggregateState>()> make,
               qrs_logical_type result = QRS_LT_ANY) {
  AggregateFunction f;
  f.name = name;
  f.num_args = argc;
  f.flags = kDeterministic | kReplicable;
  f.result_type = result;
  f.make_state = std::move(make);
  r.add_aggregate(std::move(f), "builtin");
}

// Text: case, length, substrings, trimming, search and replace, hex and quoting.
void register_string_functions(Registry& r) {
  // Unicode case mapping (utf8proc's per-code-point mappings: 'Ä' ↔ 'ä', 'Σ' ↔ 'σ').
  scalar(r, "lower", 1, [](Args a) {
    std::optional<std::string> s = text_only_arg(a[0]);
    return s ? Value::Text(sdk::map_case(*s, false)) : Value();
  }).returns(QRS_LT_TEXT);
  scalar(r, "upper", 1, [](Args a) {
    std::optional<std::string> s = text_only_arg(a[0]);
    return s ? Value::Text(sdk::map_case(*s, true)) : Value();
  }).returns(QRS_LT_TEXT);
  // Characters of a text, bytes of a blob; like lower / upper, NULL for anything else
  // (a number, a boolean, a JSON document): functions.md, "String Functions".
  scalar(r, "length", 1, [](Args a) {
    if (a[0].type() == ValueType::kBlob) return Value::Integer(static_cast<int64_t>(a[0].str().size()));
    std::optional<std::string> s = text_only_arg(a[0]);
    return s ? Value::Integer(static_cast<int64_t>(utf8_length(*s))) : Value();
  }).returns(QRS_LT_INTEGER);
  scalar(r, "substr", 2, substr).returns(QRS_LT_TEXT);
  scalar(r, "substr", 3, substr).returns(QRS_LT_TEXT);
  scalar(r, "substring", 2, substr).returns(QRS_LT_TEXT);
  scalar(r, "substring", 3, substr).returns(QRS_LT_TEXT);
  for (int n : {1, 2}) {
    scalar(r, "trim", n, [](Args a) { return trim_impl(a, true, true); }).returns(QRS_LT_TEXT);
    scalar(r, "ltrim", n, [](Args a) { return trim_impl(a, true, false); }).returns(QRS_LT_TEXT);
    scalar(r, "rtrim", n, [](Args a) { return trim_impl(a, false, true); }).returns(QRS_LT_TEXT);
  }
  scalar(r, "replace", 3, [](Args a) {
    if (a[0].is_null() || a[1].is_null() || a[2].is_null()) return Value();
    std::string s = string_arg(a[0]), from = string_arg(a[1]), to = string_arg(a[2]);
    if (from.empty()) return Value::Text(s);
    std::string out;
    size_t i = 0, j;
    while ((j = s.find(from, i)) != std::string::npos) { out += s.substr(i, j - i) + to; i = j + from.size(); }
    return Value::Text(out + s.substr(i));
  }).returns(QRS_LT_TEXT);
  scalar(r, "instr", 2, [](Args a) {
    if (a[0].is_null() || a[1].is_null()) return Value();
    std::string s = string_arg(a[0]), t = string_arg(a[1]);
    if (s.empty() || t.empty()) return Value::Integer(0);
    size_t p = s.find(t);
    if (p == std::string::npos) return Value::Integer(0);
    return Value::Integer(static_cast<int64_t>(utf8_length(s.substr(0, p)) + 1));
  }).returns(QRS_LT_INTEGER);
  scalar(r, "hex", 1, [](Args a) {
    if (a[0].is_null()) return Value::Text("");
    // A non-blob goes through the blob conversion CAST uses (types.md "Binary types").
    return Value::Text(hex_of(cast_value(a[0], QRS_LT_BLOB).str()));
  }).returns(QRS_LT_TEXT);
  scalar(r, "quote", 1, [](Args a) {
    const Value& v = a[0];
    switch (v.type()) {
      case ValueType::kNull: return Value::Text("NULL");
      case ValueType::kText: {
        std::string out = "'";
        for (char c : v.str()) { out += c; if (c == '\'') out += '\''; }
        return Value::Text(out + "'");
      }
      case ValueType::kBlob: return Value::Text("X'" + hex_of(v.str()) + "'");
      default: return Value::Text(v.to_text());
    }
  }).returns(QRS_LT_TEXT);
}

// Numbers: abs, round, sign, random.
void register_math_functions(Registry& r) {
  scalar(r, "abs", 1, [](Args a) {
    const Value& v = a[0];
    if (v.is_null()) return Value();
    if (v.type() == ValueType::kInteger) {
      if (v.as_int() == INT64_MIN) return bigint::abs(v);  // 2^63, past int64
      return Value::Integer(v.as_int() < 0 ? -v.as_int() : v.as_int());
    }
    if (v.type() == ValueType::kBigInt) return bigint::abs(v);
    if (v.type() == ValueType::kReal) return Value::Real(std::fabs(v.as_real()));
    if (v.type() == ValueType::kText) {
      Value n = parse_number(v.str(), false);
      if (n.is_null()) return Value();
      if (n.is_integer()) return bigint::abs(n);
      return Value::Real(std::fabs(n.to_double()));
    }
    throw Error(StatusCode::kError, "Invalid argument types for function abs");
  }).infers(fnutil::first_arg_type).accepting(fnutil::numeric_args);
  auto round_fn = [](Args a) {
    if (a[0].is_null() || (a.size() > 1 && a[1].is_null())) return Value();
    double d = cast_value(a[0], QRS_LT_REAL).as_real();
    int64_t digits = a.size() > 1 ? cast_value(a[1], QRS_LT_INTEGER).as_int() : 0;
    if (digits < 0) digits = 0;
    double m = std::pow(10.0, static_cast<double>(digits));
    // Past the digits a double holds there is nothing left to round: `round(1.5, 400)` is
    // 1.5, as SQLite gives it, not the NaN that inf / inf made (shown as NULL).
    if (std::isfinite(d) && !std::isfinite(d * m)) return Value::Real(d);
    double rd = std::round(d * m) / m;
    return Value::Real(rd);
  };
  scalar(r, "round", 1, round_fn).returns(QRS_LT_REAL).accepting(fnutil::numeric_args);
  scalar(r, "round", 2, round_fn).returns(QRS_LT_REAL).accepting(fnutil::numeric_args);
  auto minmax = [](bool is_max) {
    return [is_max](Args a) {
      Value best;
      for (size_t i = 0; i < a.size(); ++i) {
        if (a[i].is_null()) return Value();
        if (i == 0 || (is_max ? compare_values(a[i], best) > 0 : compare_values(a[i], best) < 0)) best = a[i];
      }
      return best;
    };
  };
  (void)minmax;  // multi-argument min/max: the reference offers greatest()/least() instead
  // A pseudo-random integer in the safe JS range, ±(2^53 - 1) (functions.md, "Math Functions").
  scalar(r, "random", 0, [](Args) {
    static thread_local std::mt19937_64 gen{std::random_device{}()};
    constexpr int64_t kMaxSafe = (int64_t{1} << 53) - 1;
    std::uniform_int_distribution<int64_t> safe(-kMaxSafe, kMaxSafe);
    return Value::Integer(safe(gen));
  }, 0).returns(QRS_LT_INTEGER);
  scalar(r, "sign", 1, [](Args a) {
    if (a[0].is_null()) return Value();
    double d = cast_value(a[0], QRS_LT_REAL).as_real();
    return Value::Integer(d > 0 ? 1 : (d < 0 ? -1 : 0));
  }).returns(QRS_LT_INTEGER);
}

// NULL handling and types: coalesce, ifnull, nullif, iif, typeof.
void register_null_and_type_functions(Registry& r) {
  auto coalesce = [](Args a) {
    for (auto& v : a) if (!v.is_null()) return v;
    return Value();
  };
  scalar(r, "coalesce", -1, coalesce).infers(fnutil::merged_arg_types).picks(0);
  scalar(r, "ifnull", 2, coalesce).infers(fnutil::merged_arg_types).picks(0);
  auto nullif = [](Args a, Args keys, const Collation* collation) {
    if (!keys[0].is_null() && !keys[1].is_null() && compare_values(keys[0], keys[1], collation) == 0) return Value();
    return a[0];
  };
  scalar(r, "nullif", 2, [nullif](Args a) { return nullif(a, a, nullptr); })
      .infers(fnutil::first_arg_type)
      .comparing(nullif);
  scalar(r, "iif", 3, [](Args a) {
    bool n;
    return a[0].truthy(&n) ? a[1] : a[2];
  }).picks(1);
  // The reference reports the storage class of its JS value: booleans and integral
  // finite reals are "integer" (one JS number type), JSON documents "json".
  scalar(r, "typeof", 1, [](Args a) {
    const Value& v = a[0];
    if (v.type() == ValueType::kBoolean) return Value::Text("integer");
    if (v.type() == ValueType::kReal && std::isfinite(v.as_real()) && std::floor(v.as_real()) == v.as_real())
      return Value::Text("integer");
    return Value::Text(value_type_name(v.type()));
  }).returns(QRS_LT_TEXT);
}

// Functions that read the executing statement: mutation_ordinal().
void register_context_functions(Registry& r) {
  static const char* kNoOrdinal = "mutation_ordinal() is only valid while an INSERT evaluates its column defaults";
  ScalarFunction& ordinal = scalar(r, "mutation_ordinal", 0, [](Args) -> Value {
    throw Error(StatusCode::kError, kNoOrdinal);
  }, kDeterministic | kPerRow).returns(QRS_LT_INTEGER);
  ordinal.context_call = [](std::span<const Value>, const ExecContext& ctx) {
    if (ctx.mutation_ordinal <= 0) throw Error(StatusCode::kError, kNoOrdinal);
    return Value::Integer(ctx.mutation_ordinal);
  };
}

// count, sum, total, avg, min, max, group_concat.
void register_aggregates(Registry& r) {
  aggregate(r, "count", 0, [] { return std::make_unique<CountState>(true); }, QRS_LT_INTEGER);
  aggregate(r, "count", 1, [] { return std::make_unique<CountState>(false); }, QRS_LT_INTEGER);
  // sum() declares NUMERIC and does not narrow to its argument's type: its exact part can
  // finalize past 2^53 over a REAL column (types-inference.md); total() and avg() are REAL.
  aggregate(r, "sum", 1, [] { return std::make_unique<SumState>(SumState::Mode::kSum); }, QRS_LT_NUMERIC);
  aggregate(r, "total", 1, [] { return std::make_unique<SumState>(SumState::Mode::kTotal); }, QRS_LT_REAL);
  aggregate(r, "avg", 1, [] { return std::make_unique<SumState>(SumState::Mode::kAvg); }, QRS_LT_REAL);
  aggregate(r, "min", 1, [] { return std::make_unique<MinMaxState>(false); });
  aggregate(r, "max", 1, [] { return std::make_unique<MinMaxState>(true); });
  aggregate(r, "group_concat", 1, [] { return std::make_unique<GroupConcatState>(); }, QRS_LT_TEXT);
  aggregate(r, "group_concat", 2, [] { return std::make_unique<GroupConcatState>(); }, QRS_LT_TEXT);
}

// generate_series(start, stop[, step]): the integers from start to stop inclusive,
// counting down when step is negative; no rows when an argument is NULL or not numeric.
void register_generate_series(Registry& r) {
  TableFunction series;
  series.name = "generate_series";
  series.num_args = 3;
  series.min_args = 2;
  series.flags = fnutil::kPure;
  series.columns = {{"value", QRS_LT_INTEGER, false}};
  series.keys = {{0}};  // a series never repeats a value (step is never zero)
  series.rows = [](DatabaseImpl&, std::span<const Value> a) {
    std::vector<Row> rows;
    int64_t bound[3] = {0, 0, 1};
    for (size_t i = 0; i < a.size(); ++i) {
      Value v = a[i].type() == ValueType::kText ? parse_number(a[i].str(), false) : a[i];
      // A big integer bound is clamped to int64 (as_int() saturates): the series is int64.
      if (v.type() == ValueType::kInteger || v.type() == ValueType::kBoolean || v.type() == ValueType::kBigInt)
        bound[i] = v.as_int();
      else if (v.type() == ValueType::kReal && std::isfinite(v.as_real()))
        bound[i] = clamp_to_int64(v.as_real());  // (casting a real beyond int64 is undefined)
      else return rows;
    }
    const int64_t start = bound[0], stop = bound[1], step = bound[2];
    if (step == 0) throw Error(StatusCode::kError, "generate_series() step must not be zero");
    for (int64_t v = start; step > 0 ? v <= stop : v >= stop;) {
      rows.push_back({Value::Integer(v)});
      if (__builtin_add_overflow(v, step, &v)) break;
    }
    return rows;
  };
  r.add_table_function(std::move(series), "builtin");
}

// split_string(str, delimiter): one row per segment (value, 0-based ordinal), split as
// JavaScript's String.split does: an empty delimiter splits into characters, an empty
// string is one empty segment. A NULL argument gives no rows.
void register_split_string(Registry& r) {
  TableFunction split;
  split.name = "split_string";
  split.num_args = 2;
  split.min_args = 2;
  split.flags = fnutil::kPure;
  split.columns = {{"value", QRS_LT_TEXT, false}, {"ordinal", QRS_LT_INTEGER, false}};
  split.keys = {{1}};
  split.rows = [](DatabaseImpl&, std::span<const Value> a) {
    std::vector<Row> rows;
    if (a[0].is_null() || a[1].is_null()) return rows;
    const std::string s = string_arg(a[0]), delim = string_arg(a[1]);
    auto emit = [&rows](std::string part) {
      rows.push_back({Value::Text(std::move(part)), Value::Integer(static_cast<int64_t>(rows.size()))});
    };
    if (delim.empty()) {
      for (std::string& cp : fnutil::code_points(s)) emit(std::move(cp));
      return rows;
    }
    size_t from = 0, at;
    while ((at = s.find(delim, from)) != std::string::npos) {
      emit(s.substr(from, at - from));
      from = at + delim.size();
    }
    emit(s.substr(from));
    return rows;
  };
  r.add_table_function(std::move(split), "builtin");
}

}  // namespace

void register_builtin_functions(Registry& r) {
  if (r.find_scalar("lower", 1)) return;
  register_string_functions(r);
  register_math_functions(r);
  register_null_and_type_functions(r);
  register_context_functions(r);
  register_aggregates(r);
  register_generate_series(r);
  register_split_string(r);

  register_json_functions(r);
  register_datetime_functions(r);
  register_extra_functions(r);
}

}  // namespace quereus
