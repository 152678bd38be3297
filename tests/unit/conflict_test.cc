// Conflict handling on the single write path (DmlWriter): declared ON CONFLICT defaults
// of PRIMARY KEY / NOT NULL, the statement's OR action, and INSERT … ON CONFLICT (upsert).
#include <gtest/gtest.h>

#include "mem_db_test.h"

#include "main/database.h"

namespace quereus {
namespace {

class ConflictTest : public MemDbTest {
 protected:
  // The rows of a one-statement query, each row's cells as text joined by ','.
  std::vector<std::string> rows(const std::string& sql) {
    std::vector<std::unique_ptr<Statement>> stmts;
    EXPECT_TRUE(db_->prepare(sql, &stmts).ok()) << sql;
    std::vector<std::string> out;
    if (stmts.empty()) return out;
    bool has = false;
    while (true) {
      Status st = stmts[0]->step(&has);
      EXPECT_TRUE(st.ok()) << sql << ": " << st.to_string();
      if (!st.ok() || !has) break;
      std::string line;
      for (const Value& v : stmts[0]->row()) {
        if (!line.empty()) line += ",";
        line += v.is_null() ? "NULL" : v.to_text();
      }
      out.push_back(line);
    }
    return out;
  }
  using Rows = std::vector<std::string>;
};

TEST_F(ConflictTest, PrimaryKeyOnConflictIgnoreSkipsTheDuplicate) {
  ok("create table t (a integer primary key on conflict ignore, b text)");
  ok("insert into t values (1, 'first')");
  ok("insert into t values (1, 'second'), (2, 'two')");
  EXPECT_EQ(rows("select a, b from t order by a"), (Rows{"1,first", "2,two"}));
}

TEST_F(ConflictTest, TablePrimaryKeyOnConflictReplaceReplacesTheRow) {
  ok("create table t (a integer, b integer, v text, primary key (a, b) on conflict replace)");
  ok("insert into t values (1, 1, 'first')");
  ok("insert into t values (1, 1, 'second')");
  EXPECT_EQ(rows("select a, b, v from t"), (Rows{"1,1,second"}));
}

TEST_F(ConflictTest, StatementActionWinsOverTheDeclaredDefault) {
  ok("create table t (a integer primary key on conflict ignore, b text)");
  ok("insert into t values (1, 'first')");
  fails("insert or abort into t values (1, 'second')", StatusCode::kConstraint, "UNIQUE constraint failed");
  EXPECT_EQ(rows("select b from t"), (Rows{"first"}));
}

TEST_F(ConflictTest, UpdateHonoursTheDeclaredDefault) {
  ok("create table t (id integer primary key on conflict replace, v text)");
  ok("insert into t values (1, 'a'), (2, 'b')");
  ok("update t set id = 2 where id = 1");
  EXPECT_EQ(rows("select id, v from t"), (Rows{"2,a"}));
}

TEST_F(ConflictTest, NotNullOnConflictIgnoreSkipsTheRow) {
  ok("create table t (id integer primary key, name text not null on conflict ignore)");
  ok("insert into t values (1, 'valid')");
  ok("insert into t (id) values (2)");
  EXPECT_EQ(rows("select id from t"), (Rows{"1"}));
}

TEST_F(ConflictTest, FailKeepsTheRowsWrittenBeforeTheViolation) {
  ok("create table t (a integer, b integer, primary key (a) on conflict fail)");
  ok("insert into t values (3, 0)");
  fails("insert into t values (1, 1), (2, 2), (3, 3), (4, 4)", StatusCode::kConstraint, "UNIQUE constraint failed");
  EXPECT_EQ(rows("select a from t order by a"), (Rows{"1", "2", "3"}));
  fails("insert or fail into t values (5, 5), (6, null)", StatusCode::kConstraint, "NOT NULL constraint failed");
  EXPECT_EQ(rows("select a from t where a > 4"), (Rows{"5"}));
}

TEST_F(ConflictTest, AbortUndoesTheWholeStatement) {
  ok("create table t (a integer primary key on conflict abort, b integer)");
  ok("insert into t values (3, 0)");
  fails("insert into t values (1, 1), (3, 3)", StatusCode::kConstraint, "UNIQUE constraint failed");
  EXPECT_EQ(rows("select a from t"), (Rows{"3"}));
}

TEST_F(ConflictTest, RollbackUndoesTheEnclosingTransaction) {
  ok("create table t (a integer primary key on conflict rollback, b integer)");
  ok("insert into t values (1, 0)");
  ok("begin");
  ok("insert into t values (2, 0)");
  fails("insert into t values (1, 1)", StatusCode::kConstraint, "UNIQUE constraint failed");
  EXPECT_FALSE(db_->in_transaction());
  EXPECT_EQ(rows("select a from t"), (Rows{"1"}));
}

TEST_F(ConflictTest, UpsertDoNothingSkipsTheConflictingRow) {
  ok("create table t (id integer primary key, v text)");
  ok("insert into t values (1, 'a')");
  EXPECT_EQ(rows("insert into t values (1, 'x'), (2, 'b') on conflict do nothing returning id"), (Rows{"2"}));
  EXPECT_EQ(rows("select id, v from t order by id"), (Rows{"1,a", "2,b"}));
}

TEST_F(ConflictTest, UpsertDoUpdateReadsExcludedAndTheStoredRow) {
  ok("create table t (id integer primary key, v text, n integer)");
  ok("insert into t values (1, 'a', 1)");
  EXPECT_EQ(rows("insert into t values (1, 'b', 10) on conflict (id) do update set v = excluded.v, n = n + new.n "
                 "returning id, v, n"),
            (Rows{"1,b,11"}));
  EXPECT_EQ(rows("select id, v, n from t"), (Rows{"1,b,11"}));
}

TEST_F(ConflictTest, UpsertWhereFalseWritesNothing) {
  ok("create table t (id integer primary key, v integer)");
  ok("insert into t values (1, 5)");
  EXPECT_EQ(rows("insert into t values (1, 3) on conflict (id) do update set v = excluded.v "
                 "where excluded.v > t.v returning v"),
            Rows{});
  EXPECT_EQ(rows("select v from t"), (Rows{"5"}));
}

TEST_F(ConflictTest, UpsertTargetMustBeTheKey) {
  ok("create table t (id integer primary key, email text)");
  fails("insert into t values (1, 'x') on conflict (email) do nothing", StatusCode::kError,
        "does not match any PRIMARY KEY or UNIQUE constraint");
  fails("insert or ignore into t values (1, 'x') on conflict do nothing", StatusCode::kSyntax,
        "Cannot use both 'INSERT OR ...' and 'ON CONFLICT'");
}

}  // namespace
}  // namespace quereus

namespace quereus {
namespace {

class NotNullReplaceTest : public ConflictTest {};

TEST_F(NotNullReplaceTest, ReplaceSubstitutesTheDefaultOnInsertAndUpdate) {
  ok("create table t (id integer primary key, v text not null on conflict replace default 'dflt', w text null)");
  ok("insert into t values (1, null, 'a')");
  ok("insert or replace into t (id, v, w) values (2, null, 'b')");
  ok("update t set v = null where id = 1");
  EXPECT_EQ(rows("select id, v from t order by id"), (Rows{"1,dflt", "2,dflt"}));
}

TEST_F(NotNullReplaceTest, ReplaceWithoutADefaultAborts) {
  ok("create table t (id integer primary key, v text not null)");
  fails("insert or replace into t values (1, null)", StatusCode::kConstraint, "NOT NULL constraint failed: t.v");
  EXPECT_TRUE(rows("select id from t").empty());
}

}  // namespace
}  // namespace quereus
