// Registry: name → module / collation / function, shared by the engine and the plugin loader.
#include "catalog/registry.h"

#include <algorithm>
#include <cctype>

#include "catalog/function.h"
#include "common/status.h"

namespace quereus {

// An aggregate's algebra is called only where its AggregateAlgebra declares it.
void AggregateState::merge(const AggregateState&) {
  throw Error(StatusCode::kInternal, "aggregate state has no merge");
}
void AggregateState::negate() { throw Error(StatusCode::kInternal, "aggregate state has no negate"); }
void AggregateState::decode(const Value&) { throw Error(StatusCode::kInternal, "aggregate state has no decode"); }

namespace {

std::string fold(std::string_view s, int (*f)(int)) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(f(static_cast<unsigned char>(c)));
  return out;
}
std::string lower(std::string_view s) { return fold(s, ::tolower); }
std::string upper(std::string_view s) { return fold(s, ::toupper); }

[[noreturn]] void duplicate(const char* kind, const std::string& name, const std::string& by) {
  throw Error(StatusCode::kPlugin, std::string("duplicate ") + kind + " name '" + name +
                                       "': already registered by " + by);
}

// The origin of a function with this name and arity, in either map, or nullptr.
template <class Map>
const std::string* function_origin(const Map& m, const std::string& key, int argc) {
  auto [lo, hi] = m.equal_range(key);
  for (auto it = lo; it != hi; ++it)
    if (it->second.first.num_args == argc) return &it->second.second;
  return nullptr;
}

template <class A, class B>
void check_function(const A& scalars, const B& aggregates, const std::string& key, int argc) {
  const std::string* by = function_origin(scalars, key, argc);
  if (!by) by = function_origin(aggregates, key, argc);
  if (by) duplicate("function", key, *by);
}

template <class Map>
auto find_function(const Map& m, std::string_view name, int argc)
    -> decltype(&m.begin()->second.first) {
  auto [lo, hi] = m.equal_range(lower(name));
  decltype(&lo->second.first) variadic = nullptr;
  for (auto it = lo; it != hi; ++it) {
    if (it->second.first.num_args == argc) return &it->second.first;
    if (it->second.first.num_args < 0 && !variadic) variadic = &it->second.first;
  }
  return variadic;
}

// A non-owning handle on a static built-in.
std::shared_ptr<const Collation> builtin(const Collation& c) {
  return std::shared_ptr<const Collation>(std::shared_ptr<const Collation>(), &c);
}

}  // namespace

Registry::Registry() {
  add_collation(builtin(Collation::binary()), "builtin");
  add_collation(builtin(Collation::nocase()), "builtin");
  add_collation(builtin(Collation::rtrim()), "builtin");
}

void Registry::add_module(const std::string& name, std::shared_ptr<VtabModule> module,
                          const std::string& origin) {
  std::string key = lower(name);
  if (auto it = modules_.find(key); it != modules_.end())
    duplicate("module", name, it->second.second);
  modules_.emplace(key, std::make_pair(std::move(module), origin));
}

void Registry::add_collation(std::shared_ptr<const Collation> collation,
                             const std::string& origin) {
  std::string key = upper(collation->name());
  if (auto it = collations_.find(key); it != collations_.end())
    duplicate("collation", key, it->second.second);
  collations_.emplace(key, std::make_pair(std::move(collation), origin));
}

// Functions overload by arity; a scalar and an aggregate may not share a name and arity.
ScalarFunction& Registry::add_scalar(ScalarFunction fn, const std::string& origin) {
  fn.name = lower(fn.name);
  check_function(scalars_, aggregates_, fn.name, fn.num_args);
  std::string key = fn.name;
  return scalars_.emplace(key, std::make_pair(std::move(fn), origin))->second.first;
}

void Registry::add_aggregate(AggregateFunction fn, const std::string& origin) {
  fn.name = lower(fn.name);
  check_function(scalars_, aggregates_, fn.name, fn.num_args);
  std::string key = fn.name;
  aggregates_.emplace(key, std::make_pair(std::move(fn), origin));
}

void Registry::add_table_function(TableFunction fn, const std::string& origin) {
  fn.name = lower(fn.name);
  if (auto it = tables_.find(fn.name); it != tables_.end()) duplicate("table function", fn.name, it->second.second);
  std::string key = fn.name;
  tables_.emplace(key, std::make_pair(std::move(fn), origin));
}

const TableFunction* Registry::find_table_function(std::string_view name) const {
  auto it = tables_.find(lower(name));
  return it == tables_.end() ? nullptr : &it->second.first;
}

std::shared_ptr<VtabModule> Registry::find_module(std::string_view name) const {
  auto it = modules_.find(lower(name));
  return it == modules_.end() ? nullptr : it->second.first;
}

std::shared_ptr<const Collation> Registry::find_collation(std::string_view name) const {
  auto it = collations_.find(upper(name));
  return it == collations_.end() ? nullptr : it->second.first;
}

const ScalarFunction* Registry::find_scalar(std::string_view name, int argc) const {
  return find_function(scalars_, name, argc);
}

const AggregateFunction* Registry::find_aggregate(std::string_view name, int argc) const {
  return find_function(aggregates_, name, argc);
}

bool Registry::has_function_named(std::string_view name) const {
  std::string key = lower(name);
  return scalars_.count(key) > 0 || aggregates_.count(key) > 0;
}

std::vector<std::string> Registry::module_names() const {
  std::vector<std::string> names;
  for (const auto& [key, entry] : modules_) names.push_back(key);
  return names;
}

}  // namespace quereus
