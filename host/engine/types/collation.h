// Collation: a named total order over text, built in (BINARY, NOCASE, RTRIM) or from a plugin.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "quereus/abi.h"

namespace quereus {

class Collation {
 public:
  // compare == nullptr means BINARY.
  Collation(std::string name, qrs_collation_compare_fn compare, void* user, uint32_t flags,
            std::shared_ptr<void> keepalive = nullptr)
      : name_(std::move(name)), compare_(compare), user_(user), flags_(flags),
        keepalive_(std::move(keepalive)) {}

  const std::string& name() const { return name_; }  // upper-case
  uint32_t flags() const { return flags_; }
  int compare(std::string_view a, std::string_view b) const;
  // The SDK view handed to modules (valid while this Collation lives).
  qrs_collation_ref ref() const;

  static const Collation& binary();
  static const Collation& nocase();
  static const Collation& rtrim();
  // Not a collation a user names: the elapsed-time order of TIMESPAN text, which the
  // runtime's identity and ordering sites (DISTINCT, GROUP BY, window keys, min/max,
  // the comparison built-ins, simple CASE) apply to a TIMESPAN-typed operand
  // (types-ordering.md, "Semantic ordering").
  static const Collation& duration();

 private:
  std::string name_;
  qrs_collation_compare_fn compare_;
  void* user_;
  uint32_t flags_;
  std::shared_ptr<void> keepalive_;  // keeps a plugin's library and user data alive
};

// The order an identity or ordering site applies to values of plan-time type `type`
// under `declared`: Collation::duration() for TIMESPAN, else `declared`.
const Collation* ordering_collation(const Collation* declared, qrs_logical_type type);

}  // namespace quereus
