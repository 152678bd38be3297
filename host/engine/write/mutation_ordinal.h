// mutation_ordinal(): the 1-based ordinal of the row an INSERT is producing, readable by
// column DEFAULTs (vu-mutation-context.md). The writer of the row sets it for the time the
// row's defaults are evaluated; outside that window it is 0 and the function errors.
#pragma once

#include <cstdint>

namespace quereus {

inline int64_t& mutation_ordinal_slot() {
  static thread_local int64_t ordinal = 0;
  return ordinal;
}

// Sets the ordinal for its lifetime (restoring the enclosing one: a nested write, such as
// a foreign-key action, keeps the outer row's ordinal afterwards).
class MutationOrdinalScope {
 public:
  explicit MutationOrdinalScope(int64_t ordinal) : saved_(mutation_ordinal_slot()) { mutation_ordinal_slot() = ordinal; }
  ~MutationOrdinalScope() { mutation_ordinal_slot() = saved_; }
  MutationOrdinalScope(const MutationOrdinalScope&) = delete;
  MutationOrdinalScope& operator=(const MutationOrdinalScope&) = delete;

 private:
  int64_t saved_;
};

}  // namespace quereus
