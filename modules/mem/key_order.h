// modules/mem/key_order.h — the primary-key order of a memory table.
//
// Rows are ordered by their key members, each under its collation and direction. NULL
// sorts first in BOTH directions (the engine's ORDER BY puts NULLs first for ASC and
// DESC), so a forward walk of the key order is exactly `ORDER BY k1 [DESC], k2 …`.
#ifndef QUEREUS_MODULES_MEM_KEY_ORDER_H_
#define QUEREUS_MODULES_MEM_KEY_ORDER_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

#include "quereus/sdk.hpp"

namespace quereus::mem {

using sdk::Row;
using sdk::RowPtr;
using sdk::Value;

struct KeyMember {
  uint32_t column = 0;
  bool desc = false;
  sdk::Collation collation;
  // The column is declared INTEGER or REAL: its abbreviation spends all 64 bits on the
  // number (see KeyOrder::abbrev_value).
  bool numeric = false;
};

// A position in the key order: the first `len` key values, read either from a compact
// key (`key`, cells in key order) or from a full row (`row`, cells in column order), and
// where the position sits among the rows sharing those values.
struct Probe {
  enum Side : int { kBefore = -1, kExact = 0, kAfter = 1 };
  const Value* key = nullptr;
  const Row* row = nullptr;
  size_t len = 0;
  Side side = kExact;
};

class KeyOrder {
 public:
  explicit KeyOrder(std::vector<KeyMember> members) : members_(std::move(members)) {}

  size_t size() const { return members_.size(); }
  const KeyMember& member(size_t i) const { return members_[i]; }

  int compare_member(size_t i, const Value& a, const Value& b) const {
    bool an = a.is_null(), bn = b.is_null();
    if (an || bn) return an == bn ? 0 : (an ? -1 : 1);
    int c;
    if (a.type() == sdk::ValueType::kInteger && b.type() == sdk::ValueType::kInteger) {  // the common key
      int64_t x = a.as_integer(), y = b.as_integer();
      c = (x > y) - (x < y);
    } else {
      c = sdk::compare_values(a, b, members_[i].collation);
    }
    return members_[i].desc ? -c : c;
  }

  int compare(const Row& a, const Row& b) const {
    for (size_t i = 0; i < members_.size(); ++i) {
      uint32_t col = members_[i].column;
      if (int c = compare_member(i, a[col], b[col])) return c;
    }
    return 0;
  }

  // Sign of (row - probe).
  int compare(const Row& row, const Probe& p) const {
    for (size_t i = 0; i < p.len; ++i) {
      uint32_t col = members_[i].column;
      if (int c = compare_member(i, row[col], p.row ? (*p.row)[col] : p.key[i])) return c;
    }
    return -static_cast<int>(p.side);
  }

  Probe at(const Row& row, Probe::Side side = Probe::kExact) const { return {nullptr, &row, members_.size(), side}; }
  Probe at_key(const Row& key, Probe::Side side = Probe::kExact) const {
    return {key.data(), nullptr, key.size(), side};
  }

  // An order-preserving 64-bit abbreviation of a row's first key value ("abbreviated
  // key"): x < y in the key order implies abbrev(x) <= abbrev(y), so two different
  // abbreviations decide a comparison without touching the rows, and equal ones fall
  // back to the full comparison. The top 3 bits are the value's ordering class (NULL,
  // number, text, blob, JSON — compare_values' ranks); the rest are the leading bits of
  // the number (floored, offset-binary) or of the bytes (BINARY text, blobs, JSON; other
  // collations keep only the class). DESC inverts every non-NULL abbreviation.
  //
  // A numeric key column (the common INTEGER key) abbreviates its numbers exactly, with
  // no class bits: NULL 0, a number its floored offset-binary value, anything else (which
  // sorts after every number) the maximum.
  uint64_t abbrev_value(const Value& v) const {
    if (members_.empty() || v.is_null()) return 0;
    if (members_[0].numeric) {
      uint64_t a;
      switch (v.type()) {
        case sdk::ValueType::kInteger: a = biased(v.as_integer()); break;
        case sdk::ValueType::kBoolean: a = biased(v.as_boolean() ? 1 : 0); break;
        case sdk::ValueType::kReal: a = real_payload(v.as_real()); break;
        default: a = ~uint64_t{0}; break;
      }
      return members_[0].desc ? ~a : a;
    }
    uint64_t rank, payload = 0;
    switch (v.type()) {
      case sdk::ValueType::kInteger: rank = 1; payload = biased(v.as_integer()); break;
      case sdk::ValueType::kBoolean: rank = 1; payload = biased(v.as_boolean() ? 1 : 0); break;
      case sdk::ValueType::kReal: rank = 1; payload = real_payload(v.as_real()); break;
      case sdk::ValueType::kText:
        rank = 2;
        if (members_[0].collation.is_binary()) payload = leading_bytes(v.bytes());
        break;
      case sdk::ValueType::kBlob: rank = 3; payload = leading_bytes(v.bytes()); break;
      default: rank = 4; payload = leading_bytes(v.bytes()); break;
    }
    uint64_t a = (rank << 61) | (payload >> 3);
    return members_[0].desc ? ~a : a;
  }
  uint64_t abbrev(const Row& row) const { return members_.empty() ? 0 : abbrev_value(row[members_[0].column]); }

 private:
  static uint64_t biased(int64_t i) { return static_cast<uint64_t>(i) ^ (uint64_t{1} << 63); }
  static uint64_t real_payload(double d) {
    if (std::isnan(d) || d < -9223372036854775808.0) return 0;  // NaN orders below every number
    if (d >= 9223372036854775808.0) return ~uint64_t{0};
    return biased(static_cast<int64_t>(std::floor(d)));
  }
  static uint64_t leading_bytes(std::string_view b) {
    unsigned char buf[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    std::memcpy(buf, b.data(), b.size() < 8 ? b.size() : 8);
    uint64_t x = 0;
    for (unsigned char c : buf) x = (x << 8) | c;
    return x;
  }

  std::vector<KeyMember> members_;
};

// One stored row with its abbreviated key (see KeyOrder::abbrev_value), the element of
// the row B-trees: searches compare the inline abbreviations and touch a row only when
// two abbreviations are equal.
struct Slot {
  uint64_t abbr = 0;
  RowPtr row;
};

// A search position: a probe plus its abbreviation when it has a first key value.
struct SeekKey {
  const Probe* probe;
  uint64_t abbr;
  bool has_abbr;
};

inline Slot make_slot(const KeyOrder& order, RowPtr row) {
  uint64_t a = order.abbrev(*row);
  return Slot{a, std::move(row)};
}
inline SeekKey make_seek(const KeyOrder& order, const Probe& p) {
  if (p.len == 0 || order.size() == 0) return SeekKey{&p, 0, false};
  return SeekKey{&p, order.abbrev_value(p.row ? (*p.row)[order.member(0).column] : p.key[0]), true};
}

// Sign of (slot - key), deciding by the abbreviations when they differ.
inline int compare_slot(const KeyOrder& order, const Slot& s, const SeekKey& k) {
  if (k.has_abbr && s.abbr != k.abbr) return s.abbr < k.abbr ? -1 : 1;
  return order.compare(*s.row, *k.probe);
}

// Transparent `less` over slots and seek keys, for the B-trees.
struct SlotLess {
  using is_transparent = void;
  const KeyOrder* order = nullptr;
  bool operator()(const Slot& a, const Slot& b) const {
    if (a.abbr != b.abbr) return a.abbr < b.abbr;
    return order->compare(*a.row, *b.row) < 0;
  }
  bool operator()(const Slot& a, const SeekKey& k) const { return compare_slot(*order, a, k) < 0; }
  bool operator()(const SeekKey& k, const Slot& a) const { return compare_slot(*order, a, k) > 0; }
};

}  // namespace quereus::mem

#endif  // QUEREUS_MODULES_MEM_KEY_ORDER_H_
