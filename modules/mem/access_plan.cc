// modules/mem/access_plan.cc — materializing primary-key seeks as key ranges.
#include "access_plan.h"

#include <algorithm>

namespace quereus::mem {

using sdk::Filter;
using sdk::FilterOp;

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

}  // namespace quereus::mem
