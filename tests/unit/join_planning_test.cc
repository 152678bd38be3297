// Join planning in the optimizer: predicate_pushdown through joins and projections,
// join_ordering, the hash join's build side and index_nested_loop. Plan shapes with
// each pass on and off, and results that must not depend on the passes.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "mem_db_test.h"

#include "main/database_impl.h"
#include "optimizer/optimizer.h"
#include "parser/parser.h"
#include "planner/planner.h"

namespace quereus {
namespace {

const char* kAllJoinPasses = "predicate_pushdown, join_ordering, index_nested_loop, hash_join";

class JoinPlanningTest : public MemDbTest {
 protected:
  void SetUp() override {
    MemDbTest::SetUp();
    // Small tables with NULLs and duplicate join values.
    exec("create table a (id integer primary key, x integer null, s text null)");
    exec("create table b (id integer primary key, a_id integer null, y integer null)");
    exec("create table c (id integer primary key, b_id integer null, z text null)");
    exec("create table e (k integer primary key, v integer null)");
    exec("insert into a values (1, 10, 'p'), (2, 20, 'q'), (3, null, 'p'), (4, 10, null), (5, 30, 'r')");
    exec("insert into b values (1, 1, 100), (2, 1, 200), (3, 2, null), (4, null, 100), (5, 9, 300), (6, 4, 200)");
    exec("insert into c values (1, 1, 'u'), (2, 2, 'v'), (3, 2, null), (4, 6, 'u'), (5, null, 'w')");
    exec("insert into e values (10, 1), (20, 2), (40, null)");
    // Larger tables for the cost-based choices.
    exec("create table big (id integer primary key, g integer)");
    exec("insert into big select value, value % 100 from generate_series(1, 20000)");
    exec("create table mid1 (id integer primary key, w integer)");
    exec("insert into mid1 select value, value % 7 from generate_series(1, 300)");
    exec("create table mid2 (id integer primary key, w integer)");
    exec("insert into mid2 select value, value % 5 from generate_series(1, 300)");
    exec("create table tiny (id integer primary key, big_id integer null, m1 integer null, m2 integer null)");
    exec("insert into tiny values (1, 5, 1, 2), (2, 17, 3, 3), (3, null, 4, null), (4, 30000, 5, 6), (5, 5, 7, 7)");
  }

  void disable(const std::string& passes) { exec("pragma optimizer_disabled_passes = '" + passes + "'"); }

  DatabaseImpl& impl() { return static_cast<DatabaseImpl&>(*db_); }
  RelPtr plan(const std::string& sql) {
    auto stmts = Parser::parse(sql);
    Planner planner(impl());
    QueryPlan qp = planner.plan_select(*static_cast<const ast::SelectStmt&>(*stmts[0]).select, nullptr);
    return Optimizer(impl().options().optimizer).optimize(qp.root);
  }
  std::string explain(const std::string& sql) { return explain_plan(*plan(sql)); }

  std::vector<std::string> rows(const std::string& sql) {
    std::vector<std::unique_ptr<Statement>> stmts;
    Status st = db_->prepare(sql, &stmts);
    EXPECT_TRUE(st.ok()) << sql << ": " << st.to_string();
    std::vector<std::string> out;
    if (!st.ok()) return out;
    bool has = true;
    while (has) {
      st = stmts[0]->step(&has);
      EXPECT_TRUE(st.ok()) << sql << ": " << st.to_string();
      if (!st.ok()) break;
      if (!has) break;
      std::string line;
      for (const Value& v : stmts[0]->row()) line += (v.is_null() ? "NULL" : v.to_text()) + "|";
      out.push_back(line);
    }
    return out;
  }
  // The rows with every join pass on and with all of them off, as multisets.
  void expect_same_results(const std::string& sql) {
    disable("");
    std::vector<std::string> on = rows(sql);
    disable(kAllJoinPasses);
    std::vector<std::string> off = rows(sql);
    disable("");
    std::sort(on.begin(), on.end());
    std::sort(off.begin(), off.end());
    EXPECT_EQ(on, off) << sql;
  }
};

// The nodes of a plan, depth first.
void walk(const RelNode& n, const std::function<void(const RelNode&)>& f) {
  f(n);
  for (const RelNode* c : n.children()) walk(*c, f);
}

std::vector<const JoinNode*> joins_of(const RelPtr& root) {
  std::vector<const JoinNode*> out;
  walk(*root, [&](const RelNode& n) {
    if (n.kind == RelKind::kJoin) out.push_back(static_cast<const JoinNode*>(&n));
  });
  return out;
}

const JoinNode& only_join(const RelPtr& root) {
  auto js = joins_of(root);
  EXPECT_EQ(js.size(), 1u);
  return *js.at(0);
}

// The table a plan subtree reads first (its leftmost scan).
std::string leftmost_table(const RelNode& n) {
  if (n.kind == RelKind::kTableScan) return static_cast<const TableScanNode&>(n).table->schema.name;
  auto c = n.children();
  return c.empty() ? "" : leftmost_table(*c[0]);
}

// True when a FILTER sits directly above `n` somewhere in the plan.
bool has_filter_above(const RelPtr& root, RelKind kind) {
  bool found = false;
  walk(*root, [&](const RelNode& n) {
    if (n.kind == RelKind::kFilter && static_cast<const FilterNode&>(n).input->kind == kind) found = true;
  });
  return found;
}

const TableScanNode* scan_of(const RelPtr& root, const std::string& table) {
  const TableScanNode* out = nullptr;
  walk(*root, [&](const RelNode& n) {
    if (n.kind == RelKind::kTableScan && static_cast<const TableScanNode&>(n).table->schema.name == table)
      out = static_cast<const TableScanNode*>(&n);
  });
  return out;
}

// ---------------------------------------------------------------- predicate_pushdown

TEST_F(JoinPlanningTest, WhereConjunctsMoveIntoTheSideTheyRead) {
  const std::string sql = "select * from a join b on b.a_id = a.id where a.id = 2 and b.y > 150 and a.x + b.y > 0";
  RelPtr p = plan(sql);
  const JoinNode& j = only_join(p);
  // a.id = 2 became a key seek of a's scan; b.y > 150 a filter on b; the cross-side
  // conjunct joined the ON.
  ASSERT_NE(scan_of(p, "a"), nullptr);
  EXPECT_EQ(scan_of(p, "a")->filters.size(), 1u);
  EXPECT_EQ(j.right->kind, RelKind::kFilter);
  EXPECT_FALSE(has_filter_above(p, RelKind::kJoin));
  disable("predicate_pushdown");
  RelPtr q = plan(sql);
  EXPECT_TRUE(has_filter_above(q, RelKind::kJoin));
  EXPECT_TRUE(scan_of(q, "a")->filters.empty());
  expect_same_results(sql);
}

TEST_F(JoinPlanningTest, InnerOnConjunctsOverOneSideMoveIntoIt) {
  RelPtr p = plan("select * from a join b on b.a_id = a.id and a.x = 10 and b.y is not null");
  const JoinNode& j = only_join(p);
  EXPECT_EQ(j.left->kind, RelKind::kFilter);
  EXPECT_EQ(j.right->kind, RelKind::kFilter);
  expect_same_results("select * from a join b on b.a_id = a.id and a.x = 10 and b.y is not null");
}

TEST_F(JoinPlanningTest, LeftJoinWhereMovesOnlyIntoThePreservedSide) {
  RelPtr p = plan("select * from a left join b on b.a_id = a.id where a.x = 10 and b.y is null");
  const JoinNode& j = only_join(p);
  EXPECT_EQ(j.left->kind, RelKind::kFilter);      // a.x = 10
  EXPECT_EQ(j.right->kind, RelKind::kTableScan);  // b.y is null must see the NULL-extended rows
  EXPECT_TRUE(has_filter_above(p, RelKind::kJoin));
  expect_same_results("select * from a left join b on b.a_id = a.id where a.x = 10 and b.y is null");
  expect_same_results("select a.id, b.id from a left join b on b.a_id = a.id where b.y > 100");
}

TEST_F(JoinPlanningTest, LeftJoinOnMovesOnlyIntoTheNullExtendedSide) {
  const std::string sql = "select a.id, b.id from a left join b on b.a_id = a.id and b.y > 100 and a.x = 10";
  RelPtr p = plan(sql);
  const JoinNode& j = only_join(p);
  EXPECT_EQ(j.left->kind, RelKind::kTableScan);  // a.x = 10 only decides matches
  EXPECT_EQ(j.right->kind, RelKind::kFilter);    // b.y > 100 filters b first
  std::vector<ScalarPtr> on;
  split_conjuncts(j.on, on);
  EXPECT_EQ(on.size(), 2u);
  expect_same_results(sql);
}

TEST_F(JoinPlanningTest, RightAndFullJoinsMirrorAndKeep) {
  RelPtr p = plan("select * from a right join b on b.a_id = a.id and a.x = 10 where b.y = 100");
  const JoinNode& r = only_join(p);
  EXPECT_EQ(r.left->kind, RelKind::kFilter);   // ON over the NULL-extended left side
  EXPECT_EQ(r.right->kind, RelKind::kFilter);  // WHERE over the preserved right side
  RelPtr q = plan("select * from a full join b on b.a_id = a.id and a.x = 10 where b.y = 100 and a.x = 10");
  const JoinNode& f = only_join(q);
  EXPECT_EQ(f.left->kind, RelKind::kTableScan);
  EXPECT_EQ(f.right->kind, RelKind::kTableScan);
  EXPECT_TRUE(has_filter_above(q, RelKind::kJoin));
  expect_same_results("select * from a right join b on b.a_id = a.id and a.x = 10 where b.y = 100");
  expect_same_results("select * from a full join b on b.a_id = a.id and a.x = 10 where b.y = 100 or a.x = 10");
  expect_same_results("select * from a full join b on b.a_id = a.id and b.y > 100 where a.x is null");
}

TEST_F(JoinPlanningTest, ExistenceFlagsStayAboveTheJoin) {
  const std::string sql = "select a.id, hb from a left join b on b.a_id = a.id and b.y = 100 exists as hb where not hb";
  RelPtr p = plan(sql);
  EXPECT_TRUE(has_filter_above(p, RelKind::kJoin));
  EXPECT_EQ(rows(sql).size(), 4u);  // only a 1 meets a b row with y = 100
  expect_same_results(sql);
  expect_same_results(
      "select a.id, b.id, hl, hr from a full join b on b.a_id = a.id exists left as hl, exists right as hr "
      "where hl and a.x > 10");
}

TEST_F(JoinPlanningTest, PushesThroughAPlainColumnProjection) {
  const std::string sql = "select * from (select id, x, x + 1 as x1 from a) t where t.id = 3 and t.x1 > 0";
  RelPtr p = plan(sql);
  // t.id = 3 reaches the scan (a key seek); t.x1 reads a computed column and stays above.
  ASSERT_NE(scan_of(p, "a"), nullptr);
  EXPECT_EQ(scan_of(p, "a")->filters.size(), 1u);
  EXPECT_TRUE(has_filter_above(p, RelKind::kProject));
  expect_same_results(sql);
}

TEST_F(JoinPlanningTest, NonDeterministicConjunctsDoNotMove) {
  RelPtr p = plan("select * from a join b on b.a_id = a.id where random() > 0 or a.x = 1");
  EXPECT_TRUE(has_filter_above(p, RelKind::kJoin));
}

TEST_F(JoinPlanningTest, CorrelatedConjunctsStayAboveWithTheirRow) {
  const std::string sql =
      "select a.id, b.id from a join b on b.a_id = a.id "
      "where a.x = (select max(x) from a a2 where a2.s = a.s)";
  expect_same_results(sql);
  expect_same_results(
      "select a.id, (select count(*) from b join c on c.b_id = b.id where b.a_id = a.id and c.z = 'u') as n from a");
}

// ---------------------------------------------------------------- join_ordering

TEST_F(JoinPlanningTest, SmallSelectiveInputGoesFirstAndOrderIsRestored) {
  const std::string sql = "select big.id, big.g, tiny.id from big join tiny on big.id = tiny.big_id";
  RelPtr p = plan(sql);
  // tiny first, big sought per tiny row; a PROJECT puts big's columns back first.
  EXPECT_EQ(p->kind, RelKind::kProject);
  const JoinNode& j = only_join(p);
  EXPECT_EQ(leftmost_table(*j.left), "tiny");
  EXPECT_TRUE(j.index_lookup);
  EXPECT_EQ(rows(sql), (std::vector<std::string>{"5|5|1|", "17|17|2|", "5|5|5|"}));
  disable("join_ordering");
  RelPtr q = plan(sql);
  EXPECT_EQ(leftmost_table(*only_join(q).left), "big");
  EXPECT_FALSE(only_join(q).index_lookup);
  expect_same_results(sql);
}

TEST_F(JoinPlanningTest, OrderingAvoidsCrossProducts) {
  // mid1 × mid2 first would make 90,000 pairs; tiny connects to both.
  const std::string sql =
      "select count(*), sum(mid1.w), sum(mid2.w) from mid1 cross join mid2 "
      "join tiny on tiny.m1 = mid1.id and tiny.m2 = mid2.id";
  RelPtr p = plan(sql);
  auto js = joins_of(p);
  ASSERT_EQ(js.size(), 2u);
  EXPECT_EQ(leftmost_table(*p), "tiny");
  for (const JoinNode* j : js) EXPECT_FALSE(j->equi_keys.empty() && !j->index_lookup) << j->describe();
  disable("join_ordering");
  RelPtr q = plan(sql);
  EXPECT_EQ(leftmost_table(*q), "mid1");
  expect_same_results(sql);
  EXPECT_EQ(rows(sql), (std::vector<std::string>{"4|9|8|"}));
}

TEST_F(JoinPlanningTest, SmallJoinsKeepTheirWrittenOrder) {
  RelPtr p = plan("select * from b join a on a.id = b.a_id join c on c.b_id = b.id");
  auto js = joins_of(p);
  ASSERT_EQ(js.size(), 2u);
  EXPECT_EQ(leftmost_table(*p), "b");
  int projects = 0;  // the select list's only: no order to restore
  walk(*p, [&](const RelNode& n) { projects += n.kind == RelKind::kProject; });
  EXPECT_EQ(projects, 1);
}

TEST_F(JoinPlanningTest, ThreeAndFourWayJoins) {
  expect_same_results("select * from a join b on b.a_id = a.id join c on c.b_id = b.id");
  expect_same_results("select * from a join b on b.a_id = a.id join c on c.b_id = b.id join e on e.v = a.id");
  expect_same_results(
      "select a.id, c.id from c join b on c.b_id = b.id join a on a.id = b.a_id where a.x = 10 and c.z = 'u'");
  expect_same_results(
      "select * from a join (select b.id as bid, b.a_id, c.z from b join c on c.b_id = b.id) bc on bc.a_id = a.id "
      "where bc.z is not null");
  expect_same_results("select * from a left join b on b.a_id = a.id join c on c.b_id = b.id");
  expect_same_results("select * from a join b on b.a_id = a.id left join c on c.b_id = b.id and c.z = 'u'");
  expect_same_results("select * from a cross join e join b on b.a_id = a.id and b.y = e.v * 100");
  expect_same_results(
      "select big.g, count(*) from tiny join big on big.id = tiny.big_id join mid1 on mid1.id = tiny.m1 "
      "join mid2 on mid2.id = big.g group by big.g");
  expect_same_results(
      "select count(*), sum(big.g) from big join mid1 on mid1.id = big.g join mid2 on mid2.w = mid1.w "
      "where mid2.id < 20");
}

// ---------------------------------------------------------------- hash_join build side

TEST_F(JoinPlanningTest, HashJoinBuildsTheSmallerSide) {
  const std::string small_left = "select tiny.id, big.id from tiny join big on big.g = tiny.big_id";
  RelPtr p = plan(small_left);
  const JoinNode& j = only_join(p);
  EXPECT_FALSE(j.equi_keys.empty());
  EXPECT_TRUE(j.build_left);
  EXPECT_EQ(j.describe(), "INNER JOIN (hash, build left)");
  RelPtr q = plan("select tiny.id, big.id from big join tiny on big.g = tiny.big_id");
  const JoinNode& k = only_join(q);
  EXPECT_FALSE(k.build_left);
  EXPECT_EQ(k.describe(), "INNER JOIN (hash, build right)");
  expect_same_results(small_left);
  disable("hash_join");
  RelPtr r = plan(small_left);
  const JoinNode& n = only_join(r);
  EXPECT_TRUE(n.equi_keys.empty());
  EXPECT_EQ(n.describe(), "INNER JOIN (nested loop)");
}

// ---------------------------------------------------------------- index_nested_loop

TEST_F(JoinPlanningTest, IndexNestedLoopSeeksTheInnerKeyPerOuterRow) {
  const std::string sql = "select tiny.id, big.g from tiny join big on big.id = tiny.big_id";
  RelPtr p = plan(sql);
  const JoinNode& j = only_join(p);
  EXPECT_TRUE(j.index_lookup);
  EXPECT_EQ(j.describe(), "INNER JOIN (index nested loop)");
  ASSERT_EQ(j.right->kind, RelKind::kTableScan);
  const auto& scan = static_cast<const TableScanNode&>(*j.right);
  ASSERT_EQ(scan.filters.size(), 1u);
  ASSERT_EQ(scan.filters[0].value->kind, ScalarKind::kColumn);
  EXPECT_EQ(static_cast<const ColumnScalar&>(*scan.filters[0].value).level, 1);
  EXPECT_TRUE(scan.plan.handled[0]);
  EXPECT_EQ(rows(sql), (std::vector<std::string>{"1|5|", "2|17|", "5|5|"}));
  disable("index_nested_loop");
  RelPtr q = plan(sql);
  const JoinNode& h = only_join(q);
  EXPECT_FALSE(h.index_lookup);
  EXPECT_FALSE(h.equi_keys.empty());
  expect_same_results(sql);
}

TEST_F(JoinPlanningTest, IndexNestedLoopLeftJoinNullExtends) {
  const std::string sql =
      "select tiny.id, big.id, big.g, hb from tiny left join big on big.id = tiny.big_id and big.g > 10 exists as hb";
  RelPtr p = plan(sql);
  const JoinNode& j = only_join(p);
  EXPECT_TRUE(j.index_lookup);
  EXPECT_EQ(j.right->kind, RelKind::kFilter);  // big.g > 10, re-checked per sought row
  EXPECT_EQ(rows(sql), (std::vector<std::string>{"1|NULL|NULL|false|", "2|17|17|true|", "3|NULL|NULL|false|",
                                                 "4|NULL|NULL|false|", "5|NULL|NULL|false|"}));
  expect_same_results(sql);
}

TEST_F(JoinPlanningTest, IndexNestedLoopThroughAViewOrSubquery) {
  exec("create view bigv as select id, g * 2 as g2 from big where g < 50");
  const std::string sql = "select tiny.id, v.g2 from tiny join bigv v on v.id = tiny.big_id";
  RelPtr p = plan(sql);
  EXPECT_TRUE(only_join(p).index_lookup);
  EXPECT_EQ(rows(sql), (std::vector<std::string>{"1|10|", "2|34|", "5|10|"}));
  expect_same_results(sql);
  // A computed column of the view is no key: hashed instead.
  RelPtr q = plan("select tiny.id, v.g2 from tiny join bigv v on v.g2 = tiny.big_id");
  EXPECT_FALSE(only_join(q).index_lookup);
  expect_same_results("select tiny.id, v.g2 from tiny join bigv v on v.g2 = tiny.big_id");
  expect_same_results(
      "select tiny.id, v.id from tiny left join (select id from big where g > 10) v on v.id = tiny.big_id");
}

TEST_F(JoinPlanningTest, IndexNestedLoopNotChosenWhenTheOuterSideIsLarge) {
  // Every big row would seek mid1: one hash table of mid1 costs less.
  RelPtr p = plan("select count(*) from big join mid1 on mid1.id = big.g");
  const JoinNode& j = only_join(p);
  EXPECT_FALSE(j.index_lookup);
  EXPECT_FALSE(j.equi_keys.empty());
}

TEST_F(JoinPlanningTest, IndexNestedLoopInsideACorrelatedSubquery) {
  // The inner scan's reference to the enclosing row moves one level out.
  const std::string sql =
      "select o.id, (select count(*) from tiny join big on big.id = tiny.big_id where big.g = o.g) as n "
      "from big o where o.id <= 20";
  expect_same_results(sql);
  auto r = rows(sql);
  ASSERT_EQ(r.size(), 20u);
  EXPECT_EQ(r[4], "5|2|");
  EXPECT_EQ(r[16], "17|1|");
}

// ---------------------------------------------------------------- query_plan

TEST_F(JoinPlanningTest, QueryPlanShowsAlgorithmAndOrder) {
  auto details = rows(
      "select detail from query_plan('select big.g from big join tiny on big.id = tiny.big_id') "
      "where node_type in ('Join', 'TableScan') order by id");
  ASSERT_EQ(details.size(), 3u);
  EXPECT_EQ(details[0], "INNER JOIN (index nested loop)|");
  EXPECT_EQ(details[1].rfind("SCAN main.tiny", 0), 0u) << details[1];
  EXPECT_EQ(details[2].rfind("SCAN main.big (mem pk point seek)", 0), 0u) << details[2];
}

// ---------------------------------------------------------------- results

TEST_F(JoinPlanningTest, ResultsDoNotDependOnThePasses) {
  for (const char* sql : {
           "select * from a join b on b.a_id = a.id",
           "select * from a join b on b.a_id = a.id where a.s = 'p' or b.y = 100",
           "select * from a left join b on b.a_id = a.id",
           "select * from a left join b on b.a_id = a.id where b.id is null",
           "select * from a left join b on a.id = b.a_id and a.s = 'p'",
           "select * from a right join b on b.a_id = a.id where a.x is null",
           "select * from a full join b on b.a_id = a.id",
           "select * from a full join b on b.a_id = a.id where a.id > 2",
           "select * from a cross join e where a.x = e.k",
           "select * from a cross join e where e.v is null",
           "select * from a join b on a.x = b.y / 10",
           "select * from a join a a2 on a2.x = a.x and a2.id <> a.id",
           "select a.s, count(*), sum(b.y) from a join b on b.a_id = a.id group by a.s",
           "select distinct a.x from a join b on b.a_id = a.id where b.y >= 100",
           "select * from (select a.id, b.y from a join b on b.a_id = a.id) t where t.y = 200",
           "select * from a join b on b.a_id = a.id and b.id in (1, 2, 6)",
           "select * from a join b on b.a_id = a.id where b.id between 2 and 5",
           "select * from tiny left join big on big.id = tiny.big_id where big.g is null",
           "select * from tiny join big on big.id = tiny.big_id or big.id = tiny.m1",
           "select * from tiny join big on big.id = tiny.big_id + 1",
           "select tiny.id, big.id from big join tiny on big.id = tiny.m2 where big.g > 2",
           "select * from e join a on a.x = e.k join b on b.a_id = a.id and b.y > e.v",
       }) {
    expect_same_results(sql);
  }
}

// Random joins of two to four tables (kinds, ON and WHERE conjuncts, existence flags
// drawn from a fixed seed): the passes must never change a result.
TEST_F(JoinPlanningTest, RandomJoinsMatchWithThePassesOff) {
  uint64_t state = 20261201;
  auto pick = [&](size_t n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<size_t>((state >> 33) % n);
  };
  struct Table {
    const char* name;
    std::vector<const char*> numbers;  // integer columns
    const char* text;                  // a text column, or null
  };
  const std::vector<Table> tables = {{"a", {"id", "x"}, "s"},      {"b", {"id", "a_id", "y"}, nullptr},
                                     {"c", {"id", "b_id"}, "z"},   {"e", {"k", "v"}, nullptr},
                                     {"tiny", {"id", "big_id", "m1", "m2"}, nullptr},
                                     {"mid1", {"id", "w"}, nullptr}, {"big", {"id", "g"}, nullptr}};
  const char* kinds[] = {"join", "join", "join", "left join", "left join", "right join", "full join", "cross join"};
  for (int q = 0; q < 80; ++q) {
    const size_t n = 2 + pick(3);
    std::vector<const Table*> from;
    bool has_big = false;
    std::vector<std::string> alias, flags;
    auto column = [&](size_t i) {
      const Table& t = *from[i];
      return alias[i] + "." + t.numbers[pick(t.numbers.size())];
    };
    auto conjunct = [&](size_t upto) {
      size_t i = pick(upto), j = pick(upto);
      switch (pick(7)) {
        case 0: case 1: return column(i) + " = " + column(j);
        case 2: return column(i) + " > " + std::to_string(pick(20));
        case 3: return column(i) + " is null";
        case 4: return column(i) + " in (1, 2, 5, 17)";
        case 5: return "(" + column(i) + " = " + column(j) + " or " + column(i) + " is null)";
        default: return from[i]->text ? alias[i] + "." + from[i]->text + " = 'p'" : column(i) + " <> 2";
      }
    };
    std::string sql;
    for (size_t i = 0; i < n; ++i) {
      const Table* t = &tables[pick(tables.size())];
      if (t->name == std::string("big")) {
        if (has_big) t = &tables[0];
        has_big = true;
      }
      from.push_back(t);
      alias.push_back("t" + std::to_string(i));
      if (i == 0) {
        sql = std::string(t->name) + " t0";
        continue;
      }
      std::string kind = kinds[pick(8)];
      sql += " " + kind + " " + t->name + " " + alias[i];
      if (kind == "cross join") continue;
      sql += " on " + column(i) + " = " + column(pick(i));
      for (size_t k = pick(3); k > 0; --k) sql += " and " + conjunct(i + 1);
      if (kind != "join" && pick(3) == 0) {
        flags.push_back("f" + std::to_string(i));
        const char* side = kind == "full join" ? (pick(2) ? "left " : "right ") : "";
        sql += std::string(" exists ") + side + "as " + flags.back();
      }
    }
    std::string where;
    for (size_t k = pick(3); k > 0; --k) where += (where.empty() ? " where " : " and ") + conjunct(n);
    if (!flags.empty() && pick(2)) where += (where.empty() ? " where " : " and ") + flags[pick(flags.size())];
    std::string select = has_big ? "count(*), sum(" + column(0) + "), count(" + column(n - 1) + ")"
                                 : column(0) + ", " + column(n - 1);
    for (const auto& f : flags) select += has_big ? ", sum(" + f + ")" : ", " + f;
    expect_same_results("select " + select + " from " + sql + where);
  }
}

}  // namespace
}  // namespace quereus
