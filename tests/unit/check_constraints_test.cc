// CHECK constraints on the single write path (DmlWriter), over the mem plugin.
#include <gtest/gtest.h>

#include "mem_db_test.h"

#include "main/database.h"

namespace quereus {
namespace {

class CheckConstraintsTest : public MemDbTest {
 protected:
  int64_t count(const std::string& table) {
    std::vector<std::unique_ptr<Statement>> stmts;
    EXPECT_TRUE(db_->prepare("select count(*) from " + table, &stmts).ok());
    bool has = false;
    EXPECT_TRUE(stmts[0]->step(&has).ok());
    return has ? stmts[0]->row()[0].as_int() : -1;
  }
};

TEST_F(CheckConstraintsTest, ColumnCheckNamesTheColumnAndQuotesTheExpression) {
  ok("create table t (a integer primary key, b integer null check (b > 0))");
  ok("insert into t values (1, 5)");
  ok("insert into t values (2, null)");  // NULL passes
  fails("insert into t values (3, 0)", StatusCode::kConstraint, "CHECK constraint failed: _check_b (b > 0)");
  EXPECT_EQ(count("t"), 2);
}

TEST_F(CheckConstraintsTest, TableCheckIsNumberedAndNamedCheckKeepsItsName) {
  ok("create table t (a integer primary key, b integer, check (b < 10), constraint small check (a < 100))");
  fails("insert into t values (1, 10)", StatusCode::kConstraint, "CHECK constraint failed: _check_0 (b < 10)");
  fails("insert into t values (100, 1)", StatusCode::kConstraint, "CHECK constraint failed: small (a < 100)");
}

TEST_F(CheckConstraintsTest, SecondUnnamedCheckOnAColumnGetsASuffix) {
  ok("create table t (a integer primary key, b integer check (b < 10) check (b > 0))");
  fails("insert into t values (1, 0)", StatusCode::kConstraint, "_check_b_2 (b > 0)");
}

TEST_F(CheckConstraintsTest, FailedStatementLeavesNothingBehind) {
  ok("create table src (a integer primary key, b integer)");
  ok("insert into src values (1, 1), (2, 2), (3, 30)");
  ok("create table dst (a integer primary key, b integer check (b < 10))");
  fails("insert into dst select a, b from src", StatusCode::kConstraint, "CHECK constraint failed");
  EXPECT_EQ(count("dst"), 0);
  ok("insert into dst select a, b from src where b < 10");
  fails("update dst set b = b + 8", StatusCode::kConstraint, "CHECK constraint failed");
  EXPECT_EQ(count("dst where b < 3"), 2);
}

TEST_F(CheckConstraintsTest, OperationListsAndRowImages) {
  ok("create table t (id integer primary key, v integer, constraint up check on update (v >= old.v), "
     "constraint del check on delete (v = 0 and new.v is null))");
  ok("insert into t values (1, 5), (2, 0)");  // neither applies to INSERT
  ok("update t set v = 6 where id = 1");
  fails("update t set v = 1 where id = 1", StatusCode::kConstraint, "CHECK constraint failed: up (v >= old.v)");
  fails("delete from t where id = 1", StatusCode::kConstraint, "CHECK constraint failed: del");
  ok("delete from t where id = 2");
  EXPECT_EQ(count("t"), 1);
}

TEST_F(CheckConstraintsTest, NewQualifierReadsTheWrittenRow) {
  ok("create table t (id integer primary key, a integer, constraint pos check (new.a > 0))");
  ok("insert into t values (1, 1)");
  fails("insert into t values (2, 0)", StatusCode::kConstraint, "CHECK constraint failed: pos (new.a > 0)");
}

TEST_F(CheckConstraintsTest, SubqueryInCheckIsDeferredToCommit) {
  exec("create table t (a integer, check (a < (select 10)))");
  exec("begin");
  exec("insert into t values (50)");  // queued, not evaluated yet
  fails("commit", StatusCode::kConstraint, "CHECK constraint failed: _check_0");
  EXPECT_FALSE(db_->in_transaction());
  // A bind parameter is refused inside a subquery as well.
  fails("create table u (a integer, check (a in (select 1 union all select ?)))", StatusCode::kError,
        "may not reference bind parameters");
}

TEST_F(CheckConstraintsTest, BindParameterInCheckIsRefusedAtCreateTable) {
  fails("create table t (a integer, check (a = ?))", StatusCode::kError, "may not reference bind parameters");
  fails("create table t (a integer check (a = :foo))", StatusCode::kError, "'_check_a' on table 't'");
}

}  // namespace
}  // namespace quereus
