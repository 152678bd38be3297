// Registry: everything the engine resolves by name — modules, collations, functions.
// Built-ins are added by the engine; plugins add theirs through host/plugin/.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "catalog/function.h"
#include "types/collation.h"
#include "catalog/module.h"

namespace quereus {

class Registry {
 public:
  Registry();  // registers built-in collations (BINARY, NOCASE, RTRIM)

  // Each add_* throws Error(kPlugin, "duplicate … name 'x'") when the name is taken.
  // `origin` names who registered it (a plugin path, or "builtin") for error messages.
  void add_module(const std::string& name, std::shared_ptr<VtabModule> module,
                  const std::string& origin);
  void add_collation(std::shared_ptr<const Collation> collation, const std::string& origin);
  // Returns the stored function, so a built-in can declare its plan-time typing.
  ScalarFunction& add_scalar(ScalarFunction fn, const std::string& origin);
  void add_aggregate(AggregateFunction fn, const std::string& origin);
  void add_table_function(TableFunction fn, const std::string& origin);

  // Lookups are case-insensitive; return nullptr when absent.
  std::shared_ptr<VtabModule> find_module(std::string_view name) const;
  std::shared_ptr<const Collation> find_collation(std::string_view name) const;
  // Prefers an exact arity match, then a variadic one.
  const ScalarFunction* find_scalar(std::string_view name, int argc) const;
  const AggregateFunction* find_aggregate(std::string_view name, int argc) const;
  bool has_function_named(std::string_view name) const;
  const TableFunction* find_table_function(std::string_view name) const;

  // For function_info(): every scalar, aggregate and table function.
  template <typename F> void for_each_function(F&& f) const {
    for (auto& [k, v] : scalars_) f(v.first.name, v.first.num_args, "scalar", v.first.flags);
    for (auto& [k, v] : aggregates_) f(v.first.name, v.first.num_args, "aggregate", v.first.flags);
    for (auto& [k, v] : tables_) f(v.first.name, v.first.num_args, "table", v.first.flags);
  }

  std::vector<std::string> module_names() const;

 private:
  struct Named { std::string origin; };
  std::map<std::string, std::pair<std::shared_ptr<VtabModule>, std::string>> modules_;
  std::map<std::string, std::pair<std::shared_ptr<const Collation>, std::string>> collations_;
  std::multimap<std::string, std::pair<ScalarFunction, std::string>> scalars_;
  std::multimap<std::string, std::pair<AggregateFunction, std::string>> aggregates_;
  std::map<std::string, std::pair<TableFunction, std::string>> tables_;
};

}  // namespace quereus
