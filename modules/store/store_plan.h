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
#include "quereus/key_seek.hpp"
#include "quereus/sdk.hpp"

namespace quereus::store {

// The seek choice, ordering claim and plan ids are the SDK's (quereus/key_seek.hpp).
using sdk::encode_plan_id;
using sdk::OrderingClaim;
using sdk::plan_reverse;
using sdk::SeekKind;
using Seek = sdk::BasicSeek<std::vector<size_t>>;

inline Seek choose_seek(const KeyCodec& key, std::span<const sdk::Filter> filters, const std::vector<bool>& allowed) {
  return sdk::choose_seek<Seek>(key, filters, allowed);
}
inline OrderingClaim claim_ordering(const sdk::TableSchema& schema, const KeyCodec& key, const Seek& seek,
                                    std::span<const sdk::OrderSpec> ordering) {
  return sdk::claim_ordering(schema, key, seek, ordering);
}

// Encoded keys in [lo, hi) (hi empty: no upper bound); `point` when lo is one whole key.
struct ByteRange {
  std::string lo;
  std::string hi;
  bool point = false;
};

// The ranges of `seek` with the filters' bound values, in key order. Empty when a
// comparand is NULL (nothing matches).
std::vector<ByteRange> build_ranges(const KeyCodec& codec, const Seek& seek, std::span<const sdk::Filter> filters);


}  // namespace quereus::store

#endif  // QUEREUS_MODULES_STORE_STORE_PLAN_H_
