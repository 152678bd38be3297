// Relational properties (planner/properties.h): keys, FDs, equivalence classes and
// constant bindings derived per plan node, and their soundness gates.
#include <gtest/gtest.h>

#include "mem_db_test.h"

#include "main/database_impl.h"
#include "optimizer/optimizer.h"
#include "parser/parser.h"
#include "planner/planner.h"
#include "planner/properties.h"

namespace quereus {
namespace {

class PropertiesTest : public MemDbTest {
 protected:
  void SetUp() override {
    MemDbTest::SetUp();
    ASSERT_TRUE(db_->exec("create table t (id integer primary key, a integer, b text, n text collate nocase)").ok());
    ASSERT_TRUE(db_->exec("create table u (k integer primary key, t_id integer, w integer)").ok());
  }
  RelPtr plan(const std::string& sql) {
    auto stmts = Parser::parse(sql);
    Planner planner(static_cast<DatabaseImpl&>(*db_));
    QueryPlan qp = planner.plan_select(*static_cast<const ast::SelectStmt&>(*stmts[0]).select, nullptr);
    return Optimizer(static_cast<DatabaseImpl&>(*db_).options().optimizer).optimize(qp.root);
  }
};

bool same_class(const RelProperties& p, int a, int b) {
  for (const auto& ec : p.equivalence_classes) {
    bool ha = std::find(ec.begin(), ec.end(), a) != ec.end();
    bool hb = std::find(ec.begin(), ec.end(), b) != ec.end();
    if (ha && hb) return true;
  }
  return false;
}

TEST_F(PropertiesTest, TableKeyIsUniqueAndOtherColumnsAreNot) {
  RelPtr root = plan("select id, a, b from t");
  RelProperties p = derive_properties(*root);
  EXPECT_TRUE(p.is_unique({0}, 3));
  EXPECT_FALSE(p.is_unique({1}, 3));
  EXPECT_FALSE(p.is_unique({1, 2}, 3));
}

TEST_F(PropertiesTest, PinnedKeyMeansAtMostOneRow) {
  RelProperties p = derive_properties(*plan("select a, b from t where id = 7"));
  EXPECT_TRUE(p.is_unique({}, 2));
  RelProperties q = derive_properties(*plan("select a, b from t where id = ?"));
  EXPECT_TRUE(q.is_unique({}, 2));
  RelProperties r = derive_properties(*plan("select id, a from t where a = 3"));
  EXPECT_FALSE(r.is_unique({}, 2));
  EXPECT_TRUE(r.is_unique({0}, 2));
}

TEST_F(PropertiesTest, FilterEqualitiesFormClassesAndBindings) {
  RelProperties p = derive_properties(*plan("select id, a, b from t where a = id and b = 'x'"));
  EXPECT_TRUE(same_class(p, 0, 1));
  ASSERT_FALSE(p.constants.empty());
  EXPECT_EQ(p.constants[0].columns, std::vector<int>{2});
  // a determines id through the class, so `a` is a key too.
  EXPECT_TRUE(p.is_unique({1}, 3));
}

TEST_F(PropertiesTest, NocaseEqualityIsNotAValueFact) {
  RelProperties p = derive_properties(*plan("select id, n from t where n = 'Bob'"));
  EXPECT_TRUE(p.constants.empty());  // 'bob' and 'BOB' both pass: no constant pin
}

TEST_F(PropertiesTest, InnerJoinEquiPairsAndFanOut) {
  // Each t row meets many u rows (t_id is not a key of u): t's key no longer identifies
  // output rows, while u's key still does (u.t_id = t.id matches one t row).
  RelProperties p = derive_properties(*plan("select t.id, u.k, u.t_id from t join u on u.t_id = t.id"));
  EXPECT_TRUE(same_class(p, 0, 2));
  EXPECT_FALSE(p.is_unique({0}, 3));
  EXPECT_TRUE(p.is_unique({1}, 3));
}

TEST_F(PropertiesTest, LeftJoinDropsThePaddedSide) {
  RelProperties p = derive_properties(*plan("select t.id, u.k from t left join u on u.t_id = t.id and u.k = 1"));
  // u.k = 1 makes the right side match at most one row per t row: t's key survives,
  // but nothing is claimed about the null-padded u columns.
  EXPECT_TRUE(p.is_unique({0}, 2));
  for (const auto& b : p.constants) EXPECT_EQ(std::count(b.columns.begin(), b.columns.end(), 1), 0);
}

TEST_F(PropertiesTest, AggregateGroupKeyAndScalarAggregate) {
  RelProperties g = derive_properties(*plan("select a, count(*) from t group by a"));
  EXPECT_TRUE(g.is_unique({0}, 2));
  RelProperties s = derive_properties(*plan("select count(*), max(a) from t"));
  EXPECT_TRUE(s.is_unique({}, 2));
}

TEST_F(PropertiesTest, DistinctLimitAndSetOps) {
  EXPECT_TRUE(derive_properties(*plan("select distinct a, b from t")).is_unique({0, 1}, 2));
  EXPECT_TRUE(derive_properties(*plan("select a from t limit 1")).is_unique({}, 1));
  EXPECT_FALSE(derive_properties(*plan("select a from t limit 2")).is_unique({}, 1));
  EXPECT_FALSE(derive_properties(*plan("select a from t union all select w from u")).is_unique({0}, 1));
  EXPECT_TRUE(derive_properties(*plan("select a from t union select w from u")).is_unique({0}, 1));
}

TEST_F(PropertiesTest, QueryPlanShowsProperties) {
  std::vector<std::unique_ptr<Statement>> stmts;
  ASSERT_TRUE(db_->prepare("select properties from query_plan('select id from t where id = 1')", &stmts).ok());
  bool has = false;
  ASSERT_TRUE(stmts[0]->step(&has).ok());
  ASSERT_TRUE(has);
  EXPECT_NE(stmts[0]->row()[0].str().find("\"kind\":\"unique\""), std::string::npos);
}

}  // namespace
}  // namespace quereus
