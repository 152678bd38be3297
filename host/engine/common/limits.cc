#include "common/limits.h"

#include <cmath>
#include <cstdlib>

namespace quereus {

const std::vector<std::string>& limit_names() {
  static const std::vector<std::string> kNames = {"max_sql_length",   "max_length",     "max_compound_select",
                                                  "max_join_tables",  "max_expr_depth", "max_view_depth",
                                                  "max_statement_memory"};
  return kNames;
}

int64_t* limit_field(Limits& limits, std::string_view name) {
  if (name == "max_sql_length") return &limits.max_sql_length;
  if (name == "max_length") return &limits.max_length;
  if (name == "max_compound_select") return &limits.max_compound_select;
  if (name == "max_join_tables") return &limits.max_join_tables;
  if (name == "max_expr_depth") return &limits.max_expr_depth;
  if (name == "max_view_depth") return &limits.max_view_depth;
  if (name == "max_statement_memory") return &limits.max_statement_memory;
  return nullptr;
}

Status set_limit(Limits& limits, std::string_view name, const Value& value) {
  int64_t* field = limit_field(limits, name);
  if (!field) return Status(StatusCode::kError, "Unknown limit: " + std::string(name));
  std::optional<int64_t> n;
  if (value.type() == ValueType::kInteger) {
    n = value.as_int();
  } else if (value.type() == ValueType::kReal && std::isfinite(value.as_real()) &&
             value.as_real() == std::floor(value.as_real()) && std::fabs(value.as_real()) < 9e18) {
    n = static_cast<int64_t>(value.as_real());
  } else if (value.type() == ValueType::kText && !value.str().empty()) {
    char* end = nullptr;
    long long x = std::strtoll(value.str().c_str(), &end, 10);
    if (end == value.str().c_str() + value.str().size()) n = x;
  }
  if (!n || *n < 1)
    return Status(StatusCode::kError, std::string(name) + " must be a positive integer (got " + value.to_text() + ")");
  *field = *n;
  return Status::Ok();
}

}  // namespace quereus
