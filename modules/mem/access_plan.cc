// modules/mem/access_plan.cc — choosing and materializing primary-key seeks.
#include "access_plan.h"

#include <algorithm>
#include <cmath>

namespace quereus::mem {

using sdk::Filter;
using sdk::FilterOp;

std::vector<bool> Seek::handled(size_t filter_count) const {
  std::vector<bool> out(filter_count, false);
  for (size_t f : pinned) out[f] = true;
  if (lower >= 0) out[static_cast<size_t>(lower)] = true;
  if (upper >= 0) out[static_cast<size_t>(upper)] = true;
  return out;
}

Seek choose_seek(const KeyOrder& order, std::span<const Filter> filters, const std::vector<bool>& allowed) {
  size_t n = order.size();
  absl::InlinedVector<int, 4> eq(n, -1), in(n, -1), lo(n, -1), hi(n, -1);
  for (size_t i = 0; i < filters.size(); ++i) {
    if (i >= allowed.size() || !allowed[i]) continue;
    const Filter& f = filters[i];
    for (size_t m = 0; m < n; ++m) {
      if (order.member(m).column != f.column) continue;
      int* slot = nullptr;
      switch (f.op) {
        case FilterOp::kEq: slot = &eq[m]; break;
        case FilterOp::kIn: slot = &in[m]; break;
        case FilterOp::kGt:
        case FilterOp::kGe: slot = &lo[m]; break;
        case FilterOp::kLt:
        case FilterOp::kLe: slot = &hi[m]; break;
        default: break;
      }
      if (slot && *slot < 0) *slot = static_cast<int>(i);
    }
  }
  Seek s;
  size_t k = 0;
  while (k < n && eq[k] >= 0) s.pinned.push_back(static_cast<size_t>(eq[k++]));
  bool multi = k == 0 && n > 0 && in[0] >= 0;
  if (multi) {
    s.pinned.push_back(static_cast<size_t>(in[0]));
    for (k = 1; k < n && eq[k] >= 0; ++k) s.pinned.push_back(static_cast<size_t>(eq[k]));
  }
  if (k < n) {
    s.lower = lo[k];
    s.upper = hi[k];
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

OrderingClaim claim_ordering(const sdk::TableSchema& schema, const KeyOrder& order, const Seek& seek,
                             std::span<const sdk::OrderSpec> ordering) {
  if (ordering.empty()) return {};
  size_t n = order.size();
  if (n == 0 || seek.kind == SeekKind::kPoint) return {true, false};  // at most one row
  // Members pinned to a single value are constant: they may be skipped or named freely.
  std::vector<bool> single(n, false);
  for (size_t m = 0; m < seek.pinned.size(); ++m) single[m] = !(seek.kind == SeekKind::kMulti && m == 0);
  auto is_constant = [&](uint32_t column) {
    for (size_t m = 0; m < n; ++m)
      if (single[m] && order.member(m).column == column) return true;
    return false;
  };
  size_t m = 0;
  int dir = 0;  // 1 forwards, -1 backwards, 0 undecided
  bool nullable = false;
  for (const sdk::OrderSpec& spec : ordering) {
    if (spec.column >= schema.columns.size()) return {};
    if (is_constant(spec.column)) continue;
    while (m < n && single[m]) ++m;
    if (m == n) break;  // the whole key is ordered: rows are unique, later terms never tie-break
    const KeyMember& km = order.member(m);
    const sdk::ColumnDef& col = schema.columns[spec.column];
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

namespace {

bool inclusive(const Filter& f) { return f.op == FilterOp::kGe || f.op == FilterOp::kLe; }

Bound extend(const Values& prefix, const Value& v, Probe::Side side) {
  Bound b{prefix, side};
  b.prefix.push_back(v);
  return b;
}

KeyRange make_range(const KeyOrder& order, const Seek& seek, std::span<const Filter> filters,
                    const Values& prefix) {
  size_t m = prefix.size();
  if (m == order.size() || (seek.lower < 0 && seek.upper < 0))
    return KeyRange{Bound{prefix, Probe::kBefore}, Bound{prefix, Probe::kAfter}};
  const Filter* lo = seek.lower >= 0 ? &filters[static_cast<size_t>(seek.lower)] : nullptr;
  const Filter* hi = seek.upper >= 0 ? &filters[static_cast<size_t>(seek.upper)] : nullptr;
  // In key order a DESC member runs from high to low values.
  bool desc = order.member(m).desc;
  const Filter* first = desc ? hi : lo;
  const Filter* last = desc ? lo : hi;
  KeyRange r;
  r.lo = first ? extend(prefix, first->value, inclusive(*first) ? Probe::kBefore : Probe::kAfter)
               : Bound{prefix, Probe::kBefore};
  r.hi = last ? extend(prefix, last->value, inclusive(*last) ? Probe::kAfter : Probe::kBefore)
              : Bound{prefix, Probe::kAfter};
  return r;
}

}  // namespace

KeyRanges build_ranges(const KeyOrder& order, const Seek& seek, std::span<const Filter> filters) {
  KeyRanges out;
  if (seek.kind == SeekKind::kScan) {
    out.push_back(KeyRange{Bound{{}, Probe::kBefore}, Bound{{}, Probe::kAfter}});
    return out;
  }
  bool multi = seek.kind == SeekKind::kMulti;
  Values tail;  // the EQ values after the (IN) head
  for (size_t i = multi ? 1 : 0; i < seek.pinned.size(); ++i) {
    const Value& v = filters[seek.pinned[i]].value;
    if (v.is_null()) return out;  // `k = NULL` matches nothing
    tail.push_back(v);
  }
  for (int f : {seek.lower, seek.upper})
    if (f >= 0 && filters[static_cast<size_t>(f)].value.is_null()) return out;
  if (!multi) {
    out.push_back(make_range(order, seek, filters, tail));
    return out;
  }
  std::vector<Value> heads;
  for (const Value& v : filters[seek.pinned[0]].in_values)
    if (!v.is_null()) heads.push_back(v);
  std::sort(heads.begin(), heads.end(),
            [&](const Value& a, const Value& b) { return order.compare_member(0, a, b) < 0; });
  heads.erase(std::unique(heads.begin(), heads.end(),
                          [&](const Value& a, const Value& b) { return order.compare_member(0, a, b) == 0; }),
              heads.end());
  for (Value& h : heads) {
    Values prefix{std::move(h)};
    prefix.insert(prefix.end(), tail.begin(), tail.end());
    out.push_back(make_range(order, seek, filters, prefix));
  }
  return out;
}

void estimate(const KeyOrder& order, const Seek& seek, std::span<const Filter> filters, double row_count,
              double* cost, double* rows) {
  double n = std::max(row_count, 1.0);
  double probe = std::log2(n + 1) + 1;  // one descent of the tree
  if (seek.kind == SeekKind::kScan) {
    *rows = n;
    *cost = n + 1;
    return;
  }
  double seeks = 1;
  if (seek.kind == SeekKind::kMulti) seeks = std::max<double>(filters[seek.pinned[0]].in_count, 1);
  double per = n;
  if (seek.pinned.size() == order.size()) {
    per = 1;
  } else {
    for (size_t i = 0; i < seek.pinned.size(); ++i) per /= 10;
    if (seek.lower >= 0 && seek.upper >= 0) {
      per *= 0.25;
    } else if (seek.lower >= 0 || seek.upper >= 0) {
      per *= 0.33;
    }
  }
  per = std::max(per, 1.0);
  *rows = seeks * per;
  *cost = seeks * probe + *rows;
}

std::string describe(const Seek& seek, const OrderingClaim& claim) {
  std::string s;
  switch (seek.kind) {
    case SeekKind::kScan: s = "mem full scan"; break;
    case SeekKind::kPoint: s = "mem pk point seek"; break;
    case SeekKind::kRange: s = "mem pk range seek"; break;
    case SeekKind::kMulti: s = "mem pk multi-seek (IN)"; break;
  }
  if (seek.kind == SeekKind::kRange || seek.kind == SeekKind::kMulti) {
    s += " eq=" + std::to_string(seek.pinned.size() - (seek.kind == SeekKind::kMulti ? 1 : 0));
    if (seek.lower >= 0 || seek.upper >= 0) s += " +range";
  }
  if (claim.provides) s += claim.reverse ? ", ordered (reverse)" : ", ordered";
  return s;
}

}  // namespace quereus::mem
