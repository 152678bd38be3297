// Built-in functions: math, string, conversion and statistical aggregates beyond the
// core set in builtins.cc.
//
//   conversion  integer(x) real(x) text(x) boolean(x) blob(x)   (json(x), date(x) … live with
//               their families)
//   math        sqrt pow power floor ceil ceiling trunc clamp greatest least choose
//               exp ln log log10 log2 pi sin cos tan asin acos atan atan2 sinh cosh
//               tanh asinh acosh atanh degrees radians mod
//   string      reverse lpad rpad like glob char unicode concat concat_ws printf format
//               unhex zeroblob octet_length randomblob
//   aggregate   var_pop var_samp stddev_pop stddev_samp string_concat
//
// Determinism: all are deterministic except randomblob. The transcendental functions
// (pow/power, exp, ln, log*, the trigonometric ones, degrees/radians) go through libm,
// whose last-bit results may differ between platforms, so they are registered
// deterministic but not replicable. sqrt (correctly rounded by IEEE 754), floor/ceil/
// trunc/mod and everything textual are replicable.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "common/status.h"
#include "catalog/registry.h"
#include "functions/builtins.h"
#include "functions/extra_functions.h"
#include "functions/function_util.h"
#include "functions/printf.h"
#include "types/json_value.h"
#include "types/conversions.h"
#include "types/patterns.h"
#include "types/big_int.h"
#include "types/compare.h"

namespace quereus {

namespace {

using fnutil::Args;
using fnutil::add_aggregate;
using fnutil::add_scalar;
using fnutil::js_number;
using fnutil::kPure;

constexpr uint32_t kLibm = kDeterministic;  // deterministic, not replicable

std::string trim_ws(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

// A JSON scalar as the reference's native value (string or number); other values as is.
Value unwrap_json(const Value& v) {
  if (v.type() != ValueType::kJson) return v;
  auto j = jsonv::parse(v.str());
  if (j && (j->is_string() || j->is_number() || j->is_boolean())) return jsonv::to_sql_scalar(*j);
  return v;
}

[[noreturn]] void conversion_error(const char* type, const std::string& detail) {
  throw Error(StatusCode::kMismatch, std::string("Cannot convert to ") + type + ": " + detail);
}

// ---------------------------------------------------------------- conversions

// JavaScript parseInt(s, 10) over trimmed text: sign and leading digits, at full
// precision (past int64 as a big integer).
std::optional<Value> parse_int_prefix(const std::string& s) {
  size_t i = 0;
  bool neg = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
  size_t start = i;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == start) return std::nullopt;
  return bigint::from_digits(neg, std::string_view(s).substr(start, i - start));
}

// JavaScript parseFloat: the longest decimal-literal prefix (or Infinity).
std::optional<double> parse_float_prefix(const std::string& s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  if (s.compare(i, 8, "Infinity") == 0) return s[0] == '-' ? -INFINITY : INFINITY;
  size_t digits = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) { ++i; ++digits; }
  if (i < s.size() && s[i] == '.') {
    size_t save = i++;
    size_t frac = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) { ++i; ++frac; }
    if (frac == 0 && digits == 0) i = save;
    digits += frac;
  }
  if (digits == 0) return std::nullopt;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t save = i++;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    size_t ed = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) { ++i; ++ed; }
    if (ed == 0) i = save;
  }
  return std::strtod(s.substr(0, i).c_str(), nullptr);
}

Value integer_conversion(Args a) {
  Value v = unwrap_json(a[0]);
  switch (v.type()) {
    case ValueType::kNull: return Value();
    case ValueType::kInteger:
    case ValueType::kBigInt: return v;
    case ValueType::kBoolean: return Value::Integer(v.as_int());
    case ValueType::kReal: {
      double d = v.as_real();
      if (!std::isfinite(d)) conversion_error("INTEGER", "Cannot convert '" + v.to_text() + "' to INTEGER");
      return cast_value(Value::Real(std::trunc(d)), QRS_LT_INTEGER);
    }
    case ValueType::kText: {
      std::string s = trim_ws(v.str());
      if (s.empty()) return Value();
      auto n = parse_int_prefix(s);
      if (!n) conversion_error("INTEGER", "Cannot convert '" + v.str() + "' to INTEGER");
      return *n;
    }
    default: conversion_error("INTEGER", "Cannot convert object to INTEGER");
  }
}

Value real_conversion(Args a) {
  Value v = unwrap_json(a[0]);
  switch (v.type()) {
    case ValueType::kNull: return Value();
    case ValueType::kReal: return v;
    case ValueType::kInteger:
    case ValueType::kBoolean: return Value::Real(static_cast<double>(v.as_int()));
    case ValueType::kBigInt: return Value::Real(v.to_double());
    case ValueType::kText: {
      std::string s = trim_ws(v.str());
      if (s.empty()) return Value();
      auto d = parse_float_prefix(s);
      if (!d) conversion_error("REAL", "Cannot convert '" + v.str() + "' to REAL");
      return Value::Real(*d);
    }
    default: conversion_error("REAL", "Cannot convert object to REAL");
  }
}

Value text_conversion(Args a) {
  const Value& v = a[0];
  switch (v.type()) {
    case ValueType::kNull: return Value();
    case ValueType::kText: return v;
    default: return Value::Text(value_to_text(v));  // types.md "Value to text"
  }
}

// blob(x): a string's literal UTF-8 bytes (no hex sniffing; unhex() parses hex), any
// other scalar through its text; a JSON document is refused, where CAST stays lenient.
Value blob_conversion(Args a) {
  const Value& v = a[0];
  if (v.type() == ValueType::kJson) {
    auto j = jsonv::parse(v.str());
    if (!j || j->is_object() || j->is_array()) conversion_error("BLOB", "Cannot convert a JSON document to BLOB");
    return cast_value(unwrap_json(v), QRS_LT_BLOB);
  }
  return cast_value(v, QRS_LT_BLOB);
}

Value boolean_conversion(Args a) {
  Value v = unwrap_json(a[0]);
  switch (v.type()) {
    case ValueType::kNull: return Value();
    case ValueType::kBoolean: return v;
    case ValueType::kInteger: return Value::Boolean(v.as_int() != 0);
    case ValueType::kBigInt: return Value::Boolean(true);
    case ValueType::kReal: return Value::Boolean(v.as_real() != 0);
    case ValueType::kText: {
      std::string s = trim_ws(v.str());
      for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (s == "true" || s == "1" || s == "yes" || s == "on") return Value::Boolean(true);
      if (s == "false" || s == "0" || s == "no" || s == "off") return Value::Boolean(false);
      conversion_error("BOOLEAN", "Cannot convert '" + v.str() + "' to BOOLEAN");
    }
    default: conversion_error("BOOLEAN", "Cannot convert object to BOOLEAN");
  }
}

// ---------------------------------------------------------------- math

// One numeric argument through Number(); nullopt for NULL or NaN.
std::optional<double> num_arg(const Value& v) {
  if (v.is_null()) return std::nullopt;
  double d = js_number(v);
  if (std::isnan(d)) return std::nullopt;
  return d;
}

std::function<Value(Args)> unary_math(double (*f)(double), bool (*domain)(double) = nullptr) {
  return [f, domain](Args a) {
    auto x = num_arg(a[0]);
    if (!x || (domain && !domain(*x))) return Value();
    double r = f(*x);
    if (std::isnan(r)) return Value();
    return Value::Real(r);
  };
}

// floor / ceil / trunc keep an INTEGER argument as it is.
std::function<Value(Args)> rounding(double (*f)(double)) {
  return [f](Args a) {
    if (a[0].is_integer()) return a[0];
    auto x = num_arg(a[0]);
    if (!x) return Value();
    return Value::Real(f(*x));
  };
}

Value pow_fn(Args a) {
  auto x = num_arg(a[0]), y = num_arg(a[1]);
  if (!x || !y) return Value();
  return Value::Real(std::pow(*x, *y));
}

Value clamp_fn(Args a) {
  if (a[0].is_null() || a[1].is_null() || a[2].is_null()) return Value();
  auto v = num_arg(a[0]), lo = num_arg(a[1]), hi = num_arg(a[2]);
  if (!v || !lo || !hi) return Value();
  double r = std::max(*lo, std::min(*hi, *v));
  bool all_int = a[0].type() == ValueType::kInteger && a[1].type() == ValueType::kInteger &&
                 a[2].type() == ValueType::kInteger;
  if (all_int) return Value::Integer(static_cast<int64_t>(r));
  if (r == *v) return a[0].type() == ValueType::kReal ? a[0] : Value::Real(r);
  return Value::Real(r);
}

}  // namespace

Value greatest_least(std::span<const Value> args, std::span<const Value> keys, bool greatest,
                     const Collation* collation) {
  size_t best = args.size();
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].is_null() || keys[i].is_null()) continue;
    if (best == args.size()) { best = i; continue; }
    int c = compare_values(keys[i], keys[best], collation);
    if (greatest ? c > 0 : c < 0) best = i;
  }
  return best < args.size() ? args[best] : Value();
}

namespace {

Value choose_fn(Args a) {
  if (a.empty()) return Value();
  double idx = js_number(a[0]);
  if (a[0].is_null() || std::isnan(idx) || idx < 1 || idx != std::floor(idx) || idx >= static_cast<double>(a.size()))
    return Value();
  return a[static_cast<size_t>(idx)];
}

Value log_fn(Args a) {
  if (a.size() == 1) {
    auto x = num_arg(a[0]);
    if (!x || *x <= 0) return Value();
    return Value::Real(std::log10(*x));
  }
  auto b = num_arg(a[0]), x = num_arg(a[1]);
  if (!b || !x || *b <= 0 || *b == 1 || *x <= 0) return Value();
  return Value::Real(std::log(*x) / std::log(*b));
}

Value mod_fn(Args a) {
  if (a[0].type() == ValueType::kInteger && a[1].type() == ValueType::kInteger) {
    if (a[1].as_int() == 0) return Value();
    if (a[1].as_int() == -1) return Value::Integer(0);
    return Value::Integer(a[0].as_int() % a[1].as_int());
  }
  if (a[0].is_integer() && a[1].is_integer()) return bigint::arith('%', a[0], a[1]);
  auto x = num_arg(a[0]), y = num_arg(a[1]);
  if (!x || !y || *y == 0) return Value();
  return Value::Real(std::fmod(*x, *y));
}

// ---------------------------------------------------------------- strings

Value reverse_fn(Args a) {
  if (a[0].type() != ValueType::kText) return Value();
  auto cps = fnutil::code_points(a[0].str());
  std::string out;
  for (auto it = cps.rbegin(); it != cps.rend(); ++it) out += *it;
  return Value::Text(out);
}

Value pad_fn(Args a, bool left) {
  const Value& str = a[0];
  const Value& len = a[1];
  Value pad = a.size() > 2 ? a[2] : Value::Text(" ");
  if (str.type() != ValueType::kText || !len.is_numeric() || pad.type() != ValueType::kText) return Value();
  auto cps = fnutil::code_points(str.str());
  auto pad_cps = fnutil::code_points(pad.str());
  double target = len.to_double();
  if (pad_cps.empty() || target <= static_cast<double>(cps.size())) return str;
  // Limits::max_length by default (the function cannot see the database's own limit; the
  // result is checked against it after the call).
  if (target > 1e9) throw Error(StatusCode::kTooBig, "string or blob too big");
  size_t needed = static_cast<size_t>(std::floor(target - static_cast<double>(cps.size())));
  std::string fill;
  for (size_t i = 0; i < needed; ++i) fill += pad_cps[i % pad_cps.size()];
  return Value::Text(left ? fill + str.str() : str.str() + fill);
}

void append_utf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

Value char_fn(Args a) {
  std::string out;
  for (const Value& v : a) {
    if (v.is_null()) continue;
    double d = js_number(v);
    if (std::isnan(d) || d < 0 || d > 0x10FFFF) d = 0xFFFD;
    append_utf8(static_cast<uint32_t>(d), out);
  }
  return Value::Text(out);
}

Value unicode_fn(Args a) {
  if (a[0].is_null()) return Value();
  std::string s = a[0].to_text();
  if (s.empty()) return Value();
  auto cps = fnutil::code_points(s);
  const std::string& c = cps[0];
  auto b = [&](size_t i) { return static_cast<uint32_t>(static_cast<unsigned char>(c[i])); };
  uint32_t cp = b(0);
  if (c.size() == 2) cp = ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
  else if (c.size() == 3) cp = ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
  else if (c.size() == 4) cp = ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
  return Value::Integer(cp);
}

Value concat_fn(Args a) {
  std::string out;
  for (const Value& v : a)
    if (!v.is_null()) out += v.to_text();
  return Value::Text(out);
}

Value concat_ws_fn(Args a) {
  if (a.empty() || a[0].is_null()) return Value();
  std::string sep = a[0].to_text(), out;
  bool first = true;
  for (size_t i = 1; i < a.size(); ++i) {
    if (a[i].is_null()) continue;
    if (!first) out += sep;
    out += a[i].to_text();
    first = false;
  }
  return Value::Text(out);
}

Value unhex_fn(Args a) {
  if (a[0].type() != ValueType::kText) return Value();
  std::string ignore = a.size() > 1 && !a[1].is_null() ? a[1].to_text() : "";
  const std::string& s = a[0].str();
  std::string out;
  int hi = -1;
  for (char c : s) {
    int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
    if (d < 0) {
      if (hi < 0 && ignore.find(c) != std::string::npos) continue;
      return Value();
    }
    if (hi < 0) hi = d;
    else { out += static_cast<char>(hi * 16 + d); hi = -1; }
  }
  if (hi >= 0) return Value();
  return Value::Blob(out);
}

Value randomblob_fn(Args a) {
  const Value& n = a[0];
  if (!n.is_numeric()) return Value();
  double d = n.to_double();
  if (d != std::floor(d) || d <= 0) return Value::Blob("");
  size_t len = static_cast<size_t>(std::min(d, 1024.0 * 1024.0));
  static thread_local std::mt19937_64 gen{std::random_device{}()};
  std::string out(len, '\0');
  for (size_t i = 0; i < len; ++i) out[i] = static_cast<char>(gen() & 0xFF);
  return Value::Blob(out);
}

// ---------------------------------------------------------------- aggregates

class StatState : public AggregateState {
 public:
  enum class Kind { kVarPop, kVarSamp, kStdPop, kStdSamp };
  explicit StatState(Kind k) : kind_(k) {}
  void step(Args a) override {
    if (a[0].is_null()) return;
    double x = js_number(a[0]);
    if (std::isnan(x)) return;
    ++count_;
    sum_ += x;
    sum_sq_ += x * x;
  }
  Value final() override {
    bool sample = kind_ == Kind::kVarSamp || kind_ == Kind::kStdSamp;
    if (count_ == 0 || (sample && count_ <= 1)) return Value();
    double n = static_cast<double>(count_);
    double variance;
    if (sample) {
      variance = (sum_sq_ - (sum_ * sum_) / n) / (n - 1);
    } else {
      double avg = sum_ / n;
      variance = sum_sq_ / n - avg * avg;
    }
    if (kind_ == Kind::kStdPop || kind_ == Kind::kStdSamp) {
      if (variance < 0) return Value();
      return Value::Real(std::sqrt(variance));
    }
    return Value::Real(variance);
  }

 private:
  Kind kind_;
  int64_t count_ = 0;
  double sum_ = 0, sum_sq_ = 0;
};

class StringConcatState : public AggregateState {
 public:
  void step(Args a) override {
    if (a[0].type() != ValueType::kText) return;
    if (any_) out_ += ',';
    out_ += a[0].str();
    any_ = true;
  }
  Value final() override { return Value::Text(out_); }

 private:
  std::string out_;
  bool any_ = false;
};

}  // namespace

void register_extra_functions(Registry& r) {
  // Conversion functions.
  add_scalar(r, "integer", 1, integer_conversion).returns(QRS_LT_INTEGER);
  add_scalar(r, "real", 1, real_conversion).returns(QRS_LT_REAL);
  add_scalar(r, "text", 1, text_conversion).returns(QRS_LT_TEXT);
  add_scalar(r, "boolean", 1, boolean_conversion).returns(QRS_LT_BOOLEAN);
  add_scalar(r, "blob", 1, blob_conversion).returns(QRS_LT_BLOB);

  // Math.
  add_scalar(r, "sqrt", 1, unary_math([](double x) { return std::sqrt(x); }, [](double x) { return x >= 0; }))
      .returns(QRS_LT_REAL)
      .accepting(fnutil::numeric_args);
  add_scalar(r, "pow", 2, pow_fn, kLibm).returns(QRS_LT_REAL);
  add_scalar(r, "power", 2, pow_fn, kLibm).returns(QRS_LT_REAL);
  // Rounding keeps its argument's numeric type; a non-numeric argument fails planning.
  auto add_rounding = [&r](const char* name, double (*f)(double)) {
    add_scalar(r, name, 1, rounding(f)).infers(fnutil::first_arg_type).accepting(fnutil::numeric_args);
  };
  add_rounding("floor", [](double x) { return std::floor(x); });
  add_rounding("ceil", [](double x) { return std::ceil(x); });
  add_rounding("ceiling", [](double x) { return std::ceil(x); });
  add_rounding("trunc", [](double x) { return std::trunc(x); });
  add_scalar(r, "clamp", 3, clamp_fn).infers(fnutil::first_arg_type).accepting(fnutil::numeric_args);
  for (bool greatest : {true, false}) {
    add_scalar(r, greatest ? "greatest" : "least", -1,
               [greatest](Args a) { return greatest_least(a, a, greatest, nullptr); })
        .infers(fnutil::merged_arg_types)
        .picks(0)
        .comparing([greatest](Args a, Args keys, const Collation* collation) {
          return greatest_least(a, keys, greatest, collation);
        });
  }
  add_scalar(r, "choose", -1, choose_fn).infers(fnutil::merged_arg_types).picks(1);
  // INTEGER for two INTEGERs, REAL for an INTEGER / REAL mix (fmod), unknown otherwise
  // (types-inference.md: a function announces what it returns, so `mod(7, 3) = '1'`
  // converts the text as it would against any INTEGER).
  add_scalar(r, "mod", 2, mod_fn).infers([](ArgTypes t) {
    auto numeric = [](qrs_logical_type x) { return x == QRS_LT_INTEGER || x == QRS_LT_REAL; };
    if (t.size() != 2 || !numeric(t[0]) || !numeric(t[1])) return QRS_LT_ANY;
    return t[0] == QRS_LT_INTEGER && t[1] == QRS_LT_INTEGER ? QRS_LT_INTEGER : QRS_LT_REAL;
  });
  add_scalar(r, "pi", 0, [](Args) { return Value::Real(M_PI); }).returns(QRS_LT_REAL);
  add_scalar(r, "exp", 1, unary_math([](double x) { return std::exp(x); }), kLibm).returns(QRS_LT_REAL);
  add_scalar(r, "ln", 1, unary_math([](double x) { return std::log(x); }, [](double x) { return x > 0; }), kLibm)
      .returns(QRS_LT_REAL);
  add_scalar(r, "log", 1, log_fn, kLibm).returns(QRS_LT_REAL);
  add_scalar(r, "log", 2, log_fn, kLibm).returns(QRS_LT_REAL);
  add_scalar(r, "log10", 1, unary_math([](double x) { return std::log10(x); }, [](double x) { return x > 0; }), kLibm)
      .returns(QRS_LT_REAL);
  add_scalar(r, "log2", 1, unary_math([](double x) { return std::log2(x); }, [](double x) { return x > 0; }), kLibm)
      .returns(QRS_LT_REAL);
  add_scalar(r, "sin", 1, unary_math([](double x) { return std::sin(x); }), kLibm).returns(QRS_LT_REAL);
  add_scalar(r, "cos", 1, unary_math([](double x) { return std::cos(x); }), kLibm).returns(QRS_LT_REAL);
  add_scalar(r, "tan", 1, unary_math([](double x) { return std::tan(x); }), kLibm).returns(QRS_LT_REAL);
  add_scalar(r, "asin", 1, unary_math([](double x) { return std::asin(x); }), kLibm).returns(QRS_LT_REAL);
  add_scalar(r, "acos", 1, unary_math([](double x) { return std::acos(x); }), kLibm).returns(QRS_LT_REAL);
  add_scalar(r, "atan", 1, unary_math([](double x) { return std::atan(x); }), kLibm).returns(QRS_LT_REAL);
  add_scalar(r, "atan2", 2, [](Args a) {
    auto y = num_arg(a[0]), x = num_arg(a[1]);
    if (!y || !x) return Value();
    return Value::Real(std::atan2(*y, *x));
  }, kLibm).returns(QRS_LT_REAL);
  // The hyperbolic set of SQLite's math extension; a result outside the domain is NULL.
  add_scalar(r, "sinh", 1, unary_math([](double x) { return std::sinh(x); }), kLibm).returns(QRS_LT_REAL);
  add_scalar(r, "cosh", 1, unary_math([](double x) { return std::cosh(x); }), kLibm).returns(QRS_LT_REAL);
  add_scalar(r, "tanh", 1, unary_math([](double x) { return std::tanh(x); }), kLibm).returns(QRS_LT_REAL);
  add_scalar(r, "asinh", 1, unary_math([](double x) { return std::asinh(x); }), kLibm).returns(QRS_LT_REAL);
  add_scalar(r, "acosh", 1, unary_math([](double x) { return std::acosh(x); }), kLibm).returns(QRS_LT_REAL);
  add_scalar(r, "atanh", 1, unary_math([](double x) { return std::atanh(x); }), kLibm).returns(QRS_LT_REAL);
  add_scalar(r, "degrees", 1, unary_math([](double x) { return x * 180.0 / M_PI; }), kLibm).returns(QRS_LT_REAL);
  add_scalar(r, "radians", 1, unary_math([](double x) { return x * M_PI / 180.0; }), kLibm).returns(QRS_LT_REAL);

  // Strings and blobs.
  add_scalar(r, "reverse", 1, reverse_fn).returns(QRS_LT_TEXT);
  add_scalar(r, "lpad", 2, [](Args a) { return pad_fn(a, true); }).returns(QRS_LT_TEXT);
  add_scalar(r, "lpad", 3, [](Args a) { return pad_fn(a, true); }).returns(QRS_LT_TEXT);
  add_scalar(r, "rpad", 2, [](Args a) { return pad_fn(a, false); }).returns(QRS_LT_TEXT);
  add_scalar(r, "rpad", 3, [](Args a) { return pad_fn(a, false); }).returns(QRS_LT_TEXT);
  add_scalar(r, "like", 2, [](Args a) {
    if (a[0].is_null() || a[1].is_null()) return Value();
    return Value::Boolean(like_match(value_to_text(a[0]), value_to_text(a[1]), -1));
  }).returns(QRS_LT_BOOLEAN);
  add_scalar(r, "like", 3, [](Args a) {
    if (a[0].is_null() || a[1].is_null() || a[2].is_null()) return Value();
    const int esc = like_escape_code_point(a[2].to_text());
    if (esc < 0) throw Error(StatusCode::kError, "ESCAPE expression must be a single character");
    return Value::Boolean(like_match(value_to_text(a[0]), value_to_text(a[1]), esc));
  }).returns(QRS_LT_BOOLEAN);
  add_scalar(r, "glob", 2, [](Args a) {
    if (a[0].is_null() || a[1].is_null()) return Value();
    return Value::Boolean(glob_match(value_to_text(a[0]), value_to_text(a[1])));
  }).returns(QRS_LT_BOOLEAN);
  add_scalar(r, "char", -1, char_fn).returns(QRS_LT_TEXT);
  add_scalar(r, "unicode", 1, unicode_fn).returns(QRS_LT_INTEGER);
  add_scalar(r, "concat", -1, concat_fn).returns(QRS_LT_TEXT);
  add_scalar(r, "concat_ws", -1, concat_ws_fn).returns(QRS_LT_TEXT);
  add_scalar(r, "printf", -1, printf_fn).returns(QRS_LT_TEXT);
  add_scalar(r, "format", -1, printf_fn).returns(QRS_LT_TEXT);
  add_scalar(r, "unhex", 1, unhex_fn).returns(QRS_LT_BLOB);
  add_scalar(r, "unhex", 2, unhex_fn).returns(QRS_LT_BLOB);
  add_scalar(r, "zeroblob", 1, [](Args a) {
    if (a[0].is_null()) return Value();
    int64_t n = cast_value(a[0], QRS_LT_INTEGER).as_int();
    if (n > 100'000'000) throw Error(StatusCode::kTooBig, "string or blob too big");
    return Value::Blob(std::string(static_cast<size_t>(std::max<int64_t>(0, n)), '\0'));
  }).returns(QRS_LT_BLOB);
  add_scalar(r, "octet_length", 1, [](Args a) {
    if (a[0].is_null()) return Value();
    return Value::Integer(static_cast<int64_t>(a[0].to_text().size()));
  }).returns(QRS_LT_INTEGER);
  add_scalar(r, "randomblob", 1, randomblob_fn, 0).returns(QRS_LT_BLOB);

  // Statistical and string aggregates.
  using K = StatState::Kind;
  add_aggregate(r, "var_pop", 1, [] { return std::make_unique<StatState>(K::kVarPop); });
  add_aggregate(r, "var_samp", 1, [] { return std::make_unique<StatState>(K::kVarSamp); });
  add_aggregate(r, "stddev_pop", 1, [] { return std::make_unique<StatState>(K::kStdPop); });
  add_aggregate(r, "stddev_samp", 1, [] { return std::make_unique<StatState>(K::kStdSamp); });
  add_aggregate(r, "string_concat", 1, [] { return std::make_unique<StringConcatState>(); }, fnutil::kPure, QRS_LT_TEXT);
}

}  // namespace quereus
