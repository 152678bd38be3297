// The subquery_decorrelation pass: EXISTS / NOT EXISTS / IN / NOT IN conjuncts of a WHERE
// become semi / anti joins when the shape is safe, stay per-row subqueries otherwise, and
// the answers are the same with the pass on and off (NULLs, duplicates, empty subqueries).
#include <gtest/gtest.h>

#include <algorithm>

#include "mem_db_test.h"

#include "main/database_impl.h"
#include "optimizer/optimizer.h"
#include "parser/parser.h"
#include "planner/planner.h"
#include "planner/properties.h"

namespace quereus {
namespace {

class DecorrelationTest : public MemDbTest {
 protected:
  void SetUp() override {
    MemDbTest::SetUp();
    for (const char* sql : {
             "create table o (id integer primary key, k integer null, g integer null, s text null)",
             "create table x (id integer primary key, c integer null, g integer null, s text null)",
             "create table nn (id integer primary key, c integer null)",
             "create table e (id integer primary key, c integer null, g integer null)",
             "create table ci (id integer primary key, s text collate nocase null)",
             // NULL keys, duplicate keys (k = 1 twice), a group with no x rows (g = 4).
             "insert into o values (1, 1, 1, 'a'), (2, 2, 1, 'B'), (3, null, 1, null), (4, 4, 2, 'c'), "
             "(5, 1, 3, 'b'), (6, 5, null, 'A'), (7, 3, 4, 'd')",
             // Duplicate members (c = 1 twice), a NULL member in group 2, a NULL group.
             "insert into x values (10, 1, 1, 'a'), (11, 1, 1, 'A'), (12, 2, 2, 'b'), (13, null, 2, null), "
             "(14, 4, 3, 'C'), (15, 7, null, 'd')",
             "insert into nn values (1, 1), (2, 2), (3, 2)",
             "insert into ci values (1, 'A'), (2, 'c')",
         }) {
      ASSERT_TRUE(db_->exec(sql).ok()) << sql;
    }
  }
  DatabaseImpl& impl() { return static_cast<DatabaseImpl&>(*db_); }

  void set_pass(bool on) {
    ASSERT_TRUE(db_->exec(on ? "pragma optimizer_disabled_passes = ''"
                             : "pragma optimizer_disabled_passes = 'subquery_decorrelation'")
                    .ok());
  }
  // The optimized plan of a SELECT as explain text, under the current options.
  std::string explain(const std::string& sql) {
    auto stmts = Parser::parse(sql);
    Planner planner(impl());
    QueryPlan qp = planner.plan_select(*static_cast<const ast::SelectStmt&>(*stmts[0]).select, nullptr);
    return explain_plan(*Optimizer(impl().options().optimizer).optimize(qp.root));
  }
  std::vector<Row> run(const std::string& sql) {
    std::vector<std::unique_ptr<Statement>> stmts;
    Status st = db_->prepare(sql, &stmts);
    EXPECT_TRUE(st.ok()) << sql << ": " << st.to_string();
    std::vector<Row> rows;
    if (!st.ok()) return rows;
    bool has = true;
    while (has) {
      st = stmts[0]->step(&has);
      EXPECT_TRUE(st.ok()) << sql << ": " << st.to_string();
      if (!st.ok()) break;
      if (has) rows.push_back(stmts[0]->row());
    }
    return rows;
  }
  // The first column of each row, as integers (-1 for NULL).
  std::vector<int64_t> ids(const std::string& sql) {
    std::vector<int64_t> out;
    for (const Row& r : run(sql)) out.push_back(r[0].is_null() ? -1 : r[0].as_int());
    return out;
  }
  // Runs `sql` with the pass on and off; the answers must agree.
  void expect_same(const std::string& sql) {
    set_pass(true);
    auto on = run(sql);
    set_pass(false);
    auto off = run(sql);
    set_pass(true);
    EXPECT_EQ(on, off) << sql;
  }
};

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST_F(DecorrelationTest, PlanShowsSemiAndAntiJoinsWhenOn) {
  set_pass(true);
  EXPECT_TRUE(has(explain("select id from o where exists (select 1 from x where x.g = o.g)"), "SEMI JOIN (hash)"));
  EXPECT_TRUE(has(explain("select id from o where not exists (select 1 from x where x.g = o.g)"), "ANTI JOIN (hash)"));
  EXPECT_TRUE(has(explain("select id from o where k in (select c from x)"), "SEMI JOIN (hash)"));
  EXPECT_TRUE(has(explain("select id from o where k in (select c from x where x.g = o.g)"), "SEMI JOIN (hash)"));
  EXPECT_TRUE(has(explain("select id from o where k not in (select c from x)"), "ANTI JOIN (hash, null-aware)"));
  EXPECT_TRUE(has(explain("select id from o where not (k in (select c from x))"), "ANTI JOIN"));
  // A correlation the module answers with a primary-key seek is lifted back out of the scan.
  std::string seek = explain("select id from o where exists (select 1 from x where x.id = o.k)");
  EXPECT_TRUE(has(seek, "SEMI JOIN (hash)")) << seek;
  EXPECT_FALSE(has(seek, "FILTER")) << seek;
  // The uncorrelated conjuncts stay on (or are pushed into) the two sides.
  std::string both = explain("select id from o where id > 1 and exists (select 1 from x where x.g = o.g and x.c > 1)");
  EXPECT_TRUE(has(both, "SEMI JOIN (hash)")) << both;
  EXPECT_FALSE(has(both, "FILTER\n  SEMI")) << both;
}

TEST_F(DecorrelationTest, PlanKeepsSubqueriesWhenOff) {
  set_pass(false);
  for (const char* sql : {"select id from o where exists (select 1 from x where x.g = o.g)",
                          "select id from o where k in (select c from x)",
                          "select id from o where k not in (select c from x)"}) {
    std::string plan = explain(sql);
    EXPECT_FALSE(has(plan, "SEMI JOIN")) << plan;
    EXPECT_FALSE(has(plan, "ANTI JOIN")) << plan;
    EXPECT_TRUE(has(plan, "FILTER")) << plan;
  }
  set_pass(true);
}

TEST_F(DecorrelationTest, UnsafeShapesStayAsTheyAre) {
  set_pass(true);
  for (const char* sql : {
           // A correlation that is not an equality.
           "select id from o where exists (select 1 from x where x.c > o.k)",
           // An equality whose inner side reads the outer row too.
           "select id from o where exists (select 1 from x where x.c = o.k + x.g - o.g)",
           // LIMIT applies per outer row.
           "select id from o where exists (select 1 from x where x.g = o.g limit 1)",
           // Aggregates over the correlated rows.
           "select id from o where k in (select max(c) from x where x.g = o.g)",
           // A disjunction with the correlation inside.
           "select id from o where exists (select 1 from x where x.g = o.g or x.c = 1)",
           // Not a top-level conjunct.
           "select id from o where k = 1 or exists (select 1 from x where x.g = o.g)",
           // A correlated subquery with a non-deterministic function runs once per row.
           "select id from o where exists (select 1 from x where x.g = o.g and random() > 0)",
           // So does an uncorrelated one whose rows may differ run to run (random(), a
           // date / time call given 'now'): its rows are not kept across rows.
           "select id from o where k in (select abs(random()) % 5 from x)",
           "select id from o where s in (select datetime('now') from x)",
       }) {
    std::string plan = explain(sql);
    EXPECT_FALSE(has(plan, "SEMI JOIN")) << sql << "\n" << plan;
    EXPECT_FALSE(has(plan, "ANTI JOIN")) << sql << "\n" << plan;
  }
}

// A date / time call over arguments that cannot be 'now' (an integer column, a literal
// modifier) leaves an uncorrelated subquery constant: still one semi join. A text
// expression might be 'now', so that subquery runs per row (the schema gate's rule).
TEST_F(DecorrelationTest, ClockFunctionWithoutNowStaysASemiJoin) {
  set_pass(true);
  std::string plan = explain("select id from o where s in (select date(c, 'unixepoch') from x)");
  EXPECT_TRUE(has(plan, "SEMI JOIN")) << plan;
  plan = explain("select id from o where s in (select date('2024-01-01', '+' || c || ' days') from x)");
  EXPECT_FALSE(has(plan, "SEMI JOIN")) << plan;
}

TEST_F(DecorrelationTest, QueryPlanNamesTheJoin) {
  set_pass(true);
  auto rows = run("select op, detail from query_plan('select id from o where k not in (select c from nn)')");
  bool found = false;
  for (const Row& r : rows)
    if (r[0].to_text() == "ANTI") found = true;
  EXPECT_TRUE(found);
}

TEST_F(DecorrelationTest, NotInFollowsSqlNullSemantics) {
  set_pass(true);
  // A NULL member: NOT IN is never true.
  EXPECT_EQ(ids("select id from o where k not in (select c from x) order by id"), std::vector<int64_t>{});
  // No NULL member: a NULL probe is not true either.
  EXPECT_EQ(ids("select id from o where k not in (select c from nn) order by id"), (std::vector<int64_t>{4, 6, 7}));
  // An empty subquery: true, even for a NULL probe.
  EXPECT_EQ(ids("select id from o where k not in (select c from e) order by id"),
            (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7}));
  // Per outer row (correlated): g=1 members {1,1}; g=2 {2,NULL}; g=3 {4}; g=4 and NULL g: none.
  EXPECT_EQ(ids("select id from o where k not in (select c from x where x.g = o.g) order by id"),
            (std::vector<int64_t>{2, 5, 6, 7}));
  EXPECT_EQ(ids("select id from o where not (k in (select c from x where x.g = o.g)) order by id"),
            (std::vector<int64_t>{2, 5, 6, 7}));
  EXPECT_EQ(ids("select id from o where k in (select c from x where x.g = o.g) order by id"),
            (std::vector<int64_t>{1}));
  EXPECT_EQ(ids("select id from o where k in (select c from x) order by id"), (std::vector<int64_t>{1, 2, 4, 5}));
}

TEST_F(DecorrelationTest, SemiJoinsNeverDuplicateRows) {
  set_pass(true);
  // x has two rows with c = 1 and two with g = 1.
  EXPECT_EQ(ids("select id from o where k in (select c from x) order by id"), (std::vector<int64_t>{1, 2, 4, 5}));
  EXPECT_EQ(ids("select id from o where exists (select 1 from x where x.g = o.g) order by id"),
            (std::vector<int64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(ids("select id from o where not exists (select 1 from x where x.g = o.g) order by id"),
            (std::vector<int64_t>{6, 7}));
  EXPECT_EQ(ids("select count(*) from o where exists (select 1 from x where x.c = 1)"), std::vector<int64_t>{7});
  EXPECT_EQ(ids("select count(*) from o where exists (select 1 from e)"), std::vector<int64_t>{0});
  EXPECT_EQ(ids("select count(*) from o where not exists (select 1 from e)"), std::vector<int64_t>{7});
}

TEST_F(DecorrelationTest, AnswersMatchWithThePassOff) {
  const std::vector<std::string> subqueries = {
      // uncorrelated: with a NULL member, without, empty
      "select c from x", "select c from nn", "select c from e", "select distinct c from x order by c",
      "select c from x where x.c > 1", "select c from x limit 2", "select max(c) from x",
      // correlated: equality on a column, with extra predicates, through a seek, empty
      "select c from x where x.g = o.g", "select c from x where x.g = o.g and x.c is not null",
      "select c from x where o.g = x.g and x.id > 10", "select c from x where x.id = o.k",
      "select c from e where e.g = o.g", "select c + 0 from x where x.g = o.g order by c desc",
      "select o.k from x where x.g = o.g", "select c from x where x.g = o.g and x.c = o.k",
      // not decorrelated (reference answers for the per-row path)
      "select c from x where x.c >= o.k", "select c from x where x.g = o.g limit 1",
  };
  for (const auto& sq : subqueries) {
    for (const char* form : {"exists (%)", "not exists (%)", "k in (%)", "k not in (%)", "not (k in (%))",
                             "g in (%)", "k + 1 in (%)"}) {
      std::string pred = form;
      pred.replace(pred.find('%'), 1, sq);
      expect_same("select id from o where " + pred + " order by id");
      expect_same("select id from o where id <> 3 and " + pred + " and s is not null order by id");
    }
  }
}

TEST_F(DecorrelationTest, ComparisonRulesOfInAreKept) {
  // Text against integer converts the text; a NOCASE side compares without case.
  for (const char* sql : {
           "select id from o where cast(k as text) in (select c from x) order by id",
           "select id from o where cast(k as text) not in (select c from nn) order by id",
           "select id from o where k in (select cast(c as text) from x where x.g = o.g) order by id",
           "select id from o where s in (select s from ci) order by id",
           "select id from o where s not in (select s from ci) order by id",
           "select id from o where s in (select s from x where x.g = o.g) order by id",
           "select id from o where s collate nocase in (select s from x where x.g = o.g) order by id",
           "select id from o where s not in (select s from x where x.g = o.g and x.s is not null) order by id",
           "select id from o where exists (select 1 from ci where ci.s = o.s) order by id",
       }) {
    expect_same(sql);
  }
  set_pass(true);
  EXPECT_EQ(ids("select id from o where s in (select s from ci) order by id"), (std::vector<int64_t>{1, 4, 6}));
}

TEST_F(DecorrelationTest, NestedAndOuterCorrelation) {
  for (const char* sql : {
           // The inner IN reads the outermost row (two levels up).
           "select id from o where exists (select 1 from x where x.g = o.g and x.c in "
           "(select c from nn where nn.c = o.k)) order by id",
           // A decorrelated EXISTS inside a correlated scalar subquery (re-opened per row).
           "select id, (select count(*) from x where x.g = o.g and exists (select 1 from nn where nn.c = x.c)) "
           "from o order by id",
           "select id, (select count(*) from x where x.g = o.g and x.c not in (select c from nn where nn.id > o.id)) "
           "from o order by id",
           // Two subquery conjuncts and one left per row.
           "select id from o where k in (select c from nn) and not exists (select 1 from x where x.g = o.g and "
           "x.c = 4) and (select count(*) from x where x.c > o.k) >= 0 order by id",
           // HAVING.
           "select g, count(*) from o group by g having g in (select g from x) order by g",
           "select g, count(*) from o group by g having not exists (select 1 from x where x.g = o.g) order by g",
           // A join on the left.
           "select o.id, nn.id from o join nn on nn.c = o.k where exists (select 1 from x where x.c = nn.c) "
           "order by o.id, nn.id",
       }) {
    expect_same(sql);
  }
}

TEST_F(DecorrelationTest, WritesSeeTheSameRows) {
  set_pass(true);
  ASSERT_TRUE(db_->exec("create table o2 (id integer primary key, k integer null)").ok());
  ASSERT_TRUE(db_->exec("insert into o2 select id, k from o").ok());
  ASSERT_TRUE(db_->exec("delete from o2 where k not in (select c from nn)").ok());
  EXPECT_EQ(ids("select id from o2 order by id"), (std::vector<int64_t>{1, 2, 3, 5}));
  ASSERT_TRUE(db_->exec("update o2 set k = 0 where exists (select 1 from x where x.c = o2.k)").ok());
  EXPECT_EQ(ids("select k from o2 order by id"), (std::vector<int64_t>{0, 0, -1, 0}));
}

TEST_F(DecorrelationTest, ConstantRightSideFollowsNewData) {
  set_pass(true);
  std::vector<std::unique_ptr<Statement>> stmts;
  ASSERT_TRUE(db_->prepare("select count(*) from o where k in (select c from e)", &stmts).ok());
  auto count = [&] {
    bool has_row = false;
    EXPECT_TRUE(stmts[0]->step(&has_row).ok());
    int64_t n = stmts[0]->row()[0].as_int();
    EXPECT_TRUE(stmts[0]->reset().ok());
    return n;
  };
  EXPECT_EQ(count(), 0);
  ASSERT_TRUE(db_->exec("insert into e values (1, 1, 1)").ok());
  EXPECT_EQ(count(), 2);
}

TEST_F(DecorrelationTest, SemiJoinKeepsTheLeftSidesKeys) {
  set_pass(true);
  auto stmts = Parser::parse("select id, k from o where exists (select 1 from x where x.g = o.g)");
  Planner planner(impl());
  QueryPlan qp = planner.plan_select(*static_cast<const ast::SelectStmt&>(*stmts[0]).select, nullptr);
  RelPtr root = Optimizer(impl().options().optimizer).optimize(qp.root);
  ASSERT_TRUE(has(explain_plan(*root), "SEMI JOIN"));
  EXPECT_TRUE(derive_properties(*root).is_unique({0}, 2));
}

}  // namespace
}  // namespace quereus
