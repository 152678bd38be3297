// Writing through views end to end over the mem plugin (rewrite/view_writes.cc,
// docs/view-updates.md): the lowering onto the base tables, refusals with their status
// codes, atomicity of a join write, re-execution of a prepared view write, and
// mutation_ordinal().
#include <gtest/gtest.h>

#include "mem_db_test.h"

#include "main/database.h"

namespace quereus {
namespace {

class ViewWritesTest : public MemDbTest {
 protected:
  int64_t count(const std::string& sql) {
    auto rows = query(sql);
    EXPECT_EQ(rows.size(), 1u) << sql;
    return rows.empty() ? -1 : rows[0][0].as_int();
  }
};

TEST_F(ViewWritesTest, SingleSourceWritesLandInTheBaseTable) {
  exec("create table t (id integer primary key, name text, kind text default 'k');"
       "create view v as select id as key, name from t where kind = 'x'");
  exec("insert into v (key, name) values (1, 'a'), (2, 'b')");
  auto rows = query("select id, name, kind from t order by id");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0][2].str(), "x");  // the filter's constant fills the hidden column
  exec("update v set name = 'B' where key = 2");
  EXPECT_EQ(count("select count(*) from t where name = 'B'"), 1);
  exec("insert into t values (3, 'c', 'other')");
  exec("delete from v");  // only the rows the view shows
  EXPECT_EQ(count("select count(*) from t"), 1);
}

TEST_F(ViewWritesTest, RefusalsAreErrorsNamingTheObstacle) {
  exec("create table t (id integer primary key, name text);"
       "create view vc as select id, length(name) as n from t;"
       "create view vs as select id from t");
  fails("update vc set n = 1", StatusCode::kError, "column 'n' is computed");
  fails("update vs set name = 'x'", StatusCode::kError, "column 'name' is not a column of view 'vs'");
  fails("insert into vs values (1)", StatusCode::kError, "no default for NOT NULL column 't.name'");
  EXPECT_EQ(count("select count(*) from t"), 0);
}

TEST_F(ViewWritesTest, AFailedJoinInsertLeavesNoSideWritten) {
  exec("create table a (id integer primary key, x text);"
       "create table b (id integer primary key, y text check (y <> 'bad'));"
       "create view ab as select a.id as id, a.x as x, b.y as y from a join b on b.id = a.id");
  exec("insert into ab values (1, 'x1', 'y1')");
  // The first side's row is written before the second side's CHECK fails: the statement
  // savepoint takes both back.
  fails("insert into ab values (2, 'x2', 'bad')", StatusCode::kConstraint, "CHECK");
  EXPECT_EQ(count("select count(*) from a"), 1);
  EXPECT_EQ(count("select count(*) from b"), 1);
}

TEST_F(ViewWritesTest, APreparedViewWriteRunsAgainWithFreshCaptures) {
  exec("create table p (id integer primary key default (coalesce((select max(id) from p), 0) + mutation_ordinal()), n text);"
       "create table c (id integer primary key, v text);"
       "create view pc as select p.n as n, c.v as v from p join c on c.id = p.id");
  std::vector<std::unique_ptr<Statement>> stmts;
  ASSERT_TRUE(db_->prepare("insert into pc (n, v) values (?, 'v')", &stmts).ok());
  ASSERT_EQ(stmts.size(), 1u);
  for (const char* n : {"one", "two", "three"}) {
    ASSERT_TRUE(stmts[0]->reset().ok());
    ASSERT_TRUE(stmts[0]->bind(1, Value::Text(n)).ok());
    bool has = true;
    Status st = stmts[0]->step(&has);
    ASSERT_TRUE(st.ok()) << st.to_string();
  }
  auto rows = query("select p.id, n, v from p join c on c.id = p.id order by p.id");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[2][0].as_int(), 3);
  EXPECT_EQ(rows[2][1].str(), "three");
  // Update through the join, twice from one prepared statement.
  std::vector<std::unique_ptr<Statement>> upd;
  ASSERT_TRUE(db_->prepare("update pc set v = v || '+' where n <> 'two'", &upd).ok());
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(upd[0]->reset().ok());
    bool has = true;
    ASSERT_TRUE(upd[0]->step(&has).ok());
  }
  EXPECT_EQ(count("select count(*) from c where v = 'v++'"), 2);
  EXPECT_EQ(count("select count(*) from c where v = 'v'"), 1);
}

TEST_F(ViewWritesTest, ParametersKeepTheirPositionsThroughTheLowering) {
  exec("create table a (id integer primary key, x text);"
       "create table b (id integer primary key, y text);"
       "create view ab as select a.id as id, a.x as x, b.y as y from a join b on b.id = a.id;"
       "create view ax as select id, x from a where x <> 'skip'");
  std::vector<std::unique_ptr<Statement>> stmts;
  // The WITH clause's parameter comes first; the source's and the SET value's after it.
  ASSERT_TRUE(db_->prepare("with k as (select ? as n) insert into ab (id, x, y) select n, ?, ? from k;"
                           "with k as (select ? as n) update ax set x = ? where id = (select n from k)",
                           &stmts).ok());
  ASSERT_EQ(stmts.size(), 2u);
  const Value args[][3] = {{Value::Integer(7), Value::Text("x7"), Value::Text("y7")},
                           {Value::Integer(7), Value::Text("x8"), Value()}};
  for (size_t s = 0; s < 2; ++s) {
    for (int i = 0; i < (s == 0 ? 3 : 2); ++i) ASSERT_TRUE(stmts[s]->bind(i + 1, args[s][i]).ok());
    bool has = true;
    Status st = stmts[s]->step(&has);
    ASSERT_TRUE(st.ok()) << st.to_string();
  }
  auto rows = query("select id, x, y from ab");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].as_int(), 7);
  EXPECT_EQ(rows[0][1].str(), "x8");
  EXPECT_EQ(rows[0][2].str(), "y7");
}

TEST_F(ViewWritesTest, MutationOrdinalCountsTheRowsOfOneInsert) {
  exec("create table t (id integer primary key, o integer default (mutation_ordinal()))");
  exec("insert into t (id) values (10), (20), (30)");
  auto rows = query("select o from t order by id");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0][0].as_int(), 1);
  EXPECT_EQ(rows[2][0].as_int(), 3);
  fails("select mutation_ordinal()", StatusCode::kError, "only valid while an INSERT");
}

}  // namespace
}  // namespace quereus
