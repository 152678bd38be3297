// modules/mem/access_plan.h — access-path negotiation for memory tables.
//
// Every access path is a walk of the primary-key order over a list of key ranges:
//
//   full scan    one unbounded range                      (no filter handled)
//   point seek   EQ on every key member                   (1 row)
//   range seek   EQ on a key prefix, then an optional GT/GE and/or LT/LE on the next member
//   multi-seek   IN on the leading member (+ EQ on the following members, + a range):
//                one range per distinct IN value, walked in key order
//
// Any of them may run in reverse when that yields the requested ordering. The plan id
// carries only the kind and the direction; open_cursor re-derives the seek from the
// filters the engine reports as handled, with the same choose_seek as planning.
#ifndef QUEREUS_MODULES_MEM_ACCESS_PLAN_H_
#define QUEREUS_MODULES_MEM_ACCESS_PLAN_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "key_order.h"
#include "quereus/sdk.hpp"

namespace quereus::mem {

// Small inline buffers: a point lookup opens a cursor per execution, and these sizes
// cover the usual short keys without touching the heap.
using Values = absl::InlinedVector<Value, 2>;

enum class SeekKind : int64_t { kScan = 0, kPoint = 1, kRange = 2, kMulti = 3 };

struct Seek {
  SeekKind kind = SeekKind::kScan;
  absl::InlinedVector<size_t, 4> pinned;  // filter pinning each leading key member (EQ; IN for member 0 of kMulti)
  int lower = -1;              // GT/GE filter on member pinned.size(), or -1
  int upper = -1;              // LT/LE filter on member pinned.size(), or -1

  std::vector<bool> handled(size_t filter_count) const;
};

// The best seek over the filters with allowed[i] set (usable ones at plan time, handled
// ones at scan time). Claims at most one filter per key member and role.
Seek choose_seek(const KeyOrder& order, std::span<const sdk::Filter> filters, const std::vector<bool>& allowed);

struct OrderingClaim {
  bool provides = false;
  bool reverse = false;  // walk the key order backwards
};

// Whether walking `seek` (forwards or backwards) yields `ordering`.
OrderingClaim claim_ordering(const sdk::TableSchema& schema, const KeyOrder& order, const Seek& seek,
                             std::span<const sdk::OrderSpec> ordering);

inline constexpr int64_t kReverseBit = 16;
inline int64_t encode_plan_id(SeekKind kind, bool reverse) {
  return static_cast<int64_t>(kind) | (reverse ? kReverseBit : 0);
}
inline bool plan_reverse(int64_t plan_id) { return (plan_id & kReverseBit) != 0; }

// A position in key order: before / after every row starting with `prefix`.
struct Bound {
  Values prefix;
  Probe::Side side = Probe::kBefore;
  // The probe over C views of the prefix, written into `buf` (valid while both live).
  Probe probe(absl::InlinedVector<qrs_value, 4>& buf) const {
    buf.clear();
    for (const Value& v : prefix) buf.push_back(v.to_c());
    return Probe{buf.data(), nullptr, buf.size(), side};
  }
};

// The rows strictly between lo and hi.
struct KeyRange {
  Bound lo;
  Bound hi;
};

// The key ranges of `seek` with the filters' bound values, in key order. Empty when a
// comparand is NULL (nothing matches).
using KeyRanges = absl::InlinedVector<KeyRange, 1>;
KeyRanges build_ranges(const KeyOrder& order, const Seek& seek, std::span<const sdk::Filter> filters);

// Cost (~1 per row touched) and matched-row estimate of `seek` over `row_count` rows.
void estimate(const KeyOrder& order, const Seek& seek, std::span<const sdk::Filter> filters, double row_count,
              double* cost, double* rows);

std::string describe(const Seek& seek, const OrderingClaim& claim);

}  // namespace quereus::mem

#endif  // QUEREUS_MODULES_MEM_ACCESS_PLAN_H_
