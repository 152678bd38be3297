// Registration shorthands and JavaScript-style coercions for the built-in families.
#include "functions/function_util.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "types/json_value.h"
#include "types/logical_type.h"

namespace quereus::fnutil {

ScalarFunction& add_scalar(Registry& r, const char* name, int argc, std::function<Value(Args)> fn, uint32_t flags) {
  ScalarFunction f;
  f.name = name;
  f.num_args = argc;
  f.flags = flags;
  f.call = std::move(fn);
  return r.add_scalar(std::move(f), "builtin");
}

void add_aggregate(Registry& r, const char* name, int argc, std::function<std::unique_ptr<AggregateState>()> make,
                   uint32_t flags, qrs_logical_type result) {
  AggregateFunction f;
  f.name = name;
  f.num_args = argc;
  f.flags = flags;
  f.result_type = result;
  f.make_state = std::move(make);
  r.add_aggregate(std::move(f), "builtin");
}

bool numeric_args(ArgTypes types) {
  for (qrs_logical_type t : types)
    if (!is_numeric_or_unknown_type(t)) return false;
  return true;
}

qrs_logical_type first_arg_type(ArgTypes types) { return types.empty() ? QRS_LT_ANY : types[0]; }

qrs_logical_type merged_arg_types(ArgTypes types) {
  if (types.empty()) return QRS_LT_ANY;
  qrs_logical_type t = types[0];
  for (qrs_logical_type u : types.subspan(1)) t = merge_branch_types(t, u);
  return t;
}

namespace {

bool js_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

double text_number(const std::string& text) {
  size_t b = 0, e = text.size();
  while (b < e && js_space(static_cast<unsigned char>(text[b]))) ++b;
  while (e > b && js_space(static_cast<unsigned char>(text[e - 1]))) --e;
  std::string s = text.substr(b, e - b);
  if (s.empty()) return 0;
  size_t i = 0;
  bool neg = false;
  if (s[0] == '+' || s[0] == '-') { neg = s[0] == '-'; i = 1; }
  if (s.compare(i, std::string::npos, "Infinity") == 0) return neg ? -INFINITY : INFINITY;
  if (i == 0 && s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X' || s[1] == 'o' || s[1] == 'O' ||
                                                 s[1] == 'b' || s[1] == 'B')) {
    int base = (s[1] == 'x' || s[1] == 'X') ? 16 : (s[1] == 'o' || s[1] == 'O') ? 8 : 2;
    double v = 0;
    for (size_t k = 2; k < s.size(); ++k) {
      int d = std::isdigit(static_cast<unsigned char>(s[k])) ? s[k] - '0'
              : std::isalpha(static_cast<unsigned char>(s[k])) ? std::tolower(static_cast<unsigned char>(s[k])) - 'a' + 10
                                                                 : 99;
      if (d >= base) return NAN;
      v = v * base + d;
    }
    return v;
  }
  size_t digits = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) { ++i; ++digits; }
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) { ++i; ++digits; }
  }
  if (digits == 0) return NAN;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    size_t exp_digits = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) { ++i; ++exp_digits; }
    if (exp_digits == 0) return NAN;
  }
  if (i != s.size()) return NAN;
  return std::strtod(s.c_str(), nullptr);
}

}  // namespace

double js_number(const Value& v) {
  switch (v.type()) {
    case ValueType::kNull: return 0;
    case ValueType::kInteger:
    case ValueType::kBoolean: return static_cast<double>(v.as_int());
    case ValueType::kReal: return v.as_real();
    case ValueType::kBigInt: return v.to_double();
    case ValueType::kText: return text_number(v.str());
    case ValueType::kBlob: return NAN;
    case ValueType::kJson: {
      auto j = jsonv::parse(v.str());
      if (!j) return NAN;
      if (j->is_number()) return j->get<double>();
      if (j->is_boolean()) return j->get<bool>() ? 1 : 0;
      if (j->is_null()) return 0;
      if (j->is_string()) return text_number(j->get<std::string>());
      return NAN;
    }
  }
  return NAN;
}

std::string js_string(const Value& v) {
  switch (v.type()) {
    case ValueType::kNull: return "null";
    case ValueType::kJson: {
      auto j = jsonv::parse(v.str());
      if (j && j->is_string()) return j->get<std::string>();
      return v.str();
    }
    case ValueType::kBlob: {
      std::string out;
      for (size_t i = 0; i < v.str().size(); ++i) {
        if (i) out += ',';
        out += std::to_string(static_cast<unsigned char>(v.str()[i]));
      }
      return out;
    }
    default: return v.to_text();
  }
}

Value js_number_value(double d) {
  if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) <= 9007199254740991.0)
    return Value::Integer(static_cast<int64_t>(d));
  return Value::Real(d);
}

std::vector<std::string> code_points(const std::string& s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    if (i + n > s.size()) n = 1;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) { n = 1; break; }
    out.push_back(s.substr(i, n));
    i += n;
  }
  return out;
}

}  // namespace quereus::fnutil
