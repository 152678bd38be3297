// Foreign keys, the deferred-constraint queue and assertions, end to end through the
// embedding API: statuses, transaction state after a failed COMMIT, savepoint interplay.
#include "mem_db_test.h"

namespace quereus {
namespace {

class ForeignKeyTest : public MemDbTest {
 protected:
  int64_t count(const std::string& table) {
    auto rows = query("select count(*) from " + table);
    return rows.empty() ? -1 : rows[0][0].as_int();
  }
};

TEST_F(ForeignKeyTest, ChildViolationIsAConstraintAndLeavesNothing) {
  exec("create table p (id integer primary key)");
  exec("create table c (id integer primary key, pid integer references p(id))");
  exec("insert into p values (1)");
  fails("insert into c values (1, 1), (2, 2)", StatusCode::kConstraint, "CHECK constraint failed: _fk_c_pid");
  EXPECT_EQ(count("c"), 0);  // the statement is atomic: row 1 went too
}

TEST_F(ForeignKeyTest, FailedCommitRollsBackTheTransaction) {
  exec("create table p (id integer primary key)");
  exec("create table c (id integer primary key, pid integer references p(id) deferrable initially deferred)");
  exec("begin");
  exec("insert into p values (1)");
  exec("insert into c values (1, 99)");  // deferred: accepted for now
  EXPECT_TRUE(db_->in_transaction());
  fails("commit", StatusCode::kConstraint, "_fk_c_pid");
  EXPECT_FALSE(db_->in_transaction());
  EXPECT_EQ(count("p"), 0);  // the whole transaction is gone, not only the child row
  EXPECT_EQ(count("c"), 0);
}

TEST_F(ForeignKeyTest, NoActionFailureUndoesOnlyTheStatement) {
  exec("create table p (id integer primary key)");
  exec("create table c (id integer primary key, pid integer references p(id) on delete no action)");
  exec("insert into p values (1), (2)");
  exec("insert into c values (1, 1)");
  exec("begin");
  exec("delete from p where id = 2");
  fails("delete from p where id = 1", StatusCode::kConstraint, "violates RESTRICT from 'c'");
  EXPECT_TRUE(db_->in_transaction());
  exec("commit");
  auto rows = query("select id from p");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].as_int(), 1);
}

TEST_F(ForeignKeyTest, CascadesReachEveryLevel) {
  exec("create table a (id integer primary key)");
  exec("create table b (id integer primary key, aid integer references a(id) on delete cascade)");
  exec("create table c (id integer primary key, bid integer references b(id) on delete cascade)");
  exec("insert into a values (1), (2)");
  exec("insert into b values (10, 1), (11, 1), (20, 2)");
  exec("insert into c values (100, 10), (101, 11), (200, 20)");
  auto rows = query("delete from a where id = 1 returning id");
  ASSERT_EQ(rows.size(), 1u);  // RETURNING reports the statement's own rows only
  EXPECT_EQ(count("b"), 1);
  EXPECT_EQ(count("c"), 1);
}

TEST_F(ForeignKeyTest, SavepointRollbackDropsQueuedChecks) {
  exec("create table t (id integer primary key, v integer, check (v <= (select 10)))");
  exec("begin");
  exec("insert into t values (1, 5)");
  exec("savepoint s");
  exec("insert into t values (2, 50)");  // deferred CHECK: queued
  exec("rollback to s");
  exec("commit");  // the queued check went with the savepoint
  EXPECT_EQ(count("t"), 1);
}

TEST_F(ForeignKeyTest, AssertionFailsTheCommitThatBreaksIt) {
  exec("create table t (id integer primary key, v integer)");
  exec("create assertion small check ((select count(*) from t) <= 2)");
  exec("insert into t values (1, 1), (2, 2)");
  exec("begin");
  exec("insert into t values (3, 3)");
  fails("commit", StatusCode::kConstraint, "Integrity assertion failed: small");
  EXPECT_FALSE(db_->in_transaction());
  EXPECT_EQ(count("t"), 2);
  exec("drop assertion small");
  exec("insert into t values (3, 3)");
  EXPECT_EQ(count("t"), 3);
}

TEST_F(ForeignKeyTest, EnforcementCanBeSwitchedOff) {
  exec("create table p (id integer primary key)");
  exec("create table c (id integer primary key, pid integer references p(id))");
  ASSERT_TRUE(db_->set_option("foreign_keys", Value::Boolean(false)).ok());
  exec("insert into c values (1, 5)");
  ASSERT_TRUE(db_->set_option("foreign_keys", Value::Boolean(true)).ok());
  fails("insert into c values (2, 5)", StatusCode::kConstraint, "_fk_c_pid");
  EXPECT_EQ(count("c"), 1);
}

}  // namespace
}  // namespace quereus
