// JSON helpers: canonical text, SQL ↔ JSON conversions, paths, structural comparison.
#include "types/json_value.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "types/big_int.h"

namespace quereus::jsonv {

namespace {

constexpr double kMaxSafeInteger = 9007199254740991.0;

// A double as the JSON number a JavaScript engine would hold.
template <class J = Json>
J number(double d) {
  if (!std::isfinite(d)) return J(nullptr);
  if (d == std::floor(d) && std::fabs(d) <= kMaxSafeInteger) return J(static_cast<int64_t>(d));
  return J(d);
}

template <class J>
void normalize(J& j) {
  switch (j.type()) {
    case J::value_t::number_float: j = number<J>(j.template get<double>()); break;
    case J::value_t::number_unsigned: {
      uint64_t u = j.template get<uint64_t>();
      if (u <= static_cast<uint64_t>(INT64_MAX)) j = J(static_cast<int64_t>(u));
      else j = J(static_cast<double>(u));
      break;
    }
    case J::value_t::array:
    case J::value_t::object:
      for (auto& e : j) normalize(e);
      break;
    default: break;
  }
}

void append_string(const std::string& s, std::string& out) {
  static const char* kHex = "0123456789abcdef";
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

// An object's members sorted by key (canonical form and structural comparison).
std::vector<std::pair<const std::string*, const Json*>> sorted_members(const Json& j) {
  std::vector<std::pair<const std::string*, const Json*>> m;
  m.reserve(j.size());
  for (auto it = j.begin(); it != j.end(); ++it) m.emplace_back(&it.key(), &it.value());
  std::sort(m.begin(), m.end(), [](const auto& a, const auto& b) { return *a.first < *b.first; });
  return m;
}

// `sorted`: object keys in byte order (canonical()); otherwise in member order (text()).
void dump(const Json& j, bool sorted, std::string& out) {
  using J = Json;
  switch (j.type()) {
    case J::value_t::null:
    case J::value_t::discarded: out += "null"; break;
    case J::value_t::boolean: out += j.template get<bool>() ? "true" : "false"; break;
    case J::value_t::number_integer: out += std::to_string(j.template get<int64_t>()); break;
    case J::value_t::number_unsigned: out += std::to_string(j.template get<uint64_t>()); break;
    case J::value_t::number_float: {
      double d = j.template get<double>();
      out += std::isfinite(d) ? format_real(d) : "null";
      break;
    }
    case J::value_t::string: append_string(j.template get_ref<const std::string&>(), out); break;
    case J::value_t::array: {
      out += '[';
      bool first = true;
      for (const auto& e : j) {
        if (!first) out += ',';
        first = false;
        dump(e, sorted, out);
      }
      out += ']';
      break;
    }
    case J::value_t::object: {
      out += '{';
      bool first = true;
      auto member = [&](const std::string& key, const Json& value) {
        if (!first) out += ',';
        first = false;
        append_string(key, out);
        out += ':';
        dump(value, sorted, out);
      };
      if (sorted) {
        for (const auto& [key, value] : sorted_members(j)) member(*key, *value);
      } else {
        for (auto it = j.begin(); it != j.end(); ++it) member(it.key(), it.value());
      }
      out += '}';
      break;
    }
    case J::value_t::binary: out += "null"; break;
  }
}

int type_order(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null: return 0;
    case Json::value_t::boolean: return 1;
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float: return 2;
    case Json::value_t::string: return 3;
    case Json::value_t::array: return 4;
    default: return 5;
  }
}

int compare_numbers(const Json& a, const Json& b) {
  if (a.is_number_integer() && b.is_number_integer() && !a.is_number_unsigned() && !b.is_number_unsigned()) {
    int64_t x = a.get<int64_t>(), y = b.get<int64_t>();
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  long double x = a.get<double>(), y = b.get<double>();
  if (a.is_number_integer()) x = static_cast<long double>(a.get<int64_t>());
  if (b.is_number_integer()) y = static_cast<long double>(b.get<int64_t>());
  return x < y ? -1 : (x > y ? 1 : 0);
}

// JavaScript parseInt(text, 10): optional sign and leading digits; nullopt for NaN.
std::optional<int64_t> js_parse_int(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  bool neg = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
  size_t start = i;
  int64_t v = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
    if (v < INT64_MAX / 10) v = v * 10 + (s[i] - '0');
    ++i;
  }
  if (i == start) return std::nullopt;
  return neg ? -v : v;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

// True when arrays and objects in `text` nest at most kMaxDepth deep (brackets inside
// strings do not count). Checked before parsing: the helpers here (normalize, dump,
// compare) recurse per level, so depth is what bounds their stack.
static bool depth_within_limit(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) return false;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return true;
}

static int hex4(std::string_view s, size_t i) {
  if (i + 4 > s.size()) return -1;
  int v = 0;
  for (size_t k = i; k < i + 4; ++k) {
    char c = s[k];
    int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

// JSON.parse reads two things the RFC 8259 grammar allows and nlohmann refuses: a lone
// surrogate escape (a backslash-u escape of D800-DFFF without its pair) and a number past
// the double range (`1e400`, Infinity). Both are well-formed JSON (functions.md: json_valid
// is "true if well-formed JSON"), so the source is rewritten before parsing: a lone
// surrogate becomes U+FFFD (UTF-8 cannot hold one; the replacement character, as in the
// lossy blob decode of types.md "Value to text"), an overflowing number null (a non-finite
// number is null in every JSON value here, as prepareJsonValue and JSON.stringify make
// it). Returns `text` itself when nothing changes.
// True when `t` is a number by RFC 8259's grammar:
//   -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
static bool json_number_token(std::string_view t) {
  size_t i = 0;
  auto digits = [&] {
    size_t from = i;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
    return i > from;
  };
  if (i < t.size() && t[i] == '-') ++i;
  if (i < t.size() && t[i] == '0') {
    ++i;
  } else if (!digits()) {
    return false;
  }
  if (i < t.size() && t[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == t.size();
}

static std::string_view js_source(std::string_view text, std::string& buf) {
  bool changed = false;
  std::string out;
  size_t copied = 0;  // text[copied, i) is still to be appended
  auto replace = [&](size_t from, size_t to, std::string_view with) {
    if (!changed) out.reserve(text.size() + 8);
    changed = true;
    out.append(text.substr(copied, from - copied));
    out.append(with);
    copied = to;
  };
  bool in_string = false;
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (in_string) {
      if (c == '"') {
        in_string = false;
        ++i;
      } else if (c == '\\' && i + 1 < text.size() && text[i + 1] == 'u') {
        int u = hex4(text, i + 2);
        if (u >= 0xD800 && u <= 0xDBFF && i + 7 < text.size() && text[i + 6] == '\\' && text[i + 7] == 'u') {
          int lo = hex4(text, i + 8);
          if (lo >= 0xDC00 && lo <= 0xDFFF) {
            i += 12;
            continue;
          }
        }
        if (u >= 0xD800 && u <= 0xDFFF) replace(i, i + 6, "\\ufffd");
        i += u >= 0 ? 6 : 2;
      } else {
        i += c == '\\' ? 2 : 1;
      }
    } else if (c == '"') {
      in_string = true;
      ++i;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      size_t start = i;
      if (c == '-') ++i;
      while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.' ||
                                 text[i] == 'e' || text[i] == 'E' ||
                                 ((text[i] == '+' || text[i] == '-') && (text[i - 1] == 'e' || text[i - 1] == 'E'))))
        ++i;
      std::string_view tok = text.substr(start, i - start);
      // Only an exponent or a run of more than 308 digits can leave the double range.
      // A malformed token (`01e999`, `1.e999`) is left for the parser to refuse.
      if ((tok.size() > 308 || tok.find_first_of("eE") != std::string_view::npos) && json_number_token(tok)) {
        std::string num(tok);
        if (std::isinf(std::strtod(num.c_str(), nullptr))) replace(start, i, "null");
      }
    } else {
      ++i;
    }
  }
  if (!changed) return text;
  out.append(text.substr(copied));
  buf = std::move(out);
  return buf;
}

std::optional<Json> parse(std::string_view source) {
  if (!depth_within_limit(source)) return std::nullopt;
  std::string buf;
  std::string_view src = js_source(source, buf);
  Json j = Json::parse(src.begin(), src.end(), nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  normalize(j);
  return j;
}

std::string canonical(const Json& j) {
  std::string out;
  dump(j, true, out);
  return out;
}

std::string text(const Json& j) {
  std::string out;
  dump(j, false, out);
  return out;
}

Value to_value(const Json& j) {
  if (j.is_null()) return Value();
  return Value::Json(text(j));
}

std::optional<Value> document_value(std::string_view source) {
  if (!depth_within_limit(source)) return std::nullopt;
  std::string buf;
  std::string_view src = js_source(source, buf);
  auto j = Json::parse(src.begin(), src.end(), nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  if (j.is_null()) return Value();
  normalize(j);
  return Value::Json(text(j));
}

std::optional<Json> from_sql_document(const Value& v) {
  switch (v.type()) {
    case ValueType::kNull: return Json(nullptr);
    case ValueType::kText:
    case ValueType::kJson: return parse(v.str());
    case ValueType::kInteger: return Json(v.as_int());
    case ValueType::kBigInt: return Json(v.str());  // past int64: its digits as a string
    case ValueType::kReal: return number(v.as_real());
    case ValueType::kBoolean: return Json(v.as_bool());
    case ValueType::kBlob: return std::nullopt;
  }
  return std::nullopt;
}

Json from_sql_element(const Value& v) {
  switch (v.type()) {
    case ValueType::kNull:
    case ValueType::kBlob: return Json(nullptr);
    case ValueType::kInteger: return Json(v.as_int());
    case ValueType::kBigInt: return Json(v.str());  // past int64: its digits as a string
    case ValueType::kReal: return number(v.as_real());
    case ValueType::kBoolean: return Json(v.as_bool());
    case ValueType::kText: {
      if (auto j = parse(v.str())) return *j;
      return Json(v.str());
    }
    case ValueType::kJson: {
      if (auto j = parse(v.str())) return *j;
      return Json(nullptr);
    }
  }
  return Json(nullptr);
}

Value to_sql_scalar(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null: return Value();
    case Json::value_t::boolean: return Value::Boolean(j.get<bool>());
    case Json::value_t::number_integer: return Value::Integer(j.get<int64_t>());
    case Json::value_t::number_unsigned: {
      uint64_t u = j.get<uint64_t>();
      if (u <= static_cast<uint64_t>(INT64_MAX)) return Value::Integer(static_cast<int64_t>(u));
      return bigint::from_digits(false, std::to_string(u));
    }
    case Json::value_t::number_float: return Value::Real(j.get<double>());
    case Json::value_t::string: return Value::Text(j.get<std::string>());
    case Json::value_t::array:
    case Json::value_t::object: return Value::Json(text(j));
    default: return Value();
  }
}

const char* type_name(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return j.get<bool>() ? "true" : "false";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "integer";
    case Json::value_t::number_float: {
      double d = j.get<double>();
      return std::isfinite(d) && d == std::floor(d) ? "integer" : "real";
    }
    case Json::value_t::string: return "text";
    case Json::value_t::array: return "array";
    case Json::value_t::object: return "object";
    default: return "null";
  }
}

int compare(const Json& a, const Json& b) {
  int ta = type_order(a), tb = type_order(b);
  if (ta != tb) return ta < tb ? -1 : 1;
  switch (ta) {
    case 0: return 0;
    case 1: return a.get<bool>() == b.get<bool>() ? 0 : (a.get<bool>() ? 1 : -1);
    case 2: return compare_numbers(a, b);
    case 3: {
      int c = a.get_ref<const std::string&>().compare(b.get_ref<const std::string&>());
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    case 4: {
      size_t n = std::min(a.size(), b.size());
      for (size_t i = 0; i < n; ++i)
        if (int c = compare(a[i], b[i])) return c;
      return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
    }
    default: {
      const auto ma = sorted_members(a), mb = sorted_members(b);
      for (size_t i = 0; i < ma.size() && i < mb.size(); ++i) {
        int c = ma[i].first->compare(*mb[i].first);
        if (c) return c < 0 ? -1 : 1;
      }
      if (ma.size() != mb.size()) return ma.size() < mb.size() ? -1 : 1;
      for (size_t i = 0; i < ma.size(); ++i)
        if (int c = compare(*ma[i].second, *mb[i].second)) return c;
      return 0;
    }
  }
}

int compare_text(std::string_view a, std::string_view b) {
  auto ja = parse(a), jb = parse(b);
  if (ja && jb) return compare(*ja, *jb);
  int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

std::optional<PathTarget> resolve(Json& doc, std::string_view path) {
  if (path.empty()) return std::nullopt;
  std::string_view rest = path[0] == '$' ? path.substr(1) : path;
  if (rest.empty()) {
    PathTarget t;
    t.key = std::string();
    t.value = &doc;
    t.is_root = true;
    return t;
  }
  Json* cur = &doc;
  PathTarget t;
  while (!rest.empty()) {
    Json* parent = cur;
    if (cur == nullptr || cur->is_null()) return std::nullopt;
    if (rest[0] == '.') {
      rest.remove_prefix(1);
      std::string key;
      if (!rest.empty() && rest[0] == '"') {
        size_t end = rest.find('"', 1);
        if (end == std::string_view::npos) return std::nullopt;
        key = std::string(rest.substr(1, end - 1));
        rest.remove_prefix(end + 1);
      } else {
        size_t n = 0;
        while (n < rest.size() && rest[n] != '[' && rest[n] != '.' &&
               !std::isspace(static_cast<unsigned char>(rest[n])))
          ++n;
        if (n == 0) return std::nullopt;
        key = std::string(rest.substr(0, n));
        rest.remove_prefix(n);
      }
      t.parent = parent;
      if (!cur->is_object()) {
        t.key = key;
        t.value = nullptr;
        return t;
      }
      auto it = cur->find(key);
      cur = it == cur->end() ? nullptr : &*it;
      t.key = std::move(key);
    } else if (rest[0] == '[') {
      size_t end = rest.find(']');
      if (end == std::string_view::npos) return std::nullopt;
      std::string_view inner = trim(rest.substr(1, end - 1));
      rest.remove_prefix(end + 1);
      int64_t index;
      if (!inner.empty() && inner[0] == '#') {
        // SQLite's "#" (one past the last element) and "#-N" forms.
        int64_t len = cur->is_array() ? static_cast<int64_t>(cur->size()) : 0;
        std::string_view tail = trim(inner.substr(1));
        int64_t back = 0;
        if (!tail.empty()) {
          if (tail[0] != '-') return std::nullopt;
          auto n = js_parse_int(tail.substr(1));
          if (!n || *n < 0) return std::nullopt;
          back = *n;
        }
        index = len - back;
      } else {
        auto n = js_parse_int(inner);
        if (!n) return std::nullopt;
        index = *n;
      }
      if (index < 0) return std::nullopt;
      t.parent = parent;
      t.key = static_cast<size_t>(index);
      if (!cur->is_array()) {
        t.value = nullptr;
        return t;
      }
      cur = static_cast<size_t>(index) < cur->size() ? &(*cur)[static_cast<size_t>(index)] : nullptr;
    } else {
      return std::nullopt;
    }
  }
  t.value = cur;
  return t;
}

}  // namespace quereus::jsonv
