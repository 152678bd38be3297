// Collations: the three built-ins and the comparison entry point shared with plugins.
#include "types/collation.h"

#include <algorithm>
#include <cstring>

#include "quereus/text_case.hpp"
#include "types/temporal.h"

namespace quereus {
namespace {

int binary_compare(std::string_view a, std::string_view b) {
  size_t n = std::min(a.size(), b.size());
  int c = n == 0 ? 0 : std::memcmp(a.data(), b.data(), n);
  if (c != 0) return c < 0 ? -1 : 1;
  return a.size() < b.size() ? -1 : a.size() > b.size() ? 1 : 0;
}

// NOCASE: the operands' Unicode lower-case mappings compared as bytes (quereus/text_case.hpp),
// the fold the reference's JavaScript does and the one the store keys by.
int nocase_compare(void*, const char* a, size_t an, const char* b, size_t bn) {
  return sdk::nocase_compare({a, an}, {b, bn});
}

// SQLite's RTRIM: trailing spaces are ignored, the rest compares as BINARY.
int rtrim_compare(void*, const char* a, size_t an, const char* b, size_t bn) {
  while (an > 0 && a[an - 1] == ' ') --an;
  while (bn > 0 && b[bn - 1] == ' ') --bn;
  return binary_compare({a, an}, {b, bn});
}

// TIMESPAN's order: durations by elapsed time ('PT90M' < 'PT2H', 'PT1H' = 'PT60M').
int duration_compare(void*, const char* a, size_t an, const char* b, size_t bn) {
  return temporal::compare_timespan_texts({a, an}, {b, bn});
}

constexpr uint32_t kBuiltinFlags = QRS_COLLATION_REPLICABLE | QRS_COLLATION_ORDER_PRESERVING;

}  // namespace

int Collation::compare(std::string_view a, std::string_view b) const {
  if (compare_ == nullptr) return binary_compare(a, b);
  return compare_(user_, a.data(), a.size(), b.data(), b.size());
}

qrs_collation_ref Collation::ref() const {
  qrs_collation_ref r{};
  r.struct_size = sizeof(r);
  r.name = {name_.data(), name_.size()};
  r.user = user_;
  r.compare = compare_;
  return r;
}

const Collation& Collation::binary() {
  static const Collation c("BINARY", nullptr, nullptr, kBuiltinFlags);
  return c;
}

const Collation& Collation::nocase() {
  static const Collation c("NOCASE", &nocase_compare, nullptr, kBuiltinFlags);
  return c;
}

const Collation& Collation::rtrim() {
  static const Collation c("RTRIM", &rtrim_compare, nullptr, kBuiltinFlags);
  return c;
}

const Collation& Collation::duration() {
  static const Collation c("TIMESPAN", &duration_compare, nullptr, QRS_COLLATION_REPLICABLE);
  return c;
}

const Collation* ordering_collation(const Collation* declared, qrs_logical_type type) {
  return type == QRS_LT_TIMESPAN ? &Collation::duration() : declared;
}

}  // namespace quereus
