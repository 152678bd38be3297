// modules/mem/key_order.h — the primary-key order of a memory table.
//
// Rows are ordered by their key members, each under its collation and direction. NULL
// sorts first in BOTH directions (the engine's ORDER BY puts NULLs first for ASC and
// DESC), so a forward walk of the key order is exactly `ORDER BY k1 [DESC], k2 …`.
#ifndef QUEREUS_MODULES_MEM_KEY_ORDER_H_
#define QUEREUS_MODULES_MEM_KEY_ORDER_H_

#include <cstddef>
#include <cstdint>
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

 private:
  std::vector<KeyMember> members_;
};

// Transparent `less` over shared rows and probes, for std::set / std::map.
struct RowLess {
  using is_transparent = void;
  const KeyOrder* order;
  bool operator()(const RowPtr& a, const RowPtr& b) const { return order->compare(*a, *b) < 0; }
  bool operator()(const RowPtr& a, const Probe& p) const { return order->compare(*a, p) < 0; }
  bool operator()(const Probe& p, const RowPtr& a) const { return order->compare(*a, p) > 0; }
};

}  // namespace quereus::mem

#endif  // QUEREUS_MODULES_MEM_KEY_ORDER_H_
