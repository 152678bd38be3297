// modules/store/store_plan.cc — materializing primary-key seeks as encoded byte ranges.
#include "store_plan.h"

#include <algorithm>
#include <utility>

namespace quereus::store {

using sdk::Filter;
using sdk::FilterOp;

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

}  // namespace quereus::store
