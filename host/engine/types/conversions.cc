// Value conversions: declared type names, numeric text, CAST (see conversions.h).
#include "types/conversions.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "common/strings.h"
#include "types/big_int.h"
#include "types/json_value.h"
#include "types/temporal.h"

namespace quereus {

qrs_logical_type logical_type_from_name(std::string_view type_name) {
  std::string t = to_upper(type_name);
  auto paren = t.find('(');
  if (paren != std::string::npos) t = t.substr(0, paren);
  while (!t.empty() && t.back() == ' ') t.pop_back();
  if (t.empty() || t == "ANY") return QRS_LT_ANY;
  if (t == "BOOLEAN" || t == "BOOL") return QRS_LT_BOOLEAN;
  if (t == "JSON") return QRS_LT_JSON;
  if (t == "DATE") return QRS_LT_DATE;
  if (t == "TIME") return QRS_LT_TIME;
  if (t == "DATETIME") return QRS_LT_DATETIME;
  // TIMESTAMP is an integer instant, not a string temporal: it "takes INTEGER's rule"
  // (types.md R2 and "Temporal arithmetic": `ts_col + 1` is ordinary integer arithmetic;
  // plugins.md). It was read as DATETIME, so 100 stored as '1970-01-01T00:00:00.1'.
  if (t == "TIMESTAMP") return QRS_LT_INTEGER;
  if (t == "TIMESPAN") return QRS_LT_TIMESPAN;
  if (t.find("INT") != std::string::npos) return QRS_LT_INTEGER;
  if (t.find("CHAR") != std::string::npos || t.find("CLOB") != std::string::npos ||
      t.find("TEXT") != std::string::npos || t == "STRING")
    return QRS_LT_TEXT;
  if (t.find("BLOB") != std::string::npos) return QRS_LT_BLOB;
  if (t.find("REAL") != std::string::npos || t.find("FLOA") != std::string::npos ||
      t.find("DOUB") != std::string::npos)
    return QRS_LT_REAL;
  if (t == "NUMERIC" || t == "DECIMAL" || t == "NUMBER") return QRS_LT_NUMERIC;
  return QRS_LT_ANY;
}

Value parse_number(std::string_view text, bool lenient_prefix) {
  size_t i = 0, n = text.size();
  auto digit = [&](size_t k) { return k < n && std::isdigit(static_cast<unsigned char>(text[k])); };
  while (i < n && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  size_t start = i;
  if (i < n && (text[i] == '+' || text[i] == '-')) ++i;
  size_t nd = 0;
  while (digit(i)) { ++i; ++nd; }
  bool is_int = true;
  if (i < n && text[i] == '.') {
    size_t save = i++;
    size_t frac = 0;
    while (digit(i)) { ++i; ++frac; }
    if (nd + frac == 0) i = save; else is_int = false;
    nd += frac;
  }
  if (nd == 0) return Value();
  if (i < n && (text[i] == 'e' || text[i] == 'E')) {
    size_t save = i++;
    if (i < n && (text[i] == '+' || text[i] == '-')) ++i;
    if (digit(i)) {
      is_int = false;
      while (digit(i)) ++i;
    } else {
      i = save;
    }
  }
  size_t end = i;
  while (i < n && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  if (i != n && !lenient_prefix) return Value();
  std::string_view num = text.substr(start, end - start);
  if (is_int) {
    // An integer spelling keeps full precision (past int64 as a big integer).
    bool negative = num[0] == '-';
    if (num[0] == '+' || num[0] == '-') num.remove_prefix(1);
    return bigint::from_digits(negative, num);
  }
  return Value::Real(std::strtod(std::string(num).c_str(), nullptr));
}

// Text to INTEGER reads the leading integer run ('12abc' → 12, '9e18' → 9, 'abc' → 0)
// at full precision (past int64 as a big integer); blank text has no integer (NULL).
static Value leading_integer(std::string_view text) {
  size_t i = 0, n = text.size();
  while (i < n && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  if (i == n) return Value();
  bool negative = text[i] == '-';
  if (text[i] == '+' || text[i] == '-') ++i;
  size_t start = i;
  while (i < n && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i == start) return Value::Integer(0);
  return bigint::from_digits(negative, text.substr(start, i - start));
}

Value comparison_value(const Value& v, qrs_logical_type target) {
  if (v.type() == ValueType::kText &&
      (target == QRS_LT_NUMERIC || target == QRS_LT_INTEGER || target == QRS_LT_REAL)) {
    const std::string& s = v.str();
    if (std::all_of(s.begin(), s.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); }))
      return Value();
  }
  return cast_value(v, target);
}

std::string value_to_text(const Value& v) {
  switch (v.type()) {
    case ValueType::kNull: return "";
    case ValueType::kText: return v.str();
    case ValueType::kBlob: return utf8_lossy(v.str());
    case ValueType::kJson: {
      // A string scalar is physically a string: it renders bare. Only a document whose
      // text opens with a quote can be one.
      const std::string& s = v.str();
      size_t first = s.find_first_not_of(" \t\n\r");
      if (first != std::string::npos && s[first] == '"') {
        auto j = jsonv::parse(s);
        if (j && j->is_string()) return j->get<std::string>();
      }
      return s;
    }
    default: return v.to_text();
  }
}

Value cast_value(const Value& v, qrs_logical_type target) {
  if (v.is_null()) return v;
  switch (target) {
    case QRS_LT_ANY: return v;
    case QRS_LT_INTEGER:
      switch (v.type()) {
        case ValueType::kInteger:
        case ValueType::kBigInt: return v;
        case ValueType::kBoolean: return Value::Integer(v.as_int());
        case ValueType::kReal: {
          // Truncated toward zero and exact: a whole real past int64 becomes a big integer.
          double d = v.as_real();
          if (std::isnan(d)) return Value::Integer(0);
          if (std::isinf(d)) return Value::Integer(d > 0 ? std::numeric_limits<int64_t>::max()
                                                         : std::numeric_limits<int64_t>::min());
          return bigint::from_double(d);
        }
        case ValueType::kText: return leading_integer(v.str());
        default: return Value::Integer(0);
      }
    case QRS_LT_REAL:
      switch (v.type()) {
        case ValueType::kReal: return v;
        case ValueType::kInteger:
        case ValueType::kBoolean: return Value::Real(static_cast<double>(v.as_int()));
        case ValueType::kBigInt: return Value::Real(v.to_double());
        case ValueType::kText: {
          Value n = parse_number(v.str(), true);
          return Value::Real(n.is_null() ? 0.0 : n.to_double());
        }
        default: return Value::Real(0);
      }
    case QRS_LT_NUMERIC:
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
    case QRS_LT_TEXT:
      if (v.type() == ValueType::kText) return v;
      return Value::Text(value_to_text(v));
    case QRS_LT_BLOB:
      if (v.type() == ValueType::kBlob) return v;
      return Value::Blob(v.type() == ValueType::kJson ? value_to_text(v) : v.to_text());
    case QRS_LT_BOOLEAN:
      switch (v.type()) {
        case ValueType::kBoolean: return v;
        case ValueType::kInteger: return Value::Boolean(v.as_int() != 0);
        case ValueType::kBigInt: return Value::Boolean(true);
        case ValueType::kReal: return Value::Boolean(v.as_real() != 0);
        case ValueType::kText:
        case ValueType::kJson: {
          std::string t = to_lower(v.str());
          if (t == "true" || t == "1") return Value::Boolean(true);
          if (t == "false" || t == "0") return Value::Boolean(false);
          return Value();
        }
        default: return Value();
      }
    case QRS_LT_JSON: {
      switch (v.type()) {
        case ValueType::kJson: return v;
        case ValueType::kBlob: return Value();
        case ValueType::kText: {
          // JSON source when it parses (its keys as written); otherwise a bare string is
          // a JSON string scalar.
          if (std::optional<Value> doc = jsonv::document_value(v.str())) return *doc;
          return jsonv::to_value(jsonv::Json(v.str()));
        }
        default: return jsonv::to_value(jsonv::from_sql_element(v));
      }
    }
    case QRS_LT_DATE:
    case QRS_LT_TIME:
    case QRS_LT_DATETIME:
    case QRS_LT_TIMESPAN: {
      if (v.type() == ValueType::kBlob || v.type() == ValueType::kJson) return Value();
      std::string error;
      std::optional<std::string> text = target == QRS_LT_DATE       ? temporal::to_date_text(v, &error)
                                        : target == QRS_LT_TIME     ? temporal::to_time_text(v, &error)
                                        : target == QRS_LT_DATETIME ? temporal::to_datetime_text(v, &error)
                                                                    : temporal::to_timespan_text(v, &error);
      return text ? Value::Text(std::move(*text)) : Value();
    }
    default: return v;
  }
}

}  // namespace quereus
