// quereus/key_seek.hpp — access-path negotiation over a primary-key order, for modules
// that keep rows in key order (mem, store, and yours). Header-only.
//
// Every access path is a walk of the key order over a list of key ranges:
//
//   full scan    one unbounded range                      (no filter handled)
//   point seek   EQ on every key member                   (at most one row)
//   range seek   EQ on a key prefix, then an optional GT/GE and/or LT/LE on the next member
//   multi-seek   IN on the leading member (+ EQ on the following members, + a range):
//                one range per distinct IN value, walked in key order
//
// Any of them may run in reverse when that yields the requested ordering. A plan id made
// by encode_plan_id carries only the kind and the direction: open_cursor re-derives the
// seek from the filters the host reports as handled, with the same choose_seek.
//
// `Key` is the module's description of its key: `size()` and `member(m)` with `.column`
// (uint32_t), `.desc` (bool) and `.collation` (sdk::Collation). `Pinned` is the container
// of pinned filter indexes (std::vector<size_t>, or a small inline vector).
#ifndef QUEREUS_KEY_SEEK_HPP_
#define QUEREUS_KEY_SEEK_HPP_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "quereus/module.hpp"

namespace quereus::sdk {

enum class SeekKind : int64_t { kScan = 0, kPoint = 1, kRange = 2, kMulti = 3 };

template <class Pinned>
struct BasicSeek {
  SeekKind kind = SeekKind::kScan;
  Pinned pinned;   // filter pinning each leading key member (EQ; IN for member 0 of kMulti)
  int lower = -1;  // GT/GE filter on member pinned.size(), or -1
  int upper = -1;  // LT/LE filter on member pinned.size(), or -1

  // handled[i]: filter i is answered by the seek (the host need not re-check it).
  std::vector<bool> handled(size_t filter_count) const {
    std::vector<bool> out(filter_count, false);
    for (size_t f : pinned) out[f] = true;
    if (lower >= 0) out[static_cast<size_t>(lower)] = true;
    if (upper >= 0) out[static_cast<size_t>(upper)] = true;
    return out;
  }
};

struct OrderingClaim {
  bool provides = false;
  bool reverse = false;  // walk the key order backwards
};

namespace detail {

enum class SeekRole { kEq, kIn, kLower, kUpper };

inline bool plays(FilterOp op, SeekRole role) {
  switch (role) {
    case SeekRole::kEq: return op == FilterOp::kEq;
    case SeekRole::kIn: return op == FilterOp::kIn;
    case SeekRole::kLower: return op == FilterOp::kGt || op == FilterOp::kGe;
    case SeekRole::kUpper: return op == FilterOp::kLt || op == FilterOp::kLe;
  }
  return false;
}

// The first allowed filter on `column` in `role`, or -1.
inline int first_filter(std::span<const Filter> filters, const std::vector<bool>& allowed, uint32_t column,
                        SeekRole role) {
  for (size_t i = 0; i < filters.size() && i < allowed.size(); ++i)
    if (allowed[i] && filters[i].column == column && plays(filters[i].op, role)) return static_cast<int>(i);
  return -1;
}

}  // namespace detail

// The best seek over the filters with allowed[i] set (usable ones at plan time, handled
// ones at scan time). Claims at most one filter per key member and role. Allocation-free
// beyond `Pinned`.
template <class Seek, class Key>
Seek choose_seek(const Key& key, std::span<const Filter> filters, const std::vector<bool>& allowed) {
  using detail::SeekRole;
  const size_t n = key.size();
  auto find = [&](size_t m, SeekRole role) { return detail::first_filter(filters, allowed, key.member(m).column, role); };
  Seek s;
  size_t k = 0;
  for (int f; k < n && (f = find(k, SeekRole::kEq)) >= 0; ++k) s.pinned.push_back(static_cast<size_t>(f));
  const int in = k == 0 && n > 0 ? find(0, SeekRole::kIn) : -1;
  const bool multi = in >= 0;
  if (multi) {
    s.pinned.push_back(static_cast<size_t>(in));
    for (int f; (k = s.pinned.size()) < n && (f = find(k, SeekRole::kEq)) >= 0;) s.pinned.push_back(static_cast<size_t>(f));
  }
  if (k < n) {
    s.lower = find(k, SeekRole::kLower);
    s.upper = find(k, SeekRole::kUpper);
  }
  if (multi) {
    s.kind = SeekKind::kMulti;
  } else if (n > 0 && k == n) {
    s.kind = SeekKind::kPoint;
  } else if (k > 0 || s.lower >= 0 || s.upper >= 0) {
    s.kind = SeekKind::kRange;
  }
  return s;
}

// Whether walking `seek` (forwards or backwards) yields `ordering`.
template <class Seek, class Key>
OrderingClaim claim_ordering(const TableSchema& schema, const Key& key, const Seek& seek,
                             std::span<const OrderSpec> ordering) {
  if (ordering.empty()) return {};
  const size_t n = key.size();
  if (n == 0 || seek.kind == SeekKind::kPoint) return {true, false};  // at most one row
  // Members pinned to a single value are constant: they may be skipped or named freely.
  auto single = [&](size_t m) { return m < seek.pinned.size() && !(seek.kind == SeekKind::kMulti && m == 0); };
  auto is_constant = [&](uint32_t column) {
    for (size_t m = 0; m < n; ++m)
      if (single(m) && key.member(m).column == column) return true;
    return false;
  };
  size_t m = 0;
  int dir = 0;  // 1 forwards, -1 backwards, 0 undecided
  bool nullable = false;
  for (const OrderSpec& spec : ordering) {
    if (spec.column >= schema.columns.size()) return {};
    if (is_constant(spec.column)) continue;
    while (m < n && single(m)) ++m;
    if (m == n) break;  // the whole key is ordered: rows are unique, later terms never tie-break
    const auto& km = key.member(m);
    const ColumnDef& col = schema.columns[spec.column];
    if (km.column != spec.column || km.collation.name() != col.collation.name()) return {};
    int d = spec.desc == km.desc ? 1 : -1;
    if (dir != 0 && d != dir) return {};
    dir = d;
    nullable = nullable || !col.not_null;
    ++m;
  }
  // NULLs sort first in both directions; walking backwards would put them last.
  if (dir < 0 && nullable) return {};
  return {true, dir < 0};
}

// A handled filter the seek's ranges do not answer exactly (a range bound, a NULL inside a
// range, a filter on a non-key column), re-checked on every row the seek yields.
struct FilterCheck {
  Filter filter;
  Collation collation;

  bool matches(const qrs_value* row) const {
    const qrs_value& cell = row[filter.column];
    bool null = cell.type == QRS_TYPE_NULL;
    if (filter.op == FilterOp::kIsNull) return null;
    if (filter.op == FilterOp::kIsNotNull) return !null;
    if (null) return false;
    if (filter.op == FilterOp::kIn) {
      for (const Value& v : filter.in_values)
        if (!v.is_null() && compare_values(cell, v.to_c(), collation) == 0) return true;
      return false;
    }
    if (filter.value.is_null()) return false;
    int c = compare_values(cell, filter.value.to_c(), collation);
    switch (filter.op) {
      case FilterOp::kEq: return c == 0;
      case FilterOp::kGt: return c > 0;
      case FilterOp::kGe: return c >= 0;
      case FilterOp::kLt: return c < 0;
      case FilterOp::kLe: return c <= 0;
      default: return true;
    }
  }
};

// The checks a cursor runs for `seek` at open_cursor: every handled filter but those
// pinning a key member (answered exactly by the ranges), compared under the key member's
// collation when the column is one, else the column's. *limit: the scan's pushed limit,
// or -1 when some filter is not handled (it runs above the scan, so a limit is unsafe).
template <class Checks, class Seek, class Key>
Checks residual_checks(const TableSchema& schema, const Key& key, const Seek& seek, const ScanArgs& args,
                       int64_t* limit) {
  Checks checks;
  bool all_handled = true;
  for (size_t i = 0; i < args.filters.size(); ++i) {
    const Filter& f = args.filters[i];
    if (i >= args.handled.size() || !args.handled[i]) {
      all_handled = false;
      continue;
    }
    if (f.column >= schema.columns.size()) throw Error::misuse("filter on column " + std::to_string(f.column));
    bool pinned = false;
    for (size_t p : seek.pinned) pinned = pinned || p == i;
    if (pinned) continue;
    Collation coll = schema.columns[f.column].collation;
    for (size_t m = 0; m < key.size(); ++m)
      if (key.member(m).column == f.column) coll = key.member(m).collation;
    checks.push_back(FilterCheck{f, std::move(coll)});
  }
  *limit = all_handled && args.limit >= 0 ? args.limit : -1;
  return checks;
}

inline constexpr int64_t kReverseBit = 16;
inline int64_t encode_plan_id(SeekKind kind, bool reverse) {
  return static_cast<int64_t>(kind) | (reverse ? kReverseBit : 0);
}
inline bool plan_reverse(int64_t plan_id) { return (plan_id & kReverseBit) != 0; }

// "<module> pk range seek eq=1 +range, ordered" — the plan's explain text.
template <class Seek>
std::string describe_seek(const std::string& module, const Seek& seek, const OrderingClaim& claim) {
  std::string s = module;
  switch (seek.kind) {
    case SeekKind::kScan: s += " full scan"; break;
    case SeekKind::kPoint: s += " pk point seek"; break;
    case SeekKind::kRange: s += " pk range seek"; break;
    case SeekKind::kMulti: s += " pk multi-seek (IN)"; break;
  }
  if (seek.kind == SeekKind::kRange || seek.kind == SeekKind::kMulti) {
    s += " eq=" + std::to_string(seek.pinned.size() - (seek.kind == SeekKind::kMulti ? 1 : 0));
    if (seek.lower >= 0 || seek.upper >= 0) s += " +range";
  }
  if (claim.provides) s += claim.reverse ? ", ordered (reverse)" : ", ordered";
  return s;
}

// Cost (~1 per row touched plus a tree descent per seek) and matched-row estimate of
// `seek` over `row_count` rows. Rough is fine: it only has to rank a seek below a scan and
// a point seek below a range.
template <class Seek, class Key>
void estimate_seek(const Key& key, const Seek& seek, std::span<const Filter> filters, double row_count, double* cost,
                   double* rows) {
  const double n = std::max(row_count, 1.0);
  const double descent = std::log2(n + 1) + 1;
  if (seek.kind == SeekKind::kScan) {
    *rows = n;
    *cost = n + 1;
    return;
  }
  double seeks = 1;
  if (seek.kind == SeekKind::kMulti) seeks = std::max<double>(filters[seek.pinned[0]].in_count, 1);
  double per = n;
  if (seek.pinned.size() == key.size()) {
    per = 1;
  } else {
    // Without statistics an equality prefix of a key is taken to match a handful of rows
    // (as SQLite assumes ~10 per indexed equality): a seek on it then ranks far below a
    // scan on a large table, which is what an index is declared for.
    for (size_t i = 0; i < seek.pinned.size(); ++i) per /= 10;
    if (!seek.pinned.empty()) per = std::min(per, 10.0);
    // A range with both bounds is taken to keep 1/64 of the rows, with one bound 1/4 (as
    // SQLite assumes without statistics): a bounded range then ranks as a few rows, so a
    // join over it probes the inner side per row instead of hashing all of it.
    if (seek.lower >= 0 && seek.upper >= 0) {
      per /= 64;
    } else if (seek.lower >= 0 || seek.upper >= 0) {
      per *= 0.25;
    }
  }
  *rows = seeks * std::max(per, 1.0);
  *cost = seeks * descent + *rows;
}

// A key-ordered table's whole best_access_plan answer: the seek over the usable filters,
// the ordering claim, the estimate over `row_count` rows, the plan id and the explain text
// ("<module> pk …"). open_cursor re-derives the seek from the filters the host reports
// handled (choose_seek over ScanArgs::handled) and the direction from the plan id.
template <class Seek, class Key>
PlanResult plan_key_access(const std::string& module, const TableSchema& schema, const Key& key,
                           const PlanRequest& request, double row_count) {
  std::vector<bool> usable(request.filters.size());
  for (size_t i = 0; i < usable.size(); ++i) usable[i] = request.filters[i].usable;
  const Seek seek = choose_seek<Seek>(key, request.filters, usable);
  const OrderingClaim claim = claim_ordering(schema, key, seek, request.ordering);
  PlanResult r;
  r.handled = seek.handled(request.filters.size());
  estimate_seek(key, seek, request.filters, row_count, &r.cost, &r.rows);
  r.provides_ordering = claim.provides;
  r.plan_id = encode_plan_id(seek.kind, claim.reverse);
  r.explain = describe_seek(module, seek, claim);
  return r;
}

}  // namespace quereus::sdk

#endif  // QUEREUS_KEY_SEEK_HPP_
