// modules/store/store_plan.h — access-path negotiation for store tables.
//
// The same shapes as mem (modules/mem/access_plan.h), over the encoded key order:
//
//   full scan    the table's whole keyspace
//   point seek   EQ on every key member                   (one get)
//   range seek   EQ on a key prefix, then an optional GT/GE and/or LT/LE on the next member
//   multi-seek   IN on the leading member (+ EQ on the following members, + a range):
//                one range per distinct IN value, walked in key order
//
// Any of them may run in reverse when that yields the requested ordering. Ranges are
// byte ranges [lo, hi) of encoded keys (without the table prefix); open_cursor re-derives
// the seek from the filters the engine reports as handled, with the same choose_seek.
#ifndef QUEREUS_MODULES_STORE_STORE_PLAN_H_
#define QUEREUS_MODULES_STORE_STORE_PLAN_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "key_codec.h"
#include "quereus/sdk.hpp"

namespace quereus::store {

enum class SeekKind : int64_t { kScan = 0, kPoint = 1, kRange = 2, kMulti = 3 };

struct Seek {
  SeekKind kind = SeekKind::kScan;
  std::vector<size_t> pinned;  // filter pinning each leading key member (EQ; IN for member 0 of kMulti)
  int lower = -1;              // GT/GE filter on member pinned.size(), or -1
  int upper = -1;              // LT/LE filter on member pinned.size(), or -1

  std::vector<bool> handled(size_t filter_count) const;
};

Seek choose_seek(const KeyCodec& codec, std::span<const sdk::Filter> filters, const std::vector<bool>& allowed);

struct OrderingClaim {
  bool provides = false;
  bool reverse = false;  // walk the key order backwards
};

OrderingClaim claim_ordering(const sdk::TableSchema& schema, const KeyCodec& codec, const Seek& seek,
                             std::span<const sdk::OrderSpec> ordering);

inline constexpr int64_t kReverseBit = 16;
inline int64_t encode_plan_id(SeekKind kind, bool reverse) {
  return static_cast<int64_t>(kind) | (reverse ? kReverseBit : 0);
}
inline bool plan_reverse(int64_t plan_id) { return (plan_id & kReverseBit) != 0; }

// Encoded keys in [lo, hi) (hi empty: no upper bound); `point` when lo is one whole key.
struct ByteRange {
  std::string lo;
  std::string hi;
  bool point = false;
};

// The ranges of `seek` with the filters' bound values, in key order. Empty when a
// comparand is NULL (nothing matches).
std::vector<ByteRange> build_ranges(const KeyCodec& codec, const Seek& seek, std::span<const sdk::Filter> filters);

void estimate(const KeyCodec& codec, const Seek& seek, std::span<const sdk::Filter> filters, double row_count,
              double* cost, double* rows);

std::string describe(const Seek& seek, const OrderingClaim& claim);

}  // namespace quereus::store

#endif  // QUEREUS_MODULES_STORE_STORE_PLAN_H_
