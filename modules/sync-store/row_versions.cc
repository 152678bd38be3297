// modules/sync-store/row_versions.cc — RowVersions' record forms (docs/sync-store.md,
// "Record forms") and the column-list entry codec.
#include "row_versions.h"

#include <algorithm>
#include <cstring>

#include "../store/row_codec.h"
#include "replica_keys.h"

namespace quereus::sync {

using namespace keys;

ListSource::List ListSource::parse(std::string_view value) {
  Reader r{value};
  const uint64_t n = r.varint();
  if (n == 0 || n > 65536) corrupt("column list length");
  auto names = std::make_shared<std::vector<std::string>>();
  names->reserve(n);
  for (uint64_t i = 0; i < n; ++i) names->emplace_back(r.prefixed());
  if (!r.in.empty()) corrupt("trailing bytes in a column list");
  return names;
}


template <class String>
void RowVersions::append_fresh(String& out, const Hlc& base, uint64_t seq, std::span<const std::string> names,
                               const SiteId& local, uint32_t k) {
  size_t bound = 2 + 6 * 10 + base.site.bytes.size();  // the header's largest
  if (k == 0)
    for (const std::string& name : names) bound += 10 + name.size();
  const size_t at = out.size();
  out.resize(at + bound);
  char* const begin = out.data() + at;
  char* p = begin;
  *p++ = k ? 4 : 3;  // record version: a fresh row's, naming a column list or not
  const bool here = base.site == local;
  *p++ = here ? 1 : 0;
  p = raw_varint(p, base.wall);
  p = raw_varint(p, base.counter);
  if (!here) {
    std::memcpy(p, base.site.bytes.data(), base.site.bytes.size());
    p += base.site.bytes.size();
  }
  p = raw_varint(p, base.op_seq);
  p = raw_varint(p, seq);
  if (k) p = raw_varint(p, k);
  p = raw_varint(p, names.size());
  if (!k)
    for (const std::string& name : names) p = raw_prefixed(p, name);
  out.resize(at + static_cast<size_t>(p - begin));
}
template void RowVersions::append_fresh(std::string&, const Hlc&, uint64_t, std::span<const std::string>,
                                        const SiteId&, uint32_t);
template void RowVersions::append_fresh(std::pmr::string&, const Hlc&, uint64_t, std::span<const std::string>,
                                        const SiteId&, uint32_t);

namespace {
// Form 5's HLCs: this replica's site left implied (a flag byte), wall, counter and op as
// varints — 8 to 12 bytes where a full HLC takes 30.
void put_compact_hlc(std::string& out, const Hlc& h, const SiteId& local, bool with_op = true) {
  const bool here = h.site == local;
  out.push_back(here ? 1 : 0);
  store::put_varint(out, h.wall);
  store::put_varint(out, h.counter);
  if (with_op) store::put_varint(out, h.op_seq);
  if (!here) out.append(reinterpret_cast<const char*>(h.site.bytes.data()), h.site.bytes.size());
}
Hlc get_compact_hlc(Reader& r, const SiteId& local, bool with_op = true) {
  const uint8_t here = r.byte();
  if (here > 1) corrupt("site flag");
  Hlc h;
  h.wall = r.varint();
  const uint64_t counter = r.varint();
  if (counter > 0xFFFF) corrupt("counter");
  h.counter = static_cast<uint16_t>(counter);
  if (with_op) {
    const uint64_t op = r.varint();
    if (op > UINT32_MAX) corrupt("op_seq");
    h.op_seq = static_cast<uint32_t>(op);
  }
  if (here) {
    h.site = local;
  } else {
    const std::string_view site = r.bytes(16);
    std::memcpy(h.site.bytes.data(), site.data(), 16);
  }
  return h;
}
}  // namespace

bool RowVersions::has_tombstone(std::string_view bytes) {
  if (bytes.size() < 2) return false;
  if (bytes[0] == 2) return bytes[1] != 0;
  if (bytes[0] == 5) return (uint8_t(bytes[1]) & 1) != 0;
  return false;
}

std::string RowVersions::encode(const SiteId& local, const ListRef* list) const {
  std::string out;
  if (list && list->k == 0) list = nullptr;
  // A row whose every column is one transaction's fresh version (one base, consecutive
  // ops, one arrival, no deletion seen, no tombstone): the compact form.
  bool fresh = !tombstone && !columns.empty() && columns.size() <= UINT32_MAX;
  for (size_t i = 0; fresh && i < columns.size(); ++i) {
    const ColumnVersion& c = columns[i];
    const Hlc& b = columns[0].hlc;
    fresh = !c.seen_delete && c.seq == columns[0].seq && c.hlc.wall == b.wall && c.hlc.counter == b.counter &&
            c.hlc.site == b.site && uint64_t(c.hlc.op_seq) == uint64_t(b.op_seq) + i;
  }
  if (fresh) {
    std::vector<std::string> names;
    names.reserve(columns.size());
    for (const ColumnVersion& c : columns) names.push_back(c.name);
    // Form 4 when the names are the list's first ones, in order.
    const bool listed = list && names.size() <= list->names.size() &&
                        std::equal(names.begin(), names.end(), list->names.begin());
    append_fresh(out, columns[0].hlc, columns[0].seq, names, local, listed ? list->k : 0);
    return out;
  }
  // Form 5 (format 6): HLCs with this site implied, names as list positions.
  size_t hint = 0;  // a row's columns mostly follow the list's order: look from the last one on
  auto position = [&](std::string_view name) -> uint64_t {  // 1 + its position in the list; 0: none
    if (!list) return 0;
    const size_t n = list->names.size();
    for (size_t j = 0; j < n; ++j) {
      const size_t i = (hint + j) % n;
      if (list->names[i] == name) {
        hint = i + 1;
        return i + 1;
      }
    }
    return 0;
  };
  // A tombstone's image as values in the list's order, when its names are the list's first.
  std::string image_values;
  if (tombstone && !image.empty() && list) {
    std::vector<qrs_value> cells;
    store::decode_row(image, cells, "a tombstone's image");
    bool in_order = cells.size() % 2 == 0 && cells.size() / 2 <= list->names.size();
    std::vector<qrs_value> values;
    for (size_t i = 0; in_order && i < cells.size(); i += 2) {
      in_order = cells[i].type == QRS_TYPE_TEXT &&
                 std::string_view(cells[i].u.str.data, cells[i].u.str.len) == list->names[i / 2];
      values.push_back(cells[i + 1]);
    }
    if (in_order) image_values = store::encode_row(values);
  }
  out.push_back(5);  // record version
  // Flags: 1 a tombstone; 2 its image as (name, value) pairs; 4 its image as values in the
  // list's order.
  uint8_t flags = tombstone ? 1 : 0;
  if (tombstone && !image.empty()) flags |= image_values.empty() ? 2 : 4;
  out.push_back(static_cast<char>(flags));
  if (tombstone) {
    put_prefixed(out, address);
    put_compact_hlc(out, *tombstone, local);
    store::put_varint(out, tombstone_seq);
    // The local receive time, as its distance from the deletion's wall time (zigzag).
    const int64_t d = static_cast<int64_t>(tombstone_created - tombstone->wall);
    store::put_varint(out, (static_cast<uint64_t>(d) << 1) ^ static_cast<uint64_t>(d >> 63));
    if (flags & 2) put_prefixed(out, image);
    if (flags & 4) put_prefixed(out, image_values);
  }
  store::put_varint(out, list ? list->k : 0);
  // The distinct bases (wall, counter, site), in order of use.
  std::vector<const Hlc*> bases;
  std::vector<size_t> index(columns.size());
  auto same_base = [](const Hlc& a, const Hlc& b) { return a.wall == b.wall && a.counter == b.counter && a.site == b.site; };
  for (size_t i = 0; i < columns.size(); ++i) {
    auto it = std::find_if(bases.begin(), bases.end(), [&](const Hlc* b) { return same_base(*b, columns[i].hlc); });
    index[i] = static_cast<size_t>(it - bases.begin());
    if (it == bases.end()) bases.push_back(&columns[i].hlc);
  }
  store::put_varint(out, bases.size());
  for (const Hlc* b : bases) put_compact_hlc(out, *b, local, false);
  store::put_varint(out, columns.size());
  for (size_t i = 0; i < columns.size(); ++i) {
    const ColumnVersion& c = columns[i];
    const uint64_t at = position(c.name);
    store::put_varint(out, at);
    if (at == 0) put_prefixed(out, c.name);
    store::put_varint(out, index[i]);
    store::put_varint(out, c.hlc.op_seq);
    store::put_varint(out, c.seq);
    out.push_back(c.seen_delete ? 1 : 0);
    if (c.seen_delete) put_compact_hlc(out, *c.seen_delete, local);
  }
  return out;
}

RowVersions RowVersions::decode(std::string_view bytes, const SiteId& local, ListSource* lists, uint64_t table) {
  Reader r{bytes};
  const uint8_t version = r.byte();
  RowVersions m;
  auto list_of = [&](uint64_t k) {
    if (!lists) corrupt("a record naming a column list, read without its table's lists");
    if (k == 0 || k > UINT32_MAX) corrupt("column list number");
    return lists->get(table, static_cast<uint32_t>(k));
  };
  if (version == 3 || version == 4) {  // a fresh row's compact form (append_fresh)
    const Hlc base = get_compact_hlc(r, local, false);
    const uint64_t first_op = r.varint();
    const uint64_t seq = r.varint();
    ListSource::List list;
    if (version == 4) list = list_of(r.varint());
    const uint64_t n = r.varint();
    if (n == 0 || n > 65536 || first_op > UINT32_MAX || n - 1 > UINT32_MAX - first_op) corrupt("column count");
    if (list && n > list->size()) corrupt("column count beyond its list");
    m.columns.reserve(n);
    for (uint64_t i = 0; i < n; ++i) {
      ColumnVersion c;
      c.name = list ? (*list)[i] : std::string(r.prefixed());
      c.hlc = base;
      c.hlc.op_seq = static_cast<uint32_t>(first_op + i);
      c.seq = seq;
      m.columns.push_back(std::move(c));
    }
    if (!r.in.empty()) corrupt("trailing bytes in a row-version record");
    return m;
  }
  if (version == 5) {
    const uint8_t flags = r.byte();
    if (flags > 5 || (flags & 6) == 6 || (!(flags & 1) && flags)) corrupt("tombstone flags");
    std::string_view image_values;
    if (flags & 1) {
      m.address = std::string(r.prefixed());
      m.tombstone = get_compact_hlc(r, local);
      m.tombstone_seq = r.varint();
      const uint64_t z = r.varint();
      const int64_t d = static_cast<int64_t>(z >> 1) ^ -static_cast<int64_t>(z & 1);
      m.tombstone_created = m.tombstone->wall + static_cast<uint64_t>(d);
      if (flags & 2) m.image = std::string(r.prefixed());
      if (flags & 4) image_values = r.prefixed();
    }
    const uint64_t k = r.varint();
    ListSource::List list;
    if (k) list = list_of(k);
    if (!image_values.empty() || (flags & 4)) {
      if (!list) corrupt("an image in list order without a list");
      std::vector<qrs_value> cells;
      store::decode_row(image_values, cells, "a tombstone's image");
      if (cells.size() > list->size()) corrupt("tombstone image beyond its list");
      m.image = image_of(cells, std::span<const std::string>(*list).first(cells.size()));
    }
    const uint64_t nb = r.varint();
    if (nb > 65536) corrupt("base count");
    std::vector<Hlc> bases;
    bases.reserve(nb);
    for (uint64_t i = 0; i < nb; ++i) bases.push_back(get_compact_hlc(r, local, false));
    const uint64_t n = r.varint();
    if (n > 65536) corrupt("column count");
    m.columns.reserve(n);
    for (uint64_t i = 0; i < n; ++i) {
      ColumnVersion c;
      const uint64_t at = r.varint();
      if (at == 0) {
        c.name = std::string(r.prefixed());
      } else {
        if (!list || at > list->size()) corrupt("column position");
        c.name = (*list)[at - 1];
      }
      const uint64_t b = r.varint();
      if (b >= bases.size()) corrupt("base index");
      const uint64_t op = r.varint();
      if (op > UINT32_MAX) corrupt("op_seq");
      c.hlc = bases[b];
      c.hlc.op_seq = static_cast<uint32_t>(op);
      c.seq = r.varint();
      const uint8_t seen = r.byte();
      if (seen > 1) corrupt("seen flag");
      if (seen) c.seen_delete = get_compact_hlc(r, local);
      m.columns.push_back(std::move(c));
    }
    if (!r.in.empty()) corrupt("trailing bytes in a row-version record");
    return m;
  }
  if (version != 2) corrupt("unknown row-version record version");
  const uint8_t dead = r.byte();
  if (dead > 2) corrupt("tombstone flag");
  if (dead) {
    m.address = std::string(r.prefixed());
    m.tombstone = r.hlc();
    m.tombstone_seq = r.varint();
    m.tombstone_created = r.varint();
    if (dead == 2) m.image = std::string(r.prefixed());
  }
  uint64_t nb = r.varint();
  if (nb > 65536) corrupt("base count");
  std::vector<std::string_view> bases;
  for (uint64_t i = 0; i < nb; ++i) bases.push_back(r.bytes(kHlcBytes - 4));
  uint64_t n = r.varint();
  if (n > 65536) corrupt("column count");
  m.columns.reserve(n);
  std::string hlc;
  for (uint64_t i = 0; i < n; ++i) {
    ColumnVersion c;
    c.name = std::string(r.prefixed());
    uint64_t b = r.varint();
    if (b >= bases.size()) corrupt("base index");
    uint64_t op = r.varint();
    if (op > UINT32_MAX) corrupt("op_seq");
    hlc.assign(bases[b]);
    for (int s = 24; s >= 0; s -= 8) hlc.push_back(static_cast<char>((op >> s) & 0xFF));
    c.hlc = *Hlc::from_bytes(hlc);
    c.seq = r.varint();
    if (r.byte()) c.seen_delete = r.hlc();
    m.columns.push_back(std::move(c));
  }
  if (!r.in.empty()) corrupt("trailing bytes in a row-version record");
  return m;
}

std::string RowVersions::image_of(std::span<const qrs_value> cells, const std::vector<sdk::ColumnDef>& columns) {
  std::vector<std::string> names;
  const size_t n = std::min(cells.size(), columns.size());
  names.reserve(n);
  for (size_t i = 0; i < n; ++i) names.push_back(lower(columns[i].name));
  return image_of(cells, names);
}

std::string RowVersions::image_of(std::span<const qrs_value> cells, std::span<const std::string> names) {
  std::vector<qrs_value> pairs;
  const size_t n = std::min(cells.size(), names.size());
  pairs.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    qrs_value name{};
    name.type = QRS_TYPE_TEXT;
    name.u.str = {names[i].data(), names[i].size()};
    pairs.push_back(name);
    pairs.push_back(cells[i]);
  }
  return store::encode_row(pairs);
}

std::string RowVersions::image_of(const store::CommitObserver::NamedRow& row) {
  std::vector<qrs_value> pairs;
  for (const auto& [name, v] : row) {
    qrs_value n{};
    n.type = QRS_TYPE_TEXT;
    n.u.str = {name.data(), name.size()};
    pairs.push_back(n);
    pairs.push_back(v.to_c());
  }
  return store::encode_row(pairs);
}

store::CommitObserver::NamedRow RowVersions::named_image() const {
  store::CommitObserver::NamedRow out;
  if (image.empty()) return out;
  std::vector<qrs_value> cells;
  store::decode_row(image, cells, "a tombstone's image");
  for (size_t i = 0; i + 1 < cells.size(); i += 2) {
    if (cells[i].type != QRS_TYPE_TEXT) corrupt("tombstone image");
    out.emplace_back(std::string(cells[i].u.str.data, cells[i].u.str.len), sdk::Value::from_c(cells[i + 1]));
  }
  return out;
}

std::vector<uint64_t> RowVersions::seqs() const {
  std::vector<uint64_t> out;
  out.reserve(columns.size() + 1);
  for (const ColumnVersion& c : columns) out.push_back(c.seq);
  if (tombstone) out.push_back(tombstone_seq);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

ColumnVersion* RowVersions::column(std::string_view lower_name) {
  for (ColumnVersion& c : columns)
    if (c.name == lower_name) return &c;
  return nullptr;
}

bool ColumnVersion::outranks(const ColumnVersion& o, bool allow_resurrection) const {
  // Delete wins: a version written after seeing a deletion outranks one that had not seen
  // it, whatever their HLCs, so the winner is valid exactly when some version is — the
  // state is the same in any order of arrival. With resurrection, validity follows the HLC.
  if (!allow_resurrection && seen_delete != o.seen_delete) return !o.seen_delete || (seen_delete && *seen_delete > *o.seen_delete);
  return hlc > o.hlc;
}

bool RowVersions::valid(const ColumnVersion& c, bool allow_resurrection) const {
  if (!tombstone) return true;
  if (c.seen_delete && *c.seen_delete >= *tombstone) return true;  // written after seeing it
  return allow_resurrection && c.hlc > *tombstone;
}

}  // namespace quereus::sync
