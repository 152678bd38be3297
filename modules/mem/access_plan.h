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
#include "quereus/key_seek.hpp"
#include "quereus/sdk.hpp"

namespace quereus::mem {

// Small inline buffers: a point lookup opens a cursor per execution, and these sizes
// cover the usual short keys without touching the heap.
using Values = absl::InlinedVector<Value, 2>;

// The seek choice, ordering claim and plan ids are the SDK's (quereus/key_seek.hpp).
using sdk::encode_plan_id;
using sdk::OrderingClaim;
using sdk::plan_reverse;
using sdk::SeekKind;
using Seek = sdk::BasicSeek<absl::InlinedVector<size_t, 4>>;

inline Seek choose_seek(const KeyOrder& key, std::span<const sdk::Filter> filters, const std::vector<bool>& allowed) {
  return sdk::choose_seek<Seek>(key, filters, allowed);
}
inline OrderingClaim claim_ordering(const sdk::TableSchema& schema, const KeyOrder& key, const Seek& seek,
                                    std::span<const sdk::OrderSpec> ordering) {
  return sdk::claim_ordering(schema, key, seek, ordering);
}

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


}  // namespace quereus::mem

#endif  // QUEREUS_MODULES_MEM_ACCESS_PLAN_H_
