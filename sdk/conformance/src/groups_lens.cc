// Group 11: the lens deployment notification (SDK 1.6, abi.h notify_lens_deployment;
// docs/lenses.md "Deployment, notification and backfill"). After a logical APPLY SCHEMA
// every module is told what was deployed: per logical table the compiled body and, per
// basis relation it reads, which basis columns back which logical columns. A module must
// answer with how many of the snapshot's relations are its own tables — exactly those,
// counted once per (logical table, relation) entry, none of another module's or of a name
// it does not hold — accept an empty snapshot, and go on serving the deployed lens. A
// module whose slot is empty (not notified), or that answers 0 for its own tables (the
// C++ SDK's default: it keeps nothing per deployment), skips the counting tests; an
// answer other than 0 must be exact.
#include "harness.h"

#include "catalog/catalog.h"
#include "catalog/lens.h"
#include "catalog/module.h"

namespace quereus::conformance::detail {

namespace {

// The module's answer recorded by the last apply of logical schema `x`; nullopt when
// the module is not listed (not notified: its slot is empty).
std::optional<int64_t> backed(Env& env, const std::string& x) {
  for (const Row& r : env.query_rows("select module, relations_backed from quereus_lens_notifications('" + x + "')"))
    if (r[0].to_text() == env.ctx().module) return r[1].as_int();
  return std::nullopt;
}

// Two basis tables of the module, and a logical schema over them: one table over `a`
// alone, one over the join of `a` and `b` (three relation entries in the snapshot).
void deploy(Env& env) {
  env.exec("create table a (id integer primary key, name text)");
  env.exec("create table b (id integer primary key, speed integer null)");
  env.exec(
      "declare logical schema lx { table one (id integer primary key, name text); "
      "table two (id integer primary key, name text, speed integer null) }");
  env.exec(
      "declare lens for lx over main { view one as select id, name from a "
      "view two as select a.id as id, name, speed from a join b on b.id = a.id }");
  env.exec("apply schema lx");
}

std::optional<uint32_t> notify(Env& env, const LensDeploymentSnapshot& snap) {
  std::shared_ptr<TableEntry> t = env.table("a");
  try {
    return t->module->notify_lens_deployment(snap);
  } catch (const std::exception& e) {
    fail(std::string("notify_lens_deployment failed: ") + e.what());
  }
}

LensRelationBacking relation(const std::string& schema, const std::string& table) {
  LensRelationBacking r;
  r.schema = schema;
  r.table = table;
  r.columns = {{"id", "id"}};
  return r;
}

// ---------------------------------------------------------------- tests

// The apply's notification counts the module's relations: 1 for `one`, 2 for `two`.
void backs_its_tables(Env& env) {
  deploy(env);
  std::optional<int64_t> n = backed(env, "lx");
  if (!n) skip("the module is not notified (its notify_lens_deployment slot is empty)");
  if (*n == 0) skip("the module answers that it backs none of its own tables (it keeps nothing per deployment)");
  expect_eq("relations_backed after apply schema lx", "3", std::to_string(*n));
}

// At the slot: a relation the module does not hold (another name, another schema) is not
// its own; each entry of its own counts once per logical table naming it.
void counts_only_its_own(Env& env) {
  env.exec("create table a (id integer primary key, name text)");
  LensDeploymentSnapshot snap;
  snap.logical_schema = "lx";
  snap.basis_schema = "main";
  LensTableSnapshot t1;
  t1.logical_table = "one";
  t1.get_body = "select id from main.a";
  t1.logical_columns = {"id"};
  t1.relations = {relation("main", "a"), relation("main", "nosuch"), relation("elsewhere", "a")};
  {
    LensDeploymentSnapshot own = snap;
    LensTableSnapshot only = t1;
    only.relations = {relation("main", "a")};
    own.tables = {only};
    std::optional<uint32_t> n = notify(env, own);
    if (!n) skip("the module is not notified (its notify_lens_deployment slot is empty)");
    if (*n == 0) skip("the module answers that it backs none of its own tables (it keeps nothing per deployment)");
  }
  LensTableSnapshot t2 = t1;
  t2.logical_table = "two";
  t2.relations = {relation("main", "a")};
  snap.tables = {t1, t2};
  std::optional<uint32_t> n = notify(env, snap);
  if (!n) skip("the module is not notified (its notify_lens_deployment slot is empty)");
  expect_eq("relations_backed of a snapshot naming main.a twice, main.nosuch and elsewhere.a", "2",
            std::to_string(*n));
}

// An empty snapshot (the logical schema lost its tables) is accepted and backs nothing.
void empty_snapshot(Env& env) {
  env.exec("create table a (id integer primary key, name text)");
  LensDeploymentSnapshot snap;
  snap.logical_schema = "lx";
  snap.basis_schema = "main";
  std::optional<uint32_t> n = notify(env, snap);
  if (!n) skip("the module is not notified (its notify_lens_deployment slot is empty)");
  expect_eq("relations_backed of an empty snapshot", "0", std::to_string(*n));
}

// After the notification the module goes on serving the lens: writes through the logical
// tables land in its basis tables and read back, joined, through the lens.
void serves_after_notify(Env& env) {
  deploy(env);
  if (!backed(env, "lx")) skip("the module is not notified (its notify_lens_deployment slot is empty)");
  env.exec("insert into lx.two (id, name, speed) values (1, 'x', 10), (2, 'y', 20)");
  env.exec("update lx.two set speed = 21 where id = 2");
  env.expect("select id, name, speed from lx.two order by id", {"1|x|10", "2|y|21"});
  env.expect("select id, name from a order by id", {"1|x", "2|y"});
  env.expect("select id, speed from b order by id", {"1|10", "2|21"});
  env.exec("delete from lx.two where id = 1");
  env.expect("select id from lx.one order by id", {"2"});
}

// A persistent module recognizes its tables after a reopen: a new apply counts them again.
void after_reopen(Env& env) {
  if (!env.ctx().caps.persistent) skip("the module does not declare the `persistent` capability");
  deploy(env);
  if (!backed(env, "lx")) skip("the module is not notified (its notify_lens_deployment slot is empty)");
  env.reopen();
  env.exec("apply schema lx");
  std::optional<int64_t> n = backed(env, "lx");
  if (n && *n == 0) skip("the module answers that it backs none of its own tables (it keeps nothing per deployment)");
  expect_eq("relations_backed after a reopen and a new apply", "3", n ? std::to_string(*n) : "not notified");
}

}  // namespace

void add_lens_tests(TestList& out) {
  out.push_back({11, "backs_its_tables", backs_its_tables});
  out.push_back({11, "counts_only_its_own", counts_only_its_own});
  out.push_back({11, "empty_snapshot", empty_snapshot});
  out.push_back({11, "serves_after_notify", serves_after_notify});
  out.push_back({11, "after_reopen", after_reopen});
}

}  // namespace quereus::conformance::detail
