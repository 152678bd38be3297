// The subquery_cache pass (optimizer/subquery_cache.h): a part of a correlated subquery's
// plan that reads nothing of the outer row runs once per statement execution, not once per
// outer row — counted through a deterministic test function the cached part calls — while a
// part that reads the outer row, calls a non-deterministic function, or belongs to a
// statement that writes keeps running per row. Answers agree with the pass on and off.
#include <gtest/gtest.h>

#include <memory>

#include "mem_db_test.h"

#include "catalog/function.h"
#include "catalog/registry.h"

namespace quereus {
namespace {

class SubqueryCacheTest : public MemDbTest {
 protected:
  void SetUp() override {
    MemDbTest::SetUp();
    // tick(x) returns x and counts its calls; vtick is the same, declared non-deterministic.
    for (const char* name : {"tick", "vtick"}) {
      ScalarFunction fn;
      fn.name = name;
      fn.num_args = 1;
      fn.flags = std::string(name) == "tick" ? uint32_t{kDeterministic} : 0u;
      auto calls = calls_;
      fn.call = [calls](std::span<const Value> args) -> Value {
        ++*calls;
        return args[0];
      };
      fn.infer_type = [](ArgTypes types) { return types.empty() ? QRS_LT_ANY : types[0]; };
      registry_->add_scalar(std::move(fn), "test");
    }
    exec("create table o (id integer primary key, k integer null)");
    exec("create table w (id integer primary key, g integer null, v integer null)");
    for (int i = 1; i <= 20; ++i)
      exec("insert into o values (" + std::to_string(i) + ", " + std::to_string(i * 3) + ")");
    for (int i = 1; i <= 30; ++i)
      exec("insert into w values (" + std::to_string(i) + ", " + std::to_string(i % 4) + ", " + std::to_string(i) + ")");
  }

  void set_pass(bool on) {
    exec(on ? "pragma optimizer_disabled_passes = ''" : "pragma optimizer_disabled_passes = 'subquery_cache'");
  }
  // Runs `sql` with the pass on and off: the answers must agree. The calls of tick/vtick
  // each made land in *on_calls / *off_calls.
  std::vector<Row> both(const std::string& sql, int64_t* on_calls, int64_t* off_calls) {
    set_pass(true);
    *calls_ = 0;
    std::vector<Row> on = query(sql);
    *on_calls = *calls_;
    set_pass(false);
    *calls_ = 0;
    std::vector<Row> off = query(sql);
    *off_calls = *calls_;
    set_pass(true);
    EXPECT_EQ(on, off) << sql;
    return on;
  }

  // Steps a prepared one-row, one-integer query once and resets it for the next execution;
  // the calls of tick/vtick it made land in *calls_ (counted from zero).
  int64_t run_once(Statement& stmt) {
    *calls_ = 0;
    bool has = false;
    EXPECT_TRUE(stmt.step(&has).ok());
    EXPECT_TRUE(has);
    int64_t n = stmt.row()[0].as_int();
    EXPECT_TRUE(stmt.reset().ok());
    return n;
  }

  std::shared_ptr<int64_t> calls_ = std::make_shared<int64_t>(0);
};

// A window over w under an EXISTS whose only outer reference is a filter above it (the
// shape of difftest seed 554174764): the window's 30 input rows are read once in all.
TEST_F(SubqueryCacheTest, WindowUnderCorrelatedExistsRunsOnce) {
  const std::string sql =
      "select o.id from o where exists (select 1 from (select id, sum(tick(v)) over (partition by g) as s "
      "from w) q where q.s < o.k * 2) order by o.id";
  int64_t on, off;
  std::vector<Row> rows = both(sql, &on, &off);
  EXPECT_EQ(on, 30);
  EXPECT_GE(off, 30 * 10);  // each outer row read it again
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows.size(), 3u);  // partition sums 105, 112, 120, 128 < 2k for k = 54, 57, 60
}

// The same through a view, inside a LEFT JOIN's ON (difftest seed 702907807's shape), with
// the outer reference in a filter pushed below the join: the view is read once.
TEST_F(SubqueryCacheTest, ViewInLeftJoinOnRunsOnce) {
  exec("create view wv as select g, v, rank() over (order by tick(v) desc) as r from w");
  const std::string sql =
      "select o.id, count(w2.id) as n from o left join w as w2 on w2.g = o.id % 4 and exists "
      "(select 1 from wv join w as w3 on wv.g = w3.g where w3.v > o.k and wv.r < 5) group by o.id order by o.id";
  int64_t on, off;
  both(sql, &on, &off);
  EXPECT_EQ(on, 30);
  EXPECT_GT(off, 30 * 5);
}

// An aggregate and a DISTINCT under a scalar subquery in the select list.
TEST_F(SubqueryCacheTest, AggregateAndDistinctRunOnce) {
  int64_t on, off;
  both("select o.id, (select count(*) from (select g, sum(tick(v)) as s from w group by g) a where a.s > o.k) "
       "as n from o order by o.id",
       &on, &off);
  EXPECT_EQ(on, 30);
  EXPECT_EQ(off, 30 * 20);
  both("select o.id, (select count(*) from (select distinct tick(v) % 7 as m from w) d where d.m = o.id % 7) "
       "as n from o order by o.id",
       &on, &off);
  EXPECT_EQ(on, 30);
  EXPECT_EQ(off, 30 * 20);
}

// A part that reads the outer row runs per outer row, pass or not.
TEST_F(SubqueryCacheTest, CorrelatedPartIsNotCached) {
  int64_t on, off;
  both("select o.id, (select max(s) from (select sum(tick(v)) over (partition by g) as s from w "
       "where w.v < o.k) q) as m from o order by o.id",
       &on, &off);
  EXPECT_EQ(on, off);
  EXPECT_GT(on, 30);
}

// A non-deterministic function keeps its part running per outer row.
TEST_F(SubqueryCacheTest, NonDeterministicPartIsNotCached) {
  int64_t on, off;
  both("select o.id from o where exists (select 1 from (select sum(vtick(v)) over (partition by g) as s "
       "from w) q where q.s < o.k) order by o.id",
       &on, &off);
  EXPECT_EQ(on, off);
  EXPECT_GE(on, 30 * 10);
  // random() in the part: every outer row draws again (20 distinct draws, not one).
  std::vector<Row> rows = query(
      "select count(distinct (select max(r) from (select v + random() as r from w order by r) q "
      "where q.r > o.id - 1000000000)) from o");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].as_int(), 20);
}

// A statement that writes is left alone: an UPDATE whose SET reads, per row, a window over
// the table it is changing sees the rows it changed before (1, 2, 3, …, not all 1).
TEST_F(SubqueryCacheTest, WriteSeesItsOwnChanges) {
  exec("create table c (id integer primary key, v integer)");
  exec("insert into c values (1, 0), (2, 0), (3, 0), (4, 0)");
  exec("update c set v = 1 + (select max(m) from (select max(v) over () as m from c) s where s.m > c.id - 1000)");
  std::vector<Row> rows = query("select v from c order by id");
  ASSERT_EQ(rows.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(rows[i][0].as_int(), i + 1);
}

// The kept rows belong to one execution: a prepared statement run again after a change
// reads the new rows.
TEST_F(SubqueryCacheTest, NextExecutionRecomputes) {
  std::vector<std::unique_ptr<Statement>> stmts;
  ASSERT_TRUE(db_->prepare("select count(*) from o where exists (select 1 from (select max(tick(v)) over () as m "
                           "from w) q where q.m > o.k)",
                           &stmts)
                  .ok());
  EXPECT_EQ(run_once(*stmts[0]), 9);  // max(v) = 30 > k for k = 3 … 27
  EXPECT_EQ(*calls_, 30);
  exec("insert into w values (100, 1, 100)");
  EXPECT_EQ(run_once(*stmts[0]), 20);
  EXPECT_EQ(*calls_, 31);
}

// A subquery correlated only to the query two levels up (difftest seed 333002469's shape:
// a scalar subquery inside an IN subquery, reading the outermost row) keeps its result while
// that row stays: it runs once per outer row, not once per row of the IN subquery.
TEST_F(SubqueryCacheTest, SubqueryCorrelatedTwoLevelsUpRunsOncePerOuterRow) {
  int64_t on, off;
  std::vector<Row> rows =
      both("select o.id from o where o.id in (select w.id from w where w.v > "
           "(select count(tick(x.id)) from o as x where x.k < o.k) - 5) order by o.id",
           &on, &off);
  EXPECT_EQ(on, 190);  // 0 + 1 + … + 19: the rows of x under each o row's k, once per row of o
  EXPECT_EQ(off, 190 * 30);  // … and again for each of w's 30 rows
  EXPECT_FALSE(rows.empty());
}

// Rows under the same outer value share one run; a new value runs again (only the last
// result is kept).
TEST_F(SubqueryCacheTest, RepeatedOuterValuesShareARun) {
  exec("create table r (id integer primary key, g integer)");
  exec("insert into r values (1, 1), (2, 1), (3, 1), (4, 3), (5, 3), (6, 1)");
  int64_t on, off;
  std::vector<Row> rows =
      both("select r.id, (select sum(tick(v)) from w where w.g = r.g) as s from r order by r.id", &on, &off);
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[0][1], rows[5][1]);
  // g = 1 holds 8 rows of w, g = 3 holds 7: runs for rows 1, 4 and 6.
  EXPECT_EQ(on, 8 + 7 + 8);
  EXPECT_EQ(off, 4 * 8 + 2 * 7);
}

// A statement that writes keeps no result: each row of the UPDATE reads the table as its
// earlier rows left it, though the outer value it reads is the same for all.
TEST_F(SubqueryCacheTest, WriteKeepsNoCorrelatedResult) {
  exec("create table c2 (id integer primary key, g integer, v integer)");
  exec("insert into c2 values (1, 0, 0), (2, 0, 0), (3, 0, 0), (4, 0, 0)");
  exec("update c2 set v = 1 + (select max(v) from c2 as d where d.g = c2.g)");
  std::vector<Row> rows = query("select v from c2 order by id");
  ASSERT_EQ(rows.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(rows[i][0].as_int(), i + 1);
}

// A kept result belongs to one execution: run again after a change, a prepared statement
// reads the new rows although the outer value is the same.
TEST_F(SubqueryCacheTest, KeptCorrelatedResultEndsWithTheExecution) {
  exec("create table r1 (id integer primary key, g integer)");
  exec("insert into r1 values (1, 1), (2, 1)");
  std::vector<std::unique_ptr<Statement>> stmts;
  ASSERT_TRUE(db_->prepare("select max((select max(tick(v)) from w where w.g = r1.g)) from r1", &stmts).ok());
  EXPECT_EQ(run_once(*stmts[0]), 29);
  EXPECT_EQ(*calls_, 8);
  exec("insert into w values (100, 1, 100)");
  EXPECT_EQ(run_once(*stmts[0]), 100);
  EXPECT_EQ(*calls_, 9);
}

}  // namespace
}  // namespace quereus
