// quereus/mapping_advertisement.hpp — the shared builder of mapping advertisements (SDK
// 1.10, docs/decompositions.md): a generic storage module (mem, store) answers
// Module::mapping_advertisements with advertisements_from_tags(tables), which reads the
// `quereus.lens.decomp.*` tags its basis tables were created with. Header-only.
//
// The tags, on each member table (`<id>` names one decomposition; field names are matched
// ASCII case-insensitively, `<id>` and logical column names as written):
//
//   quereus.lens.decomp.logical.<id>   = 'Car'              the logical table (required)
//   quereus.lens.decomp.role.<id>      = 'primary-storage'  or 'auxiliary-access'
//   quereus.lens.decomp.anchor.<id>    = 'Car_core'         the anchor's relation id (required)
//   quereus.lens.decomp.keykind.<id>   = 'logical-tuple'    or 'surrogate'
//   quereus.lens.decomp.member.<id>    = 'Car_core'         this member's relation id (default:
//                                                           the table's name)
//   quereus.lens.decomp.presence.<id>  = 'mandatory'        or 'optional'
//   quereus.lens.decomp.key.<id>       = 'id'               this member's shared-key columns,
//                                                           comma-separated (an EAV member:
//                                                           default its entity column)
//   quereus.lens.decomp.col.<id>.<logicalColumn> = 'basis_column'
//   quereus.lens.decomp.pivot.<id>.entity | .attribute | .value = 'basis_column'
//   quereus.lens.decomp.access.<id>.<logicalColumn> = 'contains, prefix'  (auxiliary forms)
//
// The decomposition-scoped fields (logical, role, anchor, keykind) must agree across the
// members that spell them. The builder checks the tags' own shape and throws an Error whose
// message starts "lens.malformed-advertisement:"; the host checks the advertisement against
// the catalog (members, columns, keys) when a lens is compiled.
#ifndef QUEREUS_MAPPING_ADVERTISEMENT_HPP_
#define QUEREUS_MAPPING_ADVERTISEMENT_HPP_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "quereus/error.hpp"
#include "quereus/module.hpp"

namespace quereus::sdk {

namespace ad_detail {

inline char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }
inline bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}
inline bool istarts(std::string_view s, std::string_view p) { return s.size() >= p.size() && iequals(s.substr(0, p.size()), p); }
inline std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t')) --e;
  return std::string(s.substr(b, e - b));
}
inline std::vector<std::string> list(std::string_view s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string_view::npos) comma = s.size();
    std::string part = trim(s.substr(start, comma - start));
    if (!part.empty()) out.push_back(std::move(part));
    start = comma + 1;
  }
  return out;
}
[[noreturn]] inline void malformed(const std::string& m) { throw Error(QRS_ERROR, "lens.malformed-advertisement: " + m); }

// One decomposition's tags on one table: field → value, and the per-column maps.
struct MemberTags {
  const BasisTable* table = nullptr;
  std::map<std::string, std::string> fields;                // lower-case field → value
  std::vector<std::pair<std::string, std::string>> columns;  // col.<id>.<logical> → basis
  std::vector<std::pair<std::string, std::string>> access;   // access.<id>.<logical> → forms
  std::map<std::string, std::string> pivot;                  // entity / attribute / value
};

}  // namespace ad_detail

// Every advertisement the `quereus.lens.decomp.*` tags of `tables` describe, one per
// decomposition id, members in table order with the anchor first.
inline std::vector<MappingAdvertisement> advertisements_from_tags(const std::vector<BasisTable>& tables) {
  using namespace ad_detail;
  const std::string prefix = "quereus.lens.decomp.";
  static const char* const kScalar[] = {"logical", "role", "anchor", "keykind", "member", "presence", "key"};
  // id → its members' tags, in table order (ids in first-seen order).
  std::vector<std::string> ids;
  std::map<std::string, std::vector<MemberTags>> by_id;
  for (const BasisTable& t : tables) {
    std::map<std::string, MemberTags> mine;
    for (const auto& [key, value] : t.tags) {
      if (!istarts(key, prefix)) continue;
      const std::string rest = key.substr(prefix.size());
      const size_t dot = rest.find('.');
      if (dot == std::string::npos || dot + 1 >= rest.size())
        malformed("tag '" + key + "' on table '" + t.schema.table_name + "' names no decomposition id");
      const std::string field = rest.substr(0, dot);
      const std::string tail = rest.substr(dot + 1);
      auto member_for = [&](const std::string& id) -> MemberTags& {
        MemberTags& m = mine[id];
        m.table = &t;
        return m;
      };
      bool known = false;
      for (const char* f : kScalar)
        if (iequals(field, f)) {
          std::string lf;
          for (char c : field) lf.push_back(lower(c));
          member_for(tail).fields[lf] = trim(value);
          known = true;
        }
      if (known) continue;
      const size_t dot2 = tail.find('.');
      if ((iequals(field, "col") || iequals(field, "access") || iequals(field, "pivot")) &&
          (dot2 == std::string::npos || dot2 == 0 || dot2 + 1 >= tail.size()))
        malformed("tag '" + key + "' on table '" + t.schema.table_name + "' needs the form " + prefix + field +
                  ".<id>." + (iequals(field, "pivot") ? "<entity|attribute|value>" : "<logicalColumn>"));
      if (iequals(field, "col")) {
        member_for(tail.substr(0, dot2)).columns.emplace_back(tail.substr(dot2 + 1), trim(value));
      } else if (iequals(field, "access")) {
        member_for(tail.substr(0, dot2)).access.emplace_back(tail.substr(dot2 + 1), trim(value));
      } else if (iequals(field, "pivot")) {
        std::string part;
        for (char c : tail.substr(dot2 + 1)) part.push_back(lower(c));
        if (part != "entity" && part != "attribute" && part != "value")
          malformed("tag '" + key + "' on table '" + t.schema.table_name +
                    "': a pivot names its 'entity', 'attribute' or 'value' column");
        member_for(tail.substr(0, dot2)).pivot[part] = trim(value);
      } else {
        malformed("tag '" + key + "' on table '" + t.schema.table_name + "': unknown decomposition field '" + field +
                  "' (logical, role, anchor, keykind, member, presence, key, col, pivot, access)");
      }
    }
    for (auto& [id, m] : mine) {
      if (!by_id.count(id)) ids.push_back(id);
      by_id[id].push_back(std::move(m));
    }
  }
  std::vector<MappingAdvertisement> out;
  for (const std::string& id : ids) {
    std::vector<MemberTags>& members = by_id[id];
    // The decomposition-scoped fields, agreed across the members that spell them.
    auto agreed = [&](const char* field, bool required) {
      std::string value;
      for (const MemberTags& m : members) {
        auto it = m.fields.find(field);
        if (it == m.fields.end() || it->second.empty()) continue;
        if (!value.empty() && !iequals(value, it->second))
          malformed("decomposition '" + id + "' names two " + field + " values ('" + value + "', '" + it->second + "')");
        value = it->second;
      }
      if (required && value.empty()) malformed("decomposition '" + id + "' declares no " + field + " (" + "quereus.lens.decomp." + field + "." + id + ")");
      return value;
    };
    MappingAdvertisement ad;
    ad.logical_table = agreed("logical", true);
    const std::string role = agreed("role", false);
    if (role.empty() || iequals(role, "primary-storage")) ad.role = AdRole::kPrimaryStorage;
    else if (iequals(role, "auxiliary-access")) ad.role = AdRole::kAuxiliaryAccess;
    else malformed("decomposition '" + id + "' has role '" + role + "' (primary-storage or auxiliary-access)");
    ad.anchor_relation_id = agreed("anchor", true);
    const std::string kind = agreed("keykind", false);
    if (kind.empty() || iequals(kind, "logical-tuple")) ad.key_kind = SharedKeyKind::kLogicalTuple;
    else if (iequals(kind, "surrogate")) ad.key_kind = SharedKeyKind::kSurrogate;
    else malformed("decomposition '" + id + "' has key kind '" + kind + "' (logical-tuple or surrogate)");
    ad.id = ad.anchor_relation_id;
    for (MemberTags& m : members) {
      AdMember am;
      am.schema_name = m.table->schema.schema_name;
      am.table_name = m.table->schema.table_name;
      auto field = [&](const char* f) {
        auto it = m.fields.find(f);
        return it == m.fields.end() ? std::string() : it->second;
      };
      am.relation_id = field("member").empty() ? am.table_name : field("member");
      const std::string presence = field("presence");
      if (presence.empty() || iequals(presence, "mandatory")) am.optional = false;
      else if (iequals(presence, "optional")) am.optional = true;
      else malformed("member '" + am.relation_id + "' of decomposition '" + id + "' has presence '" + presence +
                     "' (mandatory or optional)");
      am.columns = m.columns;
      if (!m.pivot.empty()) {
        for (const char* part : {"entity", "attribute", "value"})
          if (!m.pivot.count(part))
            malformed("EAV member '" + am.relation_id + "' of decomposition '" + id + "' names no " + part +
                      " column (quereus.lens.decomp.pivot." + id + "." + part + ")");
        am.pivot = AdPivot{m.pivot["entity"], m.pivot["attribute"], m.pivot["value"]};
      }
      am.key_columns = list(field("key"));
      if (am.key_columns.empty() && am.pivot) am.key_columns.push_back(am.pivot->entity_column);
      for (const auto& [col, forms] : m.access) {
        AdAccess a;
        a.columns.push_back(col);
        a.forms = list(forms);
        if (a.forms.empty()) malformed("auxiliary member '" + am.relation_id + "' lists no access form for '" + col + "'");
        ad.access.push_back(std::move(a));
      }
      if (iequals(am.relation_id, ad.anchor_relation_id)) ad.members.insert(ad.members.begin(), std::move(am));
      else ad.members.push_back(std::move(am));
    }
    out.push_back(std::move(ad));
  }
  return out;
}

}  // namespace quereus::sdk

#endif  // QUEREUS_MAPPING_ADVERTISEMENT_HPP_
