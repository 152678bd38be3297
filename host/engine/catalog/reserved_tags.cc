// The reserved-tag registry (catalog/reserved_tags.h).
#include "catalog/reserved_tags.h"

#include <array>
#include <string>

namespace quereus {

namespace {

constexpr std::string_view kReservedPrefix = "quereus.";

// The sites a reserved key may sit at, as a bit set over TagSite.
using Sites = unsigned;
constexpr Sites bit(TagSite s) { return 1u << static_cast<unsigned>(s); }
constexpr Sites kAllSchemaSites = bit(TagSite::kPhysicalTable) | bit(TagSite::kPhysicalColumn) |
                                  bit(TagSite::kPhysicalConstraint) | bit(TagSite::kPhysicalIndex) |
                                  bit(TagSite::kViewDdl) | bit(TagSite::kLogicalTable) |
                                  bit(TagSite::kLogicalColumn) | bit(TagSite::kLogicalConstraint);

enum class Shape {
  kString,     // any string
  kBoolean,    // true / false
  kEviction,   // 'never' | 'immediate' | a non-negative number of milliseconds
  kRationale,  // a string; an empty one is only a warning (the ack still applies)
};

// One registry entry: the key itself, or (`family`) every key under the prefix.
struct ReservedTag {
  std::string_view key;
  bool family;
  Sites sites;
  Shape shape;
};

// The reserved `quereus.*` keys (the reference's schema/reserved-tags.ts). The retired
// `quereus.update.*` family is deliberately absent: such a key is unknown now.
constexpr std::array<ReservedTag, 12> kRegistry{{
    // Rename hints read by the declarative differ (inert everywhere else).
    {"quereus.id", false, kAllSchemaSites, Shape::kString},
    {"quereus.previous_name", false, kAllSchemaSites, Shape::kString},
    // A UNIQUE constraint's backing structure shown as an index.
    {"quereus.expose_implicit_index", false, bit(TagSite::kPhysicalConstraint) | bit(TagSite::kLogicalConstraint),
     Shape::kBoolean},
    // Sync: replicate a maintained table's maintenance writes; basis-table eviction.
    {"quereus.sync.replicate", false, bit(TagSite::kPhysicalTable) | bit(TagSite::kViewDdl), Shape::kBoolean},
    {"quereus.sync.evict", false, bit(TagSite::kPhysicalTable), Shape::kEviction},
    // A maintained table a source ALTER left stale (set by the engine, cleared by REFRESH).
    {"quereus.mv.stale", false, bit(TagSite::kPhysicalTable) | bit(TagSite::kViewDdl), Shape::kString},
    // Lenses: per-logical-column writable intent, access hints, acknowledgements and
    // escalation policy on the logical side; decomposition advertisements on the basis.
    {"quereus.lens.writable", false, bit(TagSite::kLogicalColumn), Shape::kBoolean},
    {"quereus.lens.access.", true, bit(TagSite::kLogicalTable), Shape::kString},
    {"quereus.lens.ack.", true, bit(TagSite::kLogicalTable) | bit(TagSite::kLogicalConstraint), Shape::kRationale},
    {"quereus.lens.policy.error-on", false, bit(TagSite::kLogicalTable), Shape::kString},
    {"quereus.lens.policy.require-ack", false, bit(TagSite::kLogicalTable), Shape::kString},
    {"quereus.lens.decomp.", true, bit(TagSite::kPhysicalTable), Shape::kString},
}};

const char* site_noun(TagSite site) {
  switch (site) {
    case TagSite::kPhysicalTable: return "a table";
    case TagSite::kPhysicalColumn: return "a column";
    case TagSite::kPhysicalConstraint: return "a constraint";
    case TagSite::kPhysicalIndex: return "an index";
    case TagSite::kViewDdl: return "a view";
    case TagSite::kLogicalTable: return "a logical table";
    case TagSite::kLogicalColumn: return "a logical column";
    case TagSite::kLogicalConstraint: return "a logical constraint";
    case TagSite::kDmlStatement: return "a DML statement";
  }
  return "this object";
}

std::string legal_sites(Sites sites) {
  std::string out;
  for (unsigned s = 0; s <= static_cast<unsigned>(TagSite::kDmlStatement); ++s)
    if (sites & (1u << s)) out += (out.empty() ? "" : ", ") + std::string(site_noun(static_cast<TagSite>(s)));
  return out;
}

const ReservedTag* find_reserved(std::string_view key) {
  for (const ReservedTag& r : kRegistry) {
    if (r.family ? key.size() > r.key.size() && key.substr(0, r.key.size()) == r.key : key == r.key) return &r;
  }
  return nullptr;
}

}  // namespace

void validate_reserved_tag(std::string_view key, const TagValue* value, TagSite site, std::optional<SourceSite> where) {
  if (key.compare(0, kReservedPrefix.size(), kReservedPrefix) != 0) return;
  const std::string name(key);
  const ReservedTag* r = find_reserved(key);
  if (!r)
    throw Error(StatusCode::kError,
                "Unknown reserved tag '" + name + "' on " + site_noun(site) +
                    " (unknown-reserved-tag: keys under 'quereus.' are reserved for the engine)",
                where);
  if (!(r->sites & bit(site)))
    throw Error(StatusCode::kError,
                "Reserved tag '" + name + "' is not allowed on " + site_noun(site) +
                    (r->sites ? " (it belongs on " + legal_sites(r->sites) + ")" : std::string()),
                where);
  const TagValue v = value ? *value : TagValue();
  bool ok = true;
  const char* expected = "";
  switch (r->shape) {
    case Shape::kString:
    case Shape::kRationale:
      ok = std::holds_alternative<std::string>(v);
      expected = "a string";
      break;
    case Shape::kBoolean:
      ok = std::holds_alternative<bool>(v);
      expected = "a boolean (true or false)";
      break;
    case Shape::kEviction:
      if (const auto* str = std::get_if<std::string>(&v)) ok = *str == "never" || *str == "immediate";
      else if (const auto* i = std::get_if<int64_t>(&v)) ok = *i >= 0;
      else if (const auto* d = std::get_if<double>(&v)) ok = *d >= 0;
      else ok = false;
      expected = "'never', 'immediate' or a non-negative number of milliseconds";
      break;
  }
  if (!ok)
    throw Error(StatusCode::kError,
                "Reserved tag '" + name + "' expects " + expected + ", got " + (value ? tag_json(v) : "no value"),
                where);
}

void validate_reserved_tags(const TagSet& tags, TagSite site) {
  for (const auto& [key, value] : tags.entries()) validate_reserved_tag(key, &value, site);
}

}  // namespace quereus
