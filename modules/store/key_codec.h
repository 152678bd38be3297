// modules/store/key_codec.h — the order-preserving, self-delimiting key encoding.
//
// A stored key is the concatenation of one component per primary-key member; comparing
// two keys as unsigned bytes (LevelDB's order) gives exactly the key order of mem:
// each member under its collation and direction, NULL first in both directions.
//
//   NULL       05                                    (never inverted: first under DESC too)
//   number     0F                                    NaN (below every other number)
//              10 <8-byte ordered double>            a real below -2^63 (incl. -inf)
//              11 <8-byte BE int64 ^ 2^63> 00        an integer (booleans as 0 / 1), or a
//                                                    real with no fraction in [-2^63, 2^63)
//              11 <8-byte BE floor ^ 2^63> 01 <8-byte BE bits of the fraction>
//                                                    a real with a fraction: integers and
//                                                    reals interleave by value at full int64
//                                                    precision; -0.0 == 0. In (-1, 0), where
//                                                    the fraction 1 + d is not exact, it is
//                                                    rounded down and followed by the
//                                                    8-byte ordered double of d
//              12 <8-byte ordered double>            a real at or above 2^63 (incl. +inf)
//   text       20 <escaped normalized bytes> 00 01   normalized by the member's collation:
//                                                    BINARY as is, NOCASE by its Unicode
//                                                    lower-case fold (quereus/text_case.hpp),
//                                                    RTRIM trailing spaces removed,
//                                                    JSON structurally (below)
//   blob       30 <escaped bytes> 00 01
//   json       40 <escaped normalized bytes> 00 01   canonical text, like TEXT
//
// Under the JSON collation a TEXT / JSON value is parsed and encoded by structure, in the
// host's JSON order: null 01 < false 02 00 < true 02 01 < number 03 <number component> <
// string 04 <escaped> 00 01 < array 05 <elements> 00 < object 06 (01 <escaped key> 00 01)*
// 00 <values>; text that does not parse sorts after every document (7F <escaped bytes>).
//
// Escaping: a 00 byte is written 00 FF, so the terminator 00 01 sorts before any
// continuation and a shorter string first. A DESC member's component (except NULL) has
// every byte inverted; no component starts with 00 or FF in either direction, so
// `encoded prefix ‖ FF` is above every key extending that prefix (KeyCodec::after).
#ifndef QUEREUS_MODULES_STORE_KEY_CODEC_H_
#define QUEREUS_MODULES_STORE_KEY_CODEC_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "quereus/sdk.hpp"

namespace quereus::store {

// How a collation turns text into bytes whose binary order is the collation's order.
// kJson: the host's structural JSON order (the collation it hands to key columns of
// logical type JSON), encoded structurally (see key_codec.cc).
// kTimespan: the host's TIMESPAN order (ISO 8601 durations by elapsed time from
// 2024-01-01), encoded as the elapsed nanoseconds.
enum class Normalizer { kBinary, kNocase, kRtrim, kJson, kTimespan };

// The normalizer of a collation by its name, or nullopt when the store cannot key it.
std::optional<Normalizer> normalizer_for(std::string_view collation_name);

// Appends the component of `v` to `out`.
void encode_component(std::string& out, const qrs_value& v, Normalizer n, bool desc);

struct KeyMember {
  uint32_t column = 0;
  bool desc = false;
  Normalizer normalizer = Normalizer::kBinary;
  sdk::Collation collation;  // the member's collation (residual comparisons, ordering claims)
};

// The key of a table: its members in key order.
class KeyCodec {
 public:
  KeyCodec() = default;
  explicit KeyCodec(std::vector<KeyMember> members) : members_(std::move(members)) {}

  // The members of `schema`'s primary key. Throws QRS_UNSUPPORTED naming the column and
  // collation when a member's collation has no normalizer.
  static KeyCodec of(const sdk::TableSchema& schema);

  size_t size() const { return members_.size(); }
  const KeyMember& member(size_t i) const { return members_[i]; }

  // The key of a full row (cells in column order), appended to `out`.
  void encode_row(std::string& out, std::span<const qrs_value> row) const;
  // The key given as one cell per member (an old_key), appended to `out`.
  void encode_key(std::string& out, std::span<const qrs_value> key) const;
  // The first `prefix.size()` members, appended to `out`.
  void encode_prefix(std::string& out, std::span<const sdk::Value> prefix) const;

  // The smallest byte string above every key that extends `encoded_prefix`.
  static std::string after(std::string encoded_prefix) {
    encoded_prefix.push_back('\xff');
    return encoded_prefix;
  }

 private:
  std::vector<KeyMember> members_;
};

}  // namespace quereus::store

#endif  // QUEREUS_MODULES_STORE_KEY_CODEC_H_
