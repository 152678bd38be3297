// Group 10: the backing-host capability (SDK 1.5, abi.h qrs_maintenance_op): what a module
// declaring `backing_host` must do for a maintained table (a materialized view) — upserts
// that report only the changes they realize (value-identical rows are no-ops, INTEGER 5 is
// not REAL 5.0, a collation-equal key with other bytes is an UPDATE), deletes of present and
// missing keys, ops that see the earlier ops of their call, maintenance writes in lockstep
// with the instance's transaction and savepoints, an atomic replace_contents that refuses a
// duplicate key leaving the table unchanged, and the ordered prefix scan a maintained table
// is read through. Everything runs at the vtable level, through the host's adapter, on a
// table created by SQL; what a test then reads back through SQL is the committed state.
// A module that does not declare the capability skips the whole group.
#include <algorithm>
#include <cmath>

#include "harness.h"

namespace quereus::conformance::detail {

namespace {

// ---------------------------------------------------------------- helpers

// A cell as "<physical type>:<value>", so that 5 and 5.0 render differently.
std::string tagged(const Value& v) {
  static const char* names[] = {"null", "integer", "real", "text", "blob", "boolean", "json", "bigint"};
  std::string tag = names[static_cast<int>(v.type())];
  if (v.is_null()) return tag;
  return tag + ":" + v.to_text();
}

std::string tagged_row(const Row& r) {
  std::string s = "(";
  for (size_t i = 0; i < r.size(); ++i) s += (i ? ", " : "") + tagged(r[i]);
  return s + ")";
}

std::string render_change(const BackingChange& c) {
  switch (c.op) {
    case RowOp::kInsert: return "INSERT " + tagged_row(c.new_row);
    case RowOp::kUpdate: return "UPDATE " + tagged_row(c.old_row) + " -> " + tagged_row(c.new_row);
    case RowOp::kDelete: return "DELETE " + tagged_row(c.old_row);
  }
  return "?";
}

std::string render_changes(const std::vector<std::string>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "; " : "") + v[i];
  return s + "]";
}

Value I(int64_t v) { return Value::Integer(v); }
Value R(double v) { return Value::Real(v); }
Value T(std::string v) { return Value::Text(std::move(v)); }

MaintenanceOp upsert(Row row) { return MaintenanceOp{MaintenanceOp::Kind::kUpsert, std::move(row)}; }
MaintenanceOp del(Row key) { return MaintenanceOp{MaintenanceOp::Kind::kDeleteKey, std::move(key)}; }

void require_backing_host(Env& env) {
  if (!env.ctx().caps.backing_host)
    skip("the module does not declare the backing-host capability (`backing_host`)");
}

// Applies `ops` on `t` and requires the reported changes to be exactly `expected`
// (rendered by render_change, in op order).
void apply(VtabTable& t, const std::string& what, std::vector<MaintenanceOp> ops,
           const std::vector<std::string>& expected) {
  std::vector<BackingChange> out;
  bool supported;
  try {
    supported = t.apply_maintenance(ops, out);
  } catch (const std::exception& e) {
    fail(what + ": apply_maintenance failed: " + e.what());
  }
  if (!supported) fail(what + ": the module declares backing_host but its apply_maintenance is not implemented");
  std::vector<std::string> got;
  for (const BackingChange& c : out) got.push_back(render_change(c));
  if (got != expected)
    fail(what + ": expected the changes " + render_changes(expected) + ", got " + render_changes(got));
}

// replace_contents over `rows`; returns the error it threw (OK when it succeeded).
Status replace(VtabTable& t, const std::string& what, std::vector<Row> rows) {
  size_t next = 0;
  try {
    bool supported = t.replace_contents([&](Row& out) {
      if (next == rows.size()) return false;
      out = rows[next++];
      return true;
    });
    if (!supported) fail(what + ": the module declares backing_host but its replace_contents is not implemented");
  } catch (const Error& e) {
    return e.status();
  }
  return Status::Ok();
}

// ---------------------------------------------------------------- tests

// Both slots are there when the capability is declared; an empty call changes nothing.
void declared(Env& env) {
  require_backing_host(env);
  env.exec("create table m (k integer primary key, v text)");
  env.exec("insert into m values (1, 'a')");
  auto t = env.vtab("m");
  apply(*t, "no ops", {}, {});
  env.expect("select k, v from m", {"1|a"});
}

// Upserts insert, replace a different row, and are no-ops for an identical one — where
// "identical" is byte-faithful: an INTEGER 5 and a REAL 5.0 are different rows.
void upsert_suppression(Env& env) {
  require_backing_host(env);
  env.exec("create table m (k integer primary key, v any)");
  auto t = env.vtab("m");
  apply(*t, "first upserts", {upsert({I(1), T("a")}), upsert({I(2), I(5)})},
        {"INSERT (integer:1, text:a)", "INSERT (integer:2, integer:5)"});
  apply(*t, "the same row again", {upsert({I(1), T("a")}), upsert({I(2), I(5)})}, {});
  apply(*t, "INTEGER 5 replaced by REAL 5.0", {upsert({I(2), R(5.0)})},
        {"UPDATE (integer:2, integer:5) -> (integer:2, real:5)"});
  apply(*t, "REAL 5.0 again", {upsert({I(2), R(5.0)})}, {});
  apply(*t, "'a' replaced by 'b'", {upsert({I(1), T("b")})}, {"UPDATE (integer:1, text:a) -> (integer:1, text:b)"});
  apply(*t, "NULL over 'b', then NULL again", {upsert({I(1), Value()}), upsert({I(1), Value()})},
        {"UPDATE (integer:1, text:b) -> (integer:1, null)"});
  // What the module stores, as its cursor hands it over (SQL would coerce on the way out).
  std::vector<std::string> got;
  for (const Row& r : vt_scan(*t, ScanArgs{})) got.push_back(tagged_row(r));
  std::vector<std::string> want = {"(integer:1, null)", "(integer:2, real:5)"};
  if (got != want) fail("stored rows: expected " + render_rows(want) + ", got " + render_rows(got));
}

// A key equal under its collation but with other bytes is a change (UPDATE), and the row
// stored afterwards carries the new bytes.
void collation_key_update(Env& env) {
  require_backing_host(env);
  env.exec("create table m (k text collate nocase primary key, v integer)");
  auto t = env.vtab("m");
  apply(*t, "insert 'abc'", {upsert({T("abc"), I(1)})}, {"INSERT (text:abc, integer:1)"});
  apply(*t, "'ABC' over 'abc' (NOCASE-equal, other bytes)", {upsert({T("ABC"), I(1)})},
        {"UPDATE (text:abc, integer:1) -> (text:ABC, integer:1)"});
  apply(*t, "'ABC' again", {upsert({T("ABC"), I(1)})}, {});
  apply(*t, "delete by 'aBc'", {del({T("aBc")})}, {"DELETE (text:ABC, integer:1)"});
  env.expect("select count(*) from m", {"0"});
}

// A delete reports the row it removed; a missing key reports nothing. The key is given in
// key order, which need not be column order.
void delete_present_missing(Env& env) {
  require_backing_host(env);
  env.exec("create table m (a integer, b text, v integer, primary key (b, a))");
  auto t = env.vtab("m");
  apply(*t, "rows", {upsert({I(1), T("x"), I(10)}), upsert({I(2), T("x"), I(20)})},
        {"INSERT (integer:1, text:x, integer:10)", "INSERT (integer:2, text:x, integer:20)"});
  apply(*t, "delete key (b 'x', a 1)", {del({T("x"), I(1)})}, {"DELETE (integer:1, text:x, integer:10)"});
  apply(*t, "the same key again, and a key never stored", {del({T("x"), I(1)}), del({T("y"), I(9)})}, {});
  env.expect("select a, b, v from m", {"2|x|20"});
}

// Ops apply one after another within one call: each sees the earlier ones.
void ops_see_earlier_ops(Env& env) {
  require_backing_host(env);
  env.exec("create table m (k integer primary key, v text)");
  auto t = env.vtab("m");
  apply(*t, "one call",
        {upsert({I(1), T("x")}), upsert({I(1), T("x")}), upsert({I(1), T("y")}), del({I(1)}), del({I(1)}),
         upsert({I(1), T("z")}), upsert({I(2), T("w")}), del({I(2)})},
        {"INSERT (integer:1, text:x)", "UPDATE (integer:1, text:x) -> (integer:1, text:y)",
         "DELETE (integer:1, text:y)", "INSERT (integer:1, text:z)", "INSERT (integer:2, text:w)",
         "DELETE (integer:2, text:w)"});
  env.expect("select k, v from m", {"1|z"});
}

// Maintenance writes follow the instance's transaction: autocommit without one, kept or
// undone with commit / rollback / savepoints, and later ops see the state a rollback to a
// savepoint restored.
void transaction_lockstep(Env& env) {
  require_backing_host(env);
  env.exec("create table m (k integer primary key, v text)");
  auto t = env.vtab("m");
  std::unique_ptr<VtabConnection> conn = t->open_connection();
  if (!conn) skip("the module does not take part in transactions (its tables open no connection)");
  apply(*t, "autocommit upsert", {upsert({I(1), T("a")})}, {"INSERT (integer:1, text:a)"});
  env.expect("select k, v from m order by k", {"1|a"});

  conn->begin();
  apply(*t, "inside the transaction", {upsert({I(2), T("b")})}, {"INSERT (integer:2, text:b)"});
  conn->savepoint(1);
  apply(*t, "inside savepoint 1", {upsert({I(3), T("c")}), upsert({I(1), T("A")})},
        {"INSERT (integer:3, text:c)", "UPDATE (integer:1, text:a) -> (integer:1, text:A)"});
  conn->rollback_to_savepoint(1);
  apply(*t, "after rollback to savepoint 1: row 1 is 'a' again", {upsert({I(1), T("a")})}, {});
  apply(*t, "after rollback to savepoint 1: row 3 is gone", {upsert({I(3), T("c")})}, {"INSERT (integer:3, text:c)"});
  conn->release_savepoint(1);
  conn->commit();
  env.expect("select k, v from m order by k", {"1|a", "2|b", "3|c"});

  conn->begin();
  apply(*t, "to be rolled back", {del({I(2)}), upsert({I(4), T("d")})},
        {"DELETE (integer:2, text:b)", "INSERT (integer:4, text:d)"});
  conn->rollback();
  env.expect("select k, v from m order by k", {"1|a", "2|b", "3|c"});
  apply(*t, "after the rollback", {del({I(4)}), upsert({I(2), T("b")})}, {});
}

// replace_contents swaps the committed rows for the source's, all at once; a duplicate
// key (also one equal only under the key's collation) is refused with CONSTRAINT naming
// it, and the table is exactly as it was.
void replace_atomic(Env& env) {
  require_backing_host(env);
  env.exec("create table m (k integer primary key, v text)");
  env.exec("insert into m values (1, 'a'), (2, 'b'), (3, 'c')");
  auto t = env.vtab("m");
  Status s = replace(*t, "replace", {{I(10), T("x")}, {I(11), T("y")}});
  if (!s.ok()) fail("replace_contents failed: " + s.to_string());
  env.expect("select k, v from m order by k", {"10|x", "11|y"});

  s = replace(*t, "a duplicate key", {{I(20), T("p")}, {I(21), T("q")}, {I(20), T("r")}, {I(22), T("s")}});
  if (s.ok()) fail("replace_contents with key 20 twice: expected CONSTRAINT, got success");
  if (s.code() != StatusCode::kConstraint) fail("replace_contents with key 20 twice: expected CONSTRAINT, got " + s.to_string());
  if (s.to_string().find("20") == std::string::npos)
    fail("replace_contents with key 20 twice: the error does not name the key: " + s.to_string());
  env.expect("select k, v from m order by k", {"10|x", "11|y"});
  apply(*t, "after the refused replace no new row is there", {del({I(20)}), del({I(21)})}, {});

  env.exec("create table n (k text collate nocase primary key)");
  env.exec("insert into n values ('keep')");
  auto u = env.vtab("n");
  s = replace(*u, "NOCASE-equal keys", {{T("abc")}, {T("ABC")}});
  if (s.code() != StatusCode::kConstraint)
    fail("replace_contents with 'abc' and 'ABC' under NOCASE: expected CONSTRAINT, got " + s.to_string());
  env.expect("select k from n", {"keep"});

  s = replace(*t, "no rows", {});
  if (!s.ok()) fail("replace_contents with no rows failed: " + s.to_string());
  env.expect("select count(*) from m", {"0"});
}

// A source that fails part-way abandons the replacement: the host's error comes back and
// nothing changed.
void replace_source_failure(Env& env) {
  require_backing_host(env);
  env.exec("create table m (k integer primary key, v text)");
  env.exec("insert into m values (1, 'a')");
  auto t = env.vtab("m");
  int pulled = 0;
  try {
    t->replace_contents([&](Row& out) {
      if (++pulled == 3) throw Error(StatusCode::kInterrupt, "refresh interrupted");
      out = {I(100 + pulled), T("new")};
      return true;
    });
    fail("replace_contents over a failing source: expected the source's error, got success");
  } catch (const Error& e) {
    if (e.code() != StatusCode::kInterrupt || std::string(e.what()).find("refresh interrupted") == std::string::npos)
      fail("replace_contents over a failing source: expected INTERRUPT 'refresh interrupted', got " + e.status().to_string());
  }
  env.expect("select k, v from m order by k", {"1|a"});
}

// replace_contents replaces the COMMITTED rows and discards the instance's pending writes:
// committing afterwards adds nothing, and the instance sees the new rows.
void replace_discards_pending(Env& env) {
  require_backing_host(env);
  env.exec("create table m (k integer primary key, v text)");
  env.exec("insert into m values (1, 'a')");
  auto t = env.vtab("m");
  std::unique_ptr<VtabConnection> conn = t->open_connection();
  if (!conn) skip("the module does not take part in transactions (its tables open no connection)");
  conn->begin();
  apply(*t, "pending", {upsert({I(50), T("pending")}), del({I(1)})},
        {"INSERT (integer:50, text:pending)", "DELETE (integer:1, text:a)"});
  Status s = replace(*t, "replace", {{I(60), T("new")}, {I(61), T("new")}});
  if (!s.ok()) fail("replace_contents inside a transaction failed: " + s.to_string());
  apply(*t, "after the replace the instance sees the new rows", {upsert({I(60), T("new")}), del({I(50)})}, {});
  conn->commit();
  env.expect("select k, v from m order by k", {"60|new", "61|new"});
}

// A maintained table is read by key prefix: EQ filters on the leading key members are
// handled and the rows come out in key order.
void ordered_prefix_scan(Env& env) {
  require_backing_host(env);
  env.exec("create table m (a integer, b integer, v text, primary key (a, b))");
  auto t = env.vtab("m");
  std::vector<MaintenanceOp> ops;
  std::vector<std::string> expected;
  for (int64_t a : {3, 1, 2})
    for (int64_t b : {5, 1, 4, 2, 3}) ops.push_back(upsert({I(a), I(b), T("r")}));
  std::vector<BackingChange> changes;
  if (!t->apply_maintenance(ops, changes) || changes.size() != ops.size())
    fail("15 upserts of new keys: expected 15 INSERTs, got " + std::to_string(changes.size()));

  PlanRequest req;
  FilterSpec f;
  f.column = 0;
  f.op = QRS_OP_EQ;
  req.filters.push_back(f);
  req.ordering = {OrderSpec{0, false}, OrderSpec{1, false}};
  PlanResult plan = t->best_access_plan(req);
  if (plan.handled.size() != 1 || !plan.handled[0]) fail("best_access_plan does not handle EQ on the leading key member a");
  if (!plan.provides_ordering) fail("best_access_plan does not provide key order (a, b) for a prefix scan on a");
  ScanArgs args;
  args.plan_id = plan.plan_id;
  f.has_value = true;
  f.value = I(2);
  args.filters = {f};
  args.handled = plan.handled;
  args.provides_ordering = true;
  args.ordering = req.ordering;
  std::vector<std::string> got;
  for (const Row& r : vt_scan(*t, args)) got.push_back(render_row(r));
  std::vector<std::string> want = {"2|1|r", "2|2|r", "2|3|r", "2|4|r", "2|5|r"};
  if (got != want) fail("prefix scan a = 2: expected " + render_rows(want) + ", got " + render_rows(got));
}

}  // namespace

void add_backing_tests(TestList& out) {
  out.push_back({10, "declared", declared});
  out.push_back({10, "upsert_suppression", upsert_suppression});
  out.push_back({10, "collation_key_update", collation_key_update});
  out.push_back({10, "delete_present_missing", delete_present_missing});
  out.push_back({10, "ops_see_earlier_ops", ops_see_earlier_ops});
  out.push_back({10, "transaction_lockstep", transaction_lockstep});
  out.push_back({10, "replace_atomic", replace_atomic});
  out.push_back({10, "replace_source_failure", replace_source_failure});
  out.push_back({10, "replace_discards_pending", replace_discards_pending});
  out.push_back({10, "ordered_prefix_scan", ordered_prefix_scan});
}

}  // namespace quereus::conformance::detail
