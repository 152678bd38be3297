// Groups 6–9: transactions and savepoints, Halloween-safe UPDATE / DELETE, the
// schema-change hook arms, persistence across reopen.
#include <set>

#include "harness.h"
#include "catalog/catalog.h"

namespace quereus::conformance::detail {

namespace {

void set_pushdown_option(Env& env, bool on) {
  Status s = env.db().set_option("module_pushdown", Value::Boolean(on));
  if (!s.ok()) fail("pragma module_pushdown: " + s.to_string());
}

// ---------------------------------------------------------------- 6 transactions

// Group 6 needs a module that takes part in transactions (returns a connection).
void require_connections(Env& env) {
  env.exec("create table probe_txn (k integer primary key)");
  auto t = env.vtab("probe_txn");
  if (!t->open_connection())
    skip("the module does not take part in transactions (its tables open no connection)");
  env.exec("drop table probe_txn");
}

void txn_commit_rollback(Env& env) {
  require_connections(env);
  env.exec("create table t (k integer primary key, v text)");
  env.exec("begin; insert into t values (1, 'a'); insert into t values (2, 'b'); commit");
  env.expect("select k from t order by k", {"1", "2"});
  env.exec("begin; insert into t values (3, 'c'); update t set v = 'A' where k = 1; delete from t where k = 2");
  env.expect("select k, v from t order by k", {"1|A", "3|c"});  // reads its own writes
  env.exec("rollback");
  env.expect("select k, v from t order by k", {"1|a", "2|b"});
}

void txn_reads_own_writes(Env& env) {
  require_connections(env);
  env.exec("create table t (k integer primary key, v integer)");
  env.exec("insert into t values (1, 10), (2, 20), (3, 30)");
  env.exec("begin");
  env.exec("update t set v = v + 1 where k >= 2");
  env.exec("insert into t values (4, 40)");
  env.exec("delete from t where k = 1");
  env.expect("select k, v from t order by k", {"2|21", "3|31", "4|40"});
  env.expect("select k, v from t where k = 3", {"3|31"});
  env.expect("select k from t where k between 1 and 2", {"2"});
  env.expect("select k from t order by k desc limit 1", {"4"});
  env.expect("select sum(v) from t", {"92"});
  env.exec("commit");
  env.expect("select k, v from t order by k", {"2|21", "3|31", "4|40"});
}

void txn_savepoints(Env& env) {
  require_connections(env);
  env.exec("create table t (k integer primary key)");
  env.exec("begin; insert into t values (1); savepoint a; insert into t values (2); savepoint b; "
           "insert into t values (3)");
  env.expect("select k from t order by k", {"1", "2", "3"});
  env.exec("rollback to b");
  env.expect("select k from t order by k", {"1", "2"});
  env.exec("insert into t values (4)");  // b still open after rollback to
  env.exec("rollback to b");
  env.expect("select k from t order by k", {"1", "2"});
  env.exec("insert into t values (5); release b");
  env.expect("select k from t order by k", {"1", "2", "5"});
  env.exec("rollback to a");
  env.expect("select k from t order by k", {"1"});
  env.exec("savepoint c; insert into t values (6); release c; commit");
  env.expect("select k from t order by k", {"1", "6"});
  env.exec("begin; savepoint x; insert into t values (7); savepoint y; delete from t where k = 1; release y; "
           "rollback to x; commit");
  env.expect("select k from t order by k", {"1", "6"});
}

void txn_failed_statement_alone(Env& env) {
  require_connections(env);
  env.exec("create table t (k integer primary key, v text)");
  env.exec("insert into t values (5, 'e')");
  env.exec("begin; insert into t values (1, 'a')");
  // The second statement fails at its third row: its first two rows go, the first statement's row stays.
  env.fails("insert into t values (2, 'b'), (3, 'c'), (5, 'x'), (6, 'f')", StatusCode::kConstraint);
  env.expect("select k from t order by k", {"1", "5"});
  env.fails("update t set k = k + 4 where k < 5", StatusCode::kConstraint);
  env.expect("select k, v from t order by k", {"1|a", "5|e"});
  env.exec("commit");
  env.expect("select k, v from t order by k", {"1|a", "5|e"});
  // Autocommit: the same failure leaves nothing behind.
  env.fails("insert into t values (7, 'g'), (5, 'y')", StatusCode::kConstraint);
  env.expect("select k from t order by k", {"1", "5"});
}

void txn_multi_table(Env& env) {
  require_connections(env);
  env.exec("create table a (k integer primary key); create table b (k integer primary key)");
  env.exec("begin; insert into a values (1); insert into b values (1); rollback");
  env.expect("select (select count(*) from a), (select count(*) from b)", {"0|0"});
  env.exec("begin; insert into a values (2); savepoint s; insert into b values (2); rollback to s; commit");
  env.expect("select (select count(*) from a), (select count(*) from b)", {"1|0"});
  // A table first written inside a savepoint joins with the savepoint replayed.
  env.exec("begin; savepoint s1; savepoint s2; insert into b values (3); rollback to s2; insert into b values (4); "
           "release s1; commit");
  env.expect("select k from b order by k", {"4"});
}

// committed.<table> (ABI 1.1, capability committed_reads): the last committed state,
// without the reader's own uncommitted writes, by scan, by key and by range.
void txn_committed_reads(Env& env) {
  if (!env.ctx().caps.committed_reads) skip("the module does not declare committed reads (capability `committed_reads`)");
  env.exec("create table t (k integer primary key, v text)");
  env.exec("insert into t values (1, 'a'), (3, 'c')");
  env.exec("begin; insert into t values (2, 'b'); update t set v = 'A' where k = 1; delete from t where k = 3");
  env.expect("select k, v from committed.t order by k", {"1|a", "3|c"});
  env.expect("select v from committed.t where k = 1", {"a"});
  env.expect("select k from committed.t where k >= 2 order by k desc", {"3"});
  env.expect("select k, v from t order by k", {"1|A", "2|b"});
  env.exec("commit");
  env.expect("select k, v from committed.t order by k", {"1|A", "2|b"});
}

// ---------------------------------------------------------------- 7 halloween

void halloween_pk(Env& env) {
  env.exec("create table t (k integer primary key, v integer)");
  env.exec("insert into t select value, value * 10 from generate_series(1, 50)");
  env.expect_affected("update t set k = k + 1000 where k between 10 and 30", 21);
  env.expect("select count(*), sum(k), min(k), max(k) from t where k > 1000", {"21|21420|1010|1030"});
  env.expect("select count(*) from t", {"50"});
  env.expect("select count(*) from t where v <> (k - case when k > 1000 then 1000 else 0 end) * 10", {"0"});
  // Moving keys downward over the scanned range, in descending key order.
  env.expect_affected("update t set k = -k where k > 40", 31);
  env.expect("select count(*), min(k), max(k) from t where k < 0", {"31|-1030|-41"});
  env.expect_affected("delete from t where k between -1030 and -1000", 21);
  env.expect("select count(*) from t", {"29"});
}

void halloween_index(Env& env) {
  env.exec("create table t (k integer primary key, a integer)");
  env.exec("create index t_a on t (a)");
  env.exec("insert into t select value, value from generate_series(1, 40)");
  env.expect_affected("update t set a = a + 100 where a >= 10", 31);
  env.expect("select count(*) from t where a = k + 100", {"31"});
  env.expect("select count(*) from t where a = k", {"9"});
  env.expect("select k from t where a between 110 and 112 order by k", {"10", "11", "12"});
  env.exec("update t set a = a - 1 where a between 1 and 9");
  env.expect("select a from t where k < 10 order by k", {"0", "1", "2", "3", "4", "5", "6", "7", "8"});
  env.expect_affected("delete from t where a >= 120", 21);
  env.expect("select count(*), max(a) from t", {"19|119"});
}

// ---------------------------------------------------------------- 8 alter

// Runs an ALTER that rewrites stored rows; a module that answers UNSUPPORTED (no
// alter_table hook or not this arm) skips the test.
void alter(Env& env, const std::string& sql) {
  Status s = env.try_exec(sql);
  if (s.code() == StatusCode::kUnsupported) skip("the module does not implement this alter_table arm: " + s.to_string());
  if (!s.ok()) fail("`" + sql + "` failed: " + s.to_string());
}
// A refused ALTER must leave the rows (and the schema) exactly as they were.
void refused(Env& env, const std::string& sql, StatusCode code, const std::string& table = "t") {
  std::vector<std::string> before = env.query("select * from " + table + " order by 1");
  Status s = env.try_exec(sql);
  if (s.code() == StatusCode::kUnsupported) skip("the module does not implement this alter_table arm: " + s.to_string());
  if (s.ok()) fail("`" + sql + "`: expected a refusal (" + status_code_name(code) + "), got success");
  if (s.code() != code) fail("`" + sql + "`: expected " + std::string(status_code_name(code)) + ", got " + s.to_string());
  std::vector<std::string> after = env.query("select * from " + table + " order by 1");
  if (before != after)
    fail("`" + sql + "` was refused but the rows changed: before " + render_rows(before) + ", after " + render_rows(after));
}

void seed_table(Env& env) {
  env.exec("create table t (k integer primary key, a integer null, b text null)");
  env.exec("insert into t values (1, 10, 'x'), (2, null, 'y'), (3, 30, null)");
}

void alter_add_drop_column(Env& env) {
  seed_table(env);
  alter(env, "alter table t add column c integer default 7");
  env.expect("select k, c from t order by k", {"1|7", "2|7", "3|7"});
  env.exec("insert into t (k, a, b) values (4, 40, 'z')");
  env.expect("select c from t where k = 4", {"7"});
  refused(env, "alter table t add column d integer not null", StatusCode::kConstraint);
  alter(env, "alter table t add column e text null");
  env.expect("select k, typeof(e) from t order by k", {"1|null", "2|null", "3|null", "4|null"});
  alter(env, "alter table t drop column a");
  env.expect("select * from t order by k", {"1|x|7|NULL", "2|y|7|NULL", "3|NULL|7|NULL", "4|z|7|NULL"});
  env.fails("alter table t drop column k");
  env.expect("select k from t where k = 3", {"3"});
}

void alter_renames(Env& env) {
  seed_table(env);
  alter(env, "alter table t rename column b to bee");
  env.expect("select k, bee from t order by k", {"1|x", "2|y", "3|NULL"});
  alter(env, "alter table t rename to t2");
  env.fails("select * from t");
  env.expect("select k, bee from t2 where k >= 2 order by k", {"2|y", "3|NULL"});
  env.exec("insert into t2 values (4, 40, 'w')");
  env.fails("insert into t2 values (4, 41, 'v')", StatusCode::kConstraint);
  env.expect("select count(*) from t2", {"4"});
  env.exec("create table t (k integer primary key)");  // the old name's storage is free
  env.expect("select count(*) from t", {"0"});
}

void alter_set_data_type(Env& env) {
  seed_table(env);
  alter(env, "alter table t alter column a set data type text");
  env.expect("select k, typeof(a), a from t order by k", {"1|text|10", "2|null|NULL", "3|text|30"});
  env.exec("update t set a = 'abc' where k = 2");
  refused(env, "alter table t alter column a set data type integer", StatusCode::kMismatch);
  env.exec("update t set a = '20' where k = 2");
  alter(env, "alter table t alter column a set data type integer");
  env.expect("select k, typeof(a), a from t order by k", {"1|integer|10", "2|integer|20", "3|integer|30"});
}

void alter_not_null(Env& env) {
  seed_table(env);
  refused(env, "alter table t alter column a set not null", StatusCode::kConstraint);
  env.exec("update t set a = 0 where a is null");
  alter(env, "alter table t alter column a set not null");
  env.fails("insert into t values (9, null, 'q')", StatusCode::kConstraint);
  alter(env, "alter table t alter column a drop not null");
  env.exec("insert into t values (9, null, 'q')");
  env.expect("select k, a from t order by k", {"1|10", "2|0", "3|30", "9|NULL"});
}

void alter_default(Env& env) {
  seed_table(env);
  alter(env, "alter table t alter column b set default 'dflt'");
  env.exec("insert into t (k, a) values (4, 4)");
  env.expect("select b from t where k = 4", {"dflt"});
  alter(env, "alter table t alter column b drop default");
  env.exec("insert into t (k, a) values (5, 5)");
  env.expect("select typeof(b) from t where k = 5", {"null"});
  env.expect("select count(*) from t", {"5"});
}

void alter_collation_rekey(Env& env) {
  env.exec("create table t (k text primary key, v integer)");
  env.exec("insert into t values ('a', 1), ('B', 2), ('A', 3)");
  refused(env, "alter table t alter column k set collate nocase", StatusCode::kConstraint);
  env.exec("delete from t where k = 'A'");
  alter(env, "alter table t alter column k set collate nocase");
  env.expect("select k, v from t order by k", {"a|1", "B|2"});
  env.fails("insert into t values ('b', 9)", StatusCode::kConstraint);
  env.expect("select v from t where k = 'b'", {"2"});
}

void alter_primary_key(Env& env) {
  env.exec("create table t (k integer primary key, u integer, v text)");
  env.exec("insert into t values (1, 30, 'a'), (2, 10, 'b'), (3, 10, 'c')");
  refused(env, "alter table t alter primary key (u)", StatusCode::kConstraint);
  env.exec("update t set u = 20 where k = 3");
  alter(env, "alter table t alter primary key (u)");
  env.expect("select u, k from t order by u", {"10|2", "20|3", "30|1"});
  env.expect("select k from t where u = 20", {"3"});
  env.expect("select k from t where u > 15 order by u desc", {"1", "3"});
  env.fails("insert into t values (9, 10, 'z')", StatusCode::kConstraint);
  env.exec("insert into t values (2, 40, 'dup k is fine now')");
  env.expect("select count(*) from t", {"4"});
  alter(env, "alter table t alter primary key (k, u)");
  env.expect("select k, u from t order by k, u", {"1|30", "2|10", "2|40", "3|20"});
}

void alter_constraints(Env& env) {
  seed_table(env);
  refused(env, "alter table t add constraint big check (a > 15)", StatusCode::kConstraint);
  alter(env, "alter table t add constraint pos check (a is null or a > 0)");
  env.fails("insert into t values (8, -1, 'n')", StatusCode::kConstraint);
  alter(env, "alter table t rename constraint pos to positive");
  env.fails("insert into t values (8, -1, 'n')", StatusCode::kConstraint, "positive");
  alter(env, "alter table t drop constraint positive");
  env.exec("insert into t values (8, -1, 'n')");
  env.expect("select count(*) from t", {"4"});
}

// Inside a transaction an arm judges the transaction's effective rows (sdk-brief §1.5):
// a committed NULL the transaction overwrote does not block SET NOT NULL, a pending NULL does.
void alter_in_transaction(Env& env) {
  require_connections(env);
  seed_table(env);
  env.exec("begin; update t set a = 20 where k = 2");
  alter(env, "alter table t alter column a set not null");
  env.fails("insert into t values (4, null, 'p')", StatusCode::kConstraint);
  env.exec("insert into t values (4, 40, 'p')");
  alter(env, "alter table t add column c integer null default 1");
  env.expect("select k, a, c from t order by k", {"1|10|1", "2|20|1", "3|30|1", "4|40|1"});
  env.exec("commit");
  env.expect("select k, a, b, c from t order by k", {"1|10|x|1", "2|20|y|1", "3|30|NULL|1", "4|40|p|1"});
  // A NULL only the transaction wrote blocks SET NOT NULL on a column without a default…
  env.exec("update t set b = 'r' where k = 3");
  env.exec("begin; insert into t values (5, 50, null, null)");
  refused(env, "alter table t alter column b set not null", StatusCode::kConstraint);
  // … and is backfilled from the default on a column with one.
  alter(env, "alter table t alter column c set not null");
  env.expect("select k, b, c from t where k = 5", {"5|NULL|1"});
  env.exec("commit");
  env.expect("select k, b, c from t where k >= 3 order by k", {"3|r|1", "4|p|1", "5|NULL|1"});
}

// CREATE / DROP INDEX: the index answers what a scan answers, through later writes and
// ALTERs, and dropping it leaves the table whole.
void alter_indexes(Env& env) {
  env.exec("create table t (k integer primary key, a integer null, b text null)");
  env.exec("insert into t select value, value % 5, 'b' || (value % 3) from generate_series(1, 60)");
  env.exec("create index t_a on t (a)");
  env.exec("create unique index t_ab on t (b, k)");
  auto check = [&](const std::string& where) {
    set_pushdown_option(env, false);
    std::vector<std::string> ref = env.query("select k, a, b from t where " + where + " order by k");
    set_pushdown_option(env, true);
    env.expect("select k, a, b from t where " + where + " order by k", ref);
  };
  check("a = 3");
  check("a between 1 and 2 and k > 30");
  check("b = 'b1' and k < 20");
  env.exec("update t set a = a + 10 where k % 4 = 0");
  env.exec("delete from t where a = 2");
  check("a = 14");
  check("a >= 10");
  alter(env, "alter table t rename column a to aa");
  env.expect("select count(*) from t where aa = 3", env.query("select count(*) from t where aa + 0 = 3"));
  env.exec("drop index t_a");
  env.expect("select count(*) from t where aa = 3", env.query("select count(*) from t where aa + 0 = 3"));
  env.exec("drop index t_ab");
  env.expect("select count(*) from t", {"51"});
}

// ---------------------------------------------------------------- 9 persistence

void require_persistent(Env& env) {
  if (!env.ctx().caps.persistent) skip("the module does not declare persistence (capability `persistent`)");
}

void persist_reopen(Env& env) {
  require_persistent(env);
  env.exec("create table t (k integer primary key, a integer null, b text null)");
  env.exec("create index t_a on t (a)");
  env.exec("create table c (x text collate nocase, y integer, primary key (x, y desc))");
  env.exec("insert into t select value, value % 7, 'r' || value from generate_series(1, 100)");
  env.exec("insert into c values ('b', 1), ('A', 2), ('a', 3)");
  env.exec("create view big as select k, b from t where k > 95");
  env.exec("begin; insert into t values (500, 1, 'uncommitted')");
  env.reopen();
  env.expect("select count(*), sum(k) from t", {"100|5050"});
  env.expect("select k from t where a = 3 and k < 30 order by k", {"3", "10", "17", "24"});
  env.expect("select x, y from c order by x, y desc", {"a|3", "A|2", "b|1"});
  env.fails("insert into c values ('B', 1)", StatusCode::kConstraint);
  env.expect("select k, b from big order by k", {"96|r96", "97|r97", "98|r98", "99|r99", "100|r100"});
  env.expect("select count(*) from t where k = 500", {"0"});
  env.exec("update t set a = a + 100 where k <= 10; delete from t where k > 90; alter table t add column d integer default 5");
  env.reopen();
  env.expect("select count(*), min(a), max(a) from t where a >= 100", {"10|100|106"});
  env.expect("select count(*), sum(d) from t", {"90|450"});
  env.expect("select k from t where a = 103 order by k", {"3", "10"});
  env.exec("drop table c; drop view big");
  env.reopen();
  env.fails("select * from c");
  env.fails("select * from big");
  env.expect("select count(*) from t", {"90"});
}

}  // namespace

void add_txn_tests(TestList& out) {
  out.push_back({6, "commit_rollback", txn_commit_rollback});
  out.push_back({6, "reads_own_writes", txn_reads_own_writes});
  out.push_back({6, "savepoints", txn_savepoints});
  out.push_back({6, "failed_statement_alone", txn_failed_statement_alone});
  out.push_back({6, "multi_table", txn_multi_table});
  out.push_back({6, "committed_reads", txn_committed_reads});
}

void add_halloween_tests(TestList& out) {
  out.push_back({7, "primary_key_range", halloween_pk});
  out.push_back({7, "indexed_column_range", halloween_index});
}

void add_alter_tests(TestList& out) {
  out.push_back({8, "add_drop_column", alter_add_drop_column});
  out.push_back({8, "renames", alter_renames});
  out.push_back({8, "set_data_type", alter_set_data_type});
  out.push_back({8, "not_null", alter_not_null});
  out.push_back({8, "default", alter_default});
  out.push_back({8, "collation_rekey", alter_collation_rekey});
  out.push_back({8, "primary_key", alter_primary_key});
  out.push_back({8, "constraints", alter_constraints});
  out.push_back({8, "in_transaction", alter_in_transaction});
  out.push_back({8, "create_drop_index", alter_indexes});
}

void add_persistence_tests(TestList& out) { out.push_back({9, "reopen", persist_reopen}); }

}  // namespace quereus::conformance::detail
