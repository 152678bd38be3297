// TableSchema: the catalog's description of one table.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "quereus/abi.h"
#include "types/collation.h"
#include "types/value.h"

namespace quereus {

namespace ast { struct Expr; }

struct ColumnSchema {
  std::string name;        // display casing
  std::string type_name;   // as declared ("" when none)
  qrs_logical_type logical_type = QRS_LT_ANY;
  bool not_null = true;
  bool primary_key = false;
  std::shared_ptr<const Collation> collation;  // never null
  std::shared_ptr<const ast::Expr> default_expr;  // may be null
};

struct KeyColumn {
  int column = 0;
  bool desc = false;
};

struct TableSchema {
  std::string schema_name;  // lower-case
  std::string name;         // display casing
  std::string module_name;  // as registered
  std::vector<ColumnSchema> columns;
  std::vector<KeyColumn> primary_key;  // all columns when none declared
  bool primary_key_declared = false;
  std::vector<std::pair<std::string, Value>> module_options;

  // Returns the column index of `name` (case-insensitive) or -1.
  int find_column(std::string_view name) const;
};

}  // namespace quereus
