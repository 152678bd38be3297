// modules/store/store_plan.cc — choosing and materializing primary-key seeks.
#include "store_plan.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace quereus::store {

using sdk::Filter;
using sdk::FilterOp;

std::vector<bool> Seek::handled(size_t filter_count) const {
  std::vector<bool> out(filter_count, false);
  for (size_t f : pinned) out[f] = true;
  if (lower >= 0) out[static_cast<size_t>(lower)] = true;
  if (upper >= 0) out[static_cast<size_t>(upper)] = true;
  return out;
}

Seek choose_seek(const KeyCodec& codec, std::span<const Filter> filters, const std::vector<bool>& allowed) {
  size_t n = codec.size();
  std::vector<int> eq(n, -1), in(n, -1), lo(n, -1), hi(n, -1);
  for (size_t i = 0; i < filters.size(); ++i) {
    if (i >= allowed.size() || !allowed[i]) continue;
    const Filter& f = filters[i];
    for (size_t m = 0; m < n; ++m) {
      if (codec.member(m).column != f.column) continue;
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

OrderingClaim claim_ordering(const sdk::TableSchema& schema, const KeyCodec& codec, const Seek& seek,
                             std::span<const sdk::OrderSpec> ordering) {
  if (ordering.empty()) return {};
  size_t n = codec.size();
  if (n == 0 || seek.kind == SeekKind::kPoint) return {true, false};  // at most one row
  std::vector<bool> single(n, false);
  for (size_t m = 0; m < seek.pinned.size(); ++m) single[m] = !(seek.kind == SeekKind::kMulti && m == 0);
  auto is_constant = [&](uint32_t column) {
    for (size_t m = 0; m < n; ++m)
      if (single[m] && codec.member(m).column == column) return true;
    return false;
  };
  size_t m = 0;
  int dir = 0;
  bool nullable = false;
  for (const sdk::OrderSpec& spec : ordering) {
    if (spec.column >= schema.columns.size()) return {};
    if (is_constant(spec.column)) continue;
    while (m < n && single[m]) ++m;
    if (m == n) break;  // the whole key is ordered: later terms never tie-break
    const KeyMember& km = codec.member(m);
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

// `prefix` ‖ component of `v` for member m.
std::string with(const KeyCodec& codec, const std::string& prefix, size_t m, const sdk::Value& v) {
  std::string out = prefix;
  const KeyMember& km = codec.member(m);
  encode_component(out, v.to_c(), km.normalizer, km.desc);
  return out;
}

ByteRange make_range(const KeyCodec& codec, const Seek& seek, std::span<const Filter> filters,
                     const std::string& prefix, size_t m) {
  if (m == codec.size()) return ByteRange{prefix, KeyCodec::after(prefix), true};
  if (seek.lower < 0 && seek.upper < 0) return ByteRange{prefix, KeyCodec::after(prefix), false};
  const Filter* lo = seek.lower >= 0 ? &filters[static_cast<size_t>(seek.lower)] : nullptr;
  const Filter* hi = seek.upper >= 0 ? &filters[static_cast<size_t>(seek.upper)] : nullptr;
  // In key order a DESC member runs from high to low values.
  bool desc = codec.member(m).desc;
  const Filter* first = desc ? hi : lo;
  const Filter* last = desc ? lo : hi;
  ByteRange r;
  if (first) {
    std::string b = with(codec, prefix, m, first->value);
    r.lo = inclusive(*first) ? b : KeyCodec::after(b);
  } else {
    r.lo = prefix;
  }
  if (last) {
    std::string b = with(codec, prefix, m, last->value);
    r.hi = inclusive(*last) ? KeyCodec::after(b) : b;
  } else {
    r.hi = KeyCodec::after(prefix);
  }
  return r;
}

}  // namespace

std::vector<ByteRange> build_ranges(const KeyCodec& codec, const Seek& seek, std::span<const Filter> filters) {
  std::vector<ByteRange> out;
  if (seek.kind == SeekKind::kScan) {
    out.push_back(ByteRange{std::string(), std::string(), false});
    return out;
  }
  bool multi = seek.kind == SeekKind::kMulti;
  for (size_t i = 0; i < seek.pinned.size(); ++i)
    if (!(multi && i == 0) && filters[seek.pinned[i]].value.is_null()) return out;  // `k = NULL` matches nothing
  for (int f : {seek.lower, seek.upper})
    if (f >= 0 && filters[static_cast<size_t>(f)].value.is_null()) return out;
  size_t first = multi ? 1 : 0;
  auto tail = [&](std::string prefix) {
    for (size_t i = first; i < seek.pinned.size(); ++i) prefix = with(codec, prefix, i, filters[seek.pinned[i]].value);
    return prefix;
  };
  if (!multi) {
    out.push_back(make_range(codec, seek, filters, tail(std::string()), seek.pinned.size()));
    return out;
  }
  // One range per distinct IN value, in key order (the encoded bytes are that order).
  std::vector<std::string> heads;
  for (const sdk::Value& v : filters[seek.pinned[0]].in_values)
    if (!v.is_null()) heads.push_back(with(codec, std::string(), 0, v));
  std::sort(heads.begin(), heads.end());
  heads.erase(std::unique(heads.begin(), heads.end()), heads.end());
  for (std::string& h : heads) out.push_back(make_range(codec, seek, filters, tail(std::move(h)), seek.pinned.size()));
  return out;
}

void estimate(const KeyCodec& codec, const Seek& seek, std::span<const Filter> filters, double row_count,
              double* cost, double* rows) {
  double n = std::max(row_count, 1.0);
  double probe = std::log2(n + 1) + 1;
  if (seek.kind == SeekKind::kScan) {
    *rows = n;
    *cost = n + 1;
    return;
  }
  double seeks = 1;
  if (seek.kind == SeekKind::kMulti) seeks = std::max<double>(filters[seek.pinned[0]].in_count, 1);
  double per = n;
  if (seek.pinned.size() == codec.size()) {
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
    case SeekKind::kScan: s = "store full scan"; break;
    case SeekKind::kPoint: s = "store pk point seek"; break;
    case SeekKind::kRange: s = "store pk range seek"; break;
    case SeekKind::kMulti: s = "store pk multi-seek (IN)"; break;
  }
  if (seek.kind == SeekKind::kRange || seek.kind == SeekKind::kMulti) {
    s += " eq=" + std::to_string(seek.pinned.size() - (seek.kind == SeekKind::kMulti ? 1 : 0));
    if (seek.lower >= 0 || seek.upper >= 0) s += " +range";
  }
  if (claim.provides) s += claim.reverse ? ", ordered (reverse)" : ", ordered";
  return s;
}

}  // namespace quereus::store
