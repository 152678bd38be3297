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

 private:
  std::string name_;
  qrs_collation_compare_fn compare_;
  void* user_;
  uint32_t flags_;
  std::shared_ptr<void> keepalive_;  // keeps a plugin's library and user data alive
};

}  // namespace quereus
