// json_schema(): structural validation of a JSON value against a TypeScript-like type
// expression (the syntax of the reference's moat-maker validator):
//
//   number | string | boolean | null | undefined | any | unknown | never | object
//   'literal' | "literal" | 42 | true | false
//   T[]   Array<T>   [T, U]   { key: T, other?: U }   { [k: string]: T }   T | U   T & U   (T)
//
// Object types are open (extra properties are allowed); optional members may be absent.
#pragma once

#include <memory>
#include <optional>
#include <string_view>

#include "types/json_value.h"

namespace quereus::jsonv {

class SchemaType;

// A compiled schema; immutable and shareable.
class Schema {
 public:
  // nullopt when `source` is not a valid type expression.
  static std::optional<Schema> compile(std::string_view source);
  bool matches(const Json& value) const;

 private:
  std::shared_ptr<const SchemaType> root_;
};

}  // namespace quereus::jsonv
