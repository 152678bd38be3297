#include "common/limits.h"

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

}  // namespace quereus
