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
#include <span>
#include <utility>
#include <vector>

#include "packed_row.h"
#include "quereus/sdk.hpp"

namespace quereus::mem {

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
  const qrs_value* key = nullptr;
  const qrs_value* row = nullptr;
  size_t len = 0;
  Side side = kExact;
};

class KeyOrder {
 public:
  explicit KeyOrder(std::vector<KeyMember> members) : members_(std::move(members)) {}

  size_t size() const { return members_.size(); }
  const KeyMember& member(size_t i) const { return members_[i]; }

  int compare_member(size_t i, const qrs_value& a, const qrs_value& b) const {
    bool an = a.type == QRS_TYPE_NULL, bn = b.type == QRS_TYPE_NULL;
    if (an || bn) return an == bn ? 0 : (an ? -1 : 1);
    int c;
    if (a.type == QRS_TYPE_INTEGER && b.type == QRS_TYPE_INTEGER) {  // the common key
      int64_t x = a.u.integer, y = b.u.integer;
      c = (x > y) - (x < y);
    } else {
      c = sdk::compare_values(a, b, members_[i].collation);
    }
    return members_[i].desc ? -c : c;
  }
  int compare_member(size_t i, const Value& a, const Value& b) const { return compare_member(i, a.to_c(), b.to_c()); }

  // Rows are cells in column order.
  int compare(const qrs_value* a, const qrs_value* b) const {
    for (size_t i = 0; i < members_.size(); ++i) {
      uint32_t col = members_[i].column;
      if (int c = compare_member(i, a[col], b[col])) return c;
    }
    return 0;
  }

  // Sign of (row - probe).
  int compare(const qrs_value* row, const Probe& p) const {
    for (size_t i = 0; i < p.len; ++i) {
      uint32_t col = members_[i].column;
      if (int c = compare_member(i, row[col], p.row ? p.row[col] : p.key[i])) return c;
    }
    return -static_cast<int>(p.side);
  }

  Probe at(const qrs_value* row, Probe::Side side = Probe::kExact) const {
    return {nullptr, row, members_.size(), side};
  }
  Probe at_key(std::span<const qrs_value> key, Probe::Side side = Probe::kExact) const {
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
  uint64_t abbrev_value(const qrs_value& v) const {
    if (members_.empty() || v.type == QRS_TYPE_NULL) return 0;
    if (members_[0].numeric) {
      uint64_t a;
      switch (v.type) {
        case QRS_TYPE_INTEGER: a = biased(v.u.integer); break;
        case QRS_TYPE_BOOLEAN: a = biased(v.u.boolean != 0 ? 1 : 0); break;
        case QRS_TYPE_REAL: a = real_payload(v.u.real); break;
        default: a = ~uint64_t{0}; break;
      }
      return members_[0].desc ? ~a : a;
    }
    uint64_t rank, payload = 0;
    switch (v.type) {
      case QRS_TYPE_INTEGER: rank = 1; payload = biased(v.u.integer); break;
      case QRS_TYPE_BOOLEAN: rank = 1; payload = biased(v.u.boolean != 0 ? 1 : 0); break;
      case QRS_TYPE_REAL: rank = 1; payload = real_payload(v.u.real); break;
      case QRS_TYPE_TEXT:
        rank = 2;
        if (members_[0].collation.is_binary()) payload = leading_bytes(v.u.str);
        break;
      case QRS_TYPE_BLOB: rank = 3; payload = leading_bytes(v.u.str); break;
      default:
        rank = 4;
        if (members_[0].collation.is_binary()) payload = leading_bytes(v.u.str);
        break;
    }
    uint64_t a = (rank << 61) | (payload >> 3);
    return members_[0].desc ? ~a : a;
  }
  uint64_t abbrev(const qrs_value* row) const { return members_.empty() ? 0 : abbrev_value(row[members_[0].column]); }

 private:
  static uint64_t biased(int64_t i) { return static_cast<uint64_t>(i) ^ (uint64_t{1} << 63); }
  static uint64_t real_payload(double d) {
    if (std::isnan(d) || d < -9223372036854775808.0) return 0;  // NaN orders below every number
    if (d >= 9223372036854775808.0) return ~uint64_t{0};
    return biased(static_cast<int64_t>(std::floor(d)));
  }
  static uint64_t leading_bytes(const qrs_string& b) {
    unsigned char buf[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    if (b.data) std::memcpy(buf, b.data, b.len < 8 ? b.len : 8);
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
  Packed row;
  const qrs_value* cells() const { return reinterpret_cast<const qrs_value*>(row.get() + 1); }
};

// A search position: a probe plus its abbreviation when it has a first key value.
struct SeekKey {
  const Probe* probe;
  uint64_t abbr;
  bool has_abbr;
};

inline Slot make_slot(const KeyOrder& order, Packed row) {
  uint64_t a = order.abbrev(cells_of(row).data());
  return Slot{a, std::move(row)};
}
inline SeekKey make_seek(const KeyOrder& order, const Probe& p) {
  if (p.len == 0 || order.size() == 0) return SeekKey{&p, 0, false};
  return SeekKey{&p, order.abbrev_value(p.row ? p.row[order.member(0).column] : p.key[0]), true};
}

// Sign of (slot - key), deciding by the abbreviations when they differ.
inline int compare_slot(const KeyOrder& order, const Slot& s, const SeekKey& k) {
  if (k.has_abbr && s.abbr != k.abbr) return s.abbr < k.abbr ? -1 : 1;
  return order.compare(s.cells(), *k.probe);
}

// Transparent `less` over slots and seek keys, for the B-trees.
struct SlotLess {
  using is_transparent = void;
  const KeyOrder* order = nullptr;
  bool operator()(const Slot& a, const Slot& b) const {
    if (a.abbr != b.abbr) return a.abbr < b.abbr;
    return order->compare(a.cells(), b.cells()) < 0;
  }
  bool operator()(const Slot& a, const SeekKey& k) const { return compare_slot(*order, a, k) < 0; }
  bool operator()(const SeekKey& k, const Slot& a) const { return compare_slot(*order, a, k) > 0; }
};

}  // namespace quereus::mem

#endif  // QUEREUS_MODULES_MEM_KEY_ORDER_H_
