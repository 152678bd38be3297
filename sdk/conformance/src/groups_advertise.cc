// Group 12: mapping advertisements (SDK 1.10, abi.h mapping_advertisements;
// docs/decompositions.md). A module that fills the slot tells the lens compiler how its
// basis tables jointly back a logical table. A generic module builds them from the
// `quereus.lens.decomp.*` tags of its tables (quereus/mapping_advertisement.hpp): the
// advertisement must say what the tags say (anchor first, presence, per-column backing,
// shared key, EAV pivot), a lens over it must read every logical row — optional members
// outer-joined, EAV attributes pivoted —, and an incoherent advertisement must fail the
// APPLY SCHEMA with `lens.malformed-advertisement` before anything is deployed. A module
// whose slot is empty (name-match only) skips the group; one that advertises but not
// from tags skips the tag-driven tests.
#include "harness.h"

#include <algorithm>

#include "catalog/catalog.h"
#include "catalog/module.h"

namespace quereus::conformance::detail {

namespace {

// The tags of one member of decomposition `d1` of logical table Thing, anchored on
// thing_core.
std::string tags(const std::string& presence, const std::string& extra) {
  return " with tags (\"quereus.lens.decomp.logical.d1\" = 'Thing', "
         "\"quereus.lens.decomp.anchor.d1\" = 'thing_core', "
         "\"quereus.lens.decomp.presence.d1\" = '" +
         presence + "', \"quereus.lens.decomp.key.d1\" = 'id'" + extra + ")";
}

// thing_core (anchor: id, name) + thing_size (optional: size ← grams).
void create_tagged(Env& env) {
  env.exec("create table thing_core (id integer primary key, name text)" +
           tags("mandatory", ", \"quereus.lens.decomp.col.d1.id\" = 'id', \"quereus.lens.decomp.col.d1.name\" = 'name'"));
  env.exec("create table thing_size (id integer primary key, grams integer null)" +
           tags("optional", ", \"quereus.lens.decomp.col.d1.size\" = 'grams'"));
}

// What the module advertises over its tables of `main`; skips when the slot is empty.
std::vector<MappingAdvertisement> advertised(Env& env, const std::vector<std::string>& names) {
  std::vector<const TableSchema*> tables;
  std::shared_ptr<TableEntry> first;
  std::vector<std::shared_ptr<TableEntry>> keep;
  for (const std::string& n : names) {
    keep.push_back(env.table(n));
    tables.push_back(&keep.back()->schema);
  }
  std::optional<std::vector<MappingAdvertisement>> ads;
  try {
    ads = keep.front()->module->mapping_advertisements("main", tables);
  } catch (const std::exception& e) {
    fail(std::string("mapping_advertisements failed: ") + e.what());
  }
  if (!ads) skip("the module advertises nothing (its mapping_advertisements slot is empty: name-match only)");
  return *ads;
}

const MappingAdvertisement* find_thing(const std::vector<MappingAdvertisement>& ads) {
  for (const MappingAdvertisement& a : ads)
    if (a.logical_table == "Thing") return &a;
  return nullptr;
}

// Skips unless the module advertises decomposition d1 from the tags.
void require_tag_builder(Env& env) {
  if (!find_thing(advertised(env, {"thing_core", "thing_size"})))
    skip("the module does not advertise from quereus.lens.decomp.* tags");
}

void deploy_thing(Env& env) {
  env.exec("declare logical schema lx { table Thing (id integer primary key, name text, size integer null) }");
  env.exec("declare lens for lx over main { }");
  env.exec("apply schema lx");
}

// ---------------------------------------------------------------- tests

// The advertisement says what the tags say: anchor first and mandatory, the optional
// member after it, each column's backing, the shared key.
void reports_tagged_decomposition(Env& env) {
  create_tagged(env);
  std::vector<MappingAdvertisement> ads = advertised(env, {"thing_size", "thing_core"});
  const MappingAdvertisement* ad = find_thing(ads);
  if (!ad) skip("the module does not advertise from quereus.lens.decomp.* tags");
  expect_eq("role", "primary-storage", ad->auxiliary ? "auxiliary-access" : "primary-storage");
  expect_eq("anchor", "thing_core", ad->anchor);
  expect_eq("shared key kind", "logical-tuple", ad->surrogate ? "surrogate" : "logical-tuple");
  expect_eq("member count", "2", std::to_string(ad->members.size()));
  const AdvertisedMember& a = ad->members[0];
  const AdvertisedMember& b = ad->members[1];
  expect_eq("first member (the anchor)", "thing_core", a.table_name);
  expect_eq("anchor presence", "mandatory", a.optional ? "optional" : "mandatory");
  expect_eq("second member", "thing_size", b.table_name);
  expect_eq("second member presence", "optional", b.optional ? "optional" : "mandatory");
  auto render = [](const AdvertisedMember& m) {
    std::string s;
    for (const auto& [l, c] : m.columns) s += (s.empty() ? "" : ",") + l + "<-" + c;
    return s;
  };
  expect_eq("anchor columns", "id<-id,name<-name", render(a));
  expect_eq("optional member columns", "size<-grams", render(b));
  auto keys = [](const AdvertisedMember& m) {
    std::string s;
    for (const std::string& k : m.key_columns) s += (s.empty() ? "" : ",") + k;
    return s;
  };
  expect_eq("anchor key", "id", keys(a));
  expect_eq("member key", "id", keys(b));
}

// A lens over the advertised decomposition reads every anchor row, the optional member
// outer-joined; the effective lens names the backing member of each column.
void tagged_reads_through_lens(Env& env) {
  create_tagged(env);
  require_tag_builder(env);
  env.exec("insert into thing_core values (1, 'bolt'), (2, 'nut'), (3, 'washer')");
  env.exec("insert into thing_size values (1, 12), (3, 2)");
  deploy_thing(env);
  env.expect("select id, name, size from lx.Thing order by id", {"1|bolt|12", "2|nut|NULL", "3|washer|2"});
  env.expect("select name from lx.Thing where id = 3", {"washer"});
  env.expect("select logical_column, advertised_member, advertisement_anchor from quereus_effective_lens('lx', 'Thing')",
             {"id|thing_core|thing_core", "name|thing_core|thing_core", "size|thing_size|thing_core"});
}

// An entity-attribute-value member: each logical column it backs is the value of the
// triple (entity, '<column>'), NULL when the entity has no such triple.
void eav_reads_through_lens(Env& env) {
  env.exec("create table thing_core (id integer primary key, name text)" +
           tags("mandatory", ", \"quereus.lens.decomp.col.d1.id\" = 'id', \"quereus.lens.decomp.col.d1.name\" = 'name'"));
  env.exec(
      "create table thing_attr (e integer, a text, v any null, primary key (e, a)) with tags ("
      "\"quereus.lens.decomp.logical.d1\" = 'Thing', \"quereus.lens.decomp.anchor.d1\" = 'thing_core', "
      "\"quereus.lens.decomp.presence.d1\" = 'optional', \"quereus.lens.decomp.pivot.d1.entity\" = 'e', "
      "\"quereus.lens.decomp.pivot.d1.attribute\" = 'a', \"quereus.lens.decomp.pivot.d1.value\" = 'v', "
      "\"quereus.lens.decomp.col.d1.size\" = 'v', \"quereus.lens.decomp.col.d1.color\" = 'v')");
  if (!find_thing(advertised(env, {"thing_core", "thing_attr"})))
    skip("the module does not advertise from quereus.lens.decomp.* tags");
  env.exec("insert into thing_core values (1, 'bolt'), (2, 'nut')");
  env.exec("insert into thing_attr values (1, 'size', 12), (1, 'color', 'red'), (2, 'color', 'blue')");
  env.exec(
      "declare logical schema lx { table Thing (id integer primary key, name text, size integer null, "
      "color text null) }");
  env.exec("declare lens for lx over main { }");
  env.exec("apply schema lx");
  env.expect("select id, name, size, color from lx.Thing order by id", {"1|bolt|12|red", "2|nut|NULL|blue"});
}

// Incoherent advertisements fail the apply with lens.malformed-advertisement, and nothing
// is deployed: the logical table stays unreadable.
void malformed_refused(Env& env) {
  create_tagged(env);
  require_tag_builder(env);
  struct Case {
    std::string what, table;
  };
  // Each case adds one table to the decomposition that makes it incoherent.
  const std::vector<Case> cases = {
      {"a member column the table does not have",
       "create table thing_bad (id integer primary key, w integer null)" +
           tags("optional", ", \"quereus.lens.decomp.col.d1.weight\" = 'no_such_column'")},
      {"a column backed by two members",
       "create table thing_bad (id integer primary key, n2 text null)" +
           tags("optional", ", \"quereus.lens.decomp.col.d1.name\" = 'n2'")},
      {"a stitch key that is not a key of the member",
       "create table thing_bad (rid integer primary key, id integer null, w integer null)" +
           tags("optional", ", \"quereus.lens.decomp.col.d1.weight\" = 'w'")},
  };
  int n = 0;
  for (const Case& c : cases) {
    env.exec(c.table);
    const std::string x = "lbad" + std::to_string(n++);
    env.exec("declare logical schema " + x +
             " { table Thing (id integer primary key, name text, size integer null, weight integer null) }");
    env.exec("declare lens for " + x + " over main { }");
    Status st = env.try_exec("apply schema " + x);
    if (st.ok()) fail("apply schema over " + c.what + " succeeded");
    if (st.message().find("lens.malformed-advertisement") == std::string::npos)
      fail("apply schema over " + c.what + " failed without lens.malformed-advertisement: " + st.message());
    if (env.try_exec("select * from " + x + ".Thing").ok())
      fail("after the refused apply over " + c.what + ", " + x + ".Thing is readable (something was deployed)");
    env.exec("drop table thing_bad");
  }
  // The coherent decomposition still deploys.
  deploy_thing(env);
  env.expect("select count(*) from lx.Thing", {"0"});
}

// A module that advertises nothing for a table leaves it to name-match.
void untagged_is_name_match(Env& env) {
  env.exec("create table plain (id integer primary key, v text)");
  std::vector<MappingAdvertisement> ads = advertised(env, {"plain"});
  for (const MappingAdvertisement& a : ads)
    for (const AdvertisedMember& m : a.members)
      if (m.table_name == "plain") skip("the module advertises untagged tables of its own accord");
  env.exec("insert into plain values (1, 'x')");
  env.exec("declare logical schema lp { table plain (id integer primary key, v text) }");
  env.exec("declare lens for lp over main { }");
  env.exec("apply schema lp");
  env.expect("select id, v from lp.plain", {"1|x"});
}

}  // namespace

void add_advertise_tests(TestList& out) {
  out.push_back({12, "reports_tagged_decomposition", reports_tagged_decomposition});
  out.push_back({12, "tagged_reads_through_lens", tagged_reads_through_lens});
  out.push_back({12, "eav_reads_through_lens", eav_reads_through_lens});
  out.push_back({12, "malformed_refused", malformed_refused});
  out.push_back({12, "untagged_is_name_match", untagged_is_name_match});
}

}  // namespace quereus::conformance::detail
