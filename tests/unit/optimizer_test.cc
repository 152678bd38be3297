// The optimizer's named passes: constant folding rewrites constant subtrees into
// literals (and can be switched off), and pragma optimizer_disabled_passes validates names.
#include <gtest/gtest.h>

#include "mem_db_test.h"

#include "main/database_impl.h"
#include "optimizer/optimizer.h"
#include "optimizer/plan_validator.h"
#include "parser/parser.h"
#include "planner/planner.h"

namespace quereus {
namespace {

class OptimizerTest : public MemDbTest {
 protected:
  void SetUp() override {
    MemDbTest::SetUp();
    ASSERT_TRUE(db_->exec("create table t (id integer primary key, v text)").ok());
  }
  DatabaseImpl& impl() { return static_cast<DatabaseImpl&>(*db_); }
  // The optimized plan of a SELECT, under the database's current optimizer options.
  RelPtr plan(const std::string& sql) {
    auto stmts = Parser::parse(sql);
    Planner planner(impl());
    QueryPlan qp = planner.plan_select(*static_cast<const ast::SelectStmt&>(*stmts[0]).select, nullptr);
    return Optimizer(impl().options().optimizer).optimize(qp.root);
  }
};

const ProjectNode& top_project(const RelPtr& root) {
  EXPECT_EQ(root->kind, RelKind::kProject);
  return static_cast<const ProjectNode&>(*root);
}

TEST_F(OptimizerTest, ConstantFoldingReplacesConstantSubtrees) {
  RelPtr root = plan("select 1 + 2 * 3, upper('a') || v, abs(-4) from t");
  const ProjectNode& p = top_project(root);
  ASSERT_EQ(p.exprs.size(), 3u);
  ASSERT_EQ(p.exprs[0]->kind, ScalarKind::kLiteral);
  EXPECT_EQ(static_cast<const LiteralScalar&>(*p.exprs[0]).value.as_int(), 7);
  // Only the constant operand of a non-constant expression folds.
  ASSERT_EQ(p.exprs[1]->kind, ScalarKind::kBinary);
  const auto& concat = static_cast<const BinaryScalar&>(*p.exprs[1]);
  ASSERT_EQ(concat.left->kind, ScalarKind::kLiteral);
  EXPECT_EQ(static_cast<const LiteralScalar&>(*concat.left).value.str(), "A");
  EXPECT_EQ(concat.right->kind, ScalarKind::kColumn);
  EXPECT_EQ(p.exprs[2]->kind, ScalarKind::kLiteral);
}

TEST_F(OptimizerTest, NonDeterministicAndParametersDoNotFold) {
  RelPtr root = plan("select random(), ? + 1 from t");
  const ProjectNode& p = top_project(root);
  EXPECT_NE(p.exprs[0]->kind, ScalarKind::kLiteral);
  EXPECT_NE(p.exprs[1]->kind, ScalarKind::kLiteral);
}

TEST_F(OptimizerTest, PassesAreSwitchableByPragma) {
  ASSERT_TRUE(db_->exec("pragma optimizer_disabled_passes = 'constant_folding'").ok());
  EXPECT_NE(top_project(plan("select 1 + 2 from t")).exprs[0]->kind, ScalarKind::kLiteral);
  ASSERT_TRUE(db_->exec("pragma optimizer_disabled_passes = ''").ok());
  EXPECT_EQ(top_project(plan("select 1 + 2 from t")).exprs[0]->kind, ScalarKind::kLiteral);
  Status st = db_->exec("pragma optimizer_disabled_passes = 'constant_folding, no_such_pass'");
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.to_string().find("Unknown optimizer pass 'no_such_pass'"), std::string::npos);
}

TEST_F(OptimizerTest, FoldedResultsMatchUnfolded) {
  ASSERT_TRUE(db_->exec("insert into t values (1, 'x'), (2, 'y')").ok());
  auto run = [&](const std::string& sql) {
    std::vector<std::unique_ptr<Statement>> stmts;
    EXPECT_TRUE(db_->prepare(sql, &stmts).ok());
    std::vector<Row> rows;
    bool has = true;
    while (has) {
      EXPECT_TRUE(stmts[0]->step(&has).ok());
      if (has) rows.push_back(stmts[0]->row());
    }
    return rows;
  };
  const std::string q =
      "select id, 2 * 3 + id, lower('AB') || v, case when 1 < 2 then 'yes' end from t where id > 1 - 1 "
      "order by id";
  auto folded = run(q);
  ASSERT_TRUE(db_->exec("pragma optimizer_disabled_passes = 'constant_folding'").ok());
  auto plain = run(q);
  ASSERT_EQ(folded.size(), 2u);
  EXPECT_EQ(folded, plain);
}

// pragma validate_plan (usage.md "Available Options"): every optimized plan is checked
// before it runs. Correct plans of every shape pass; a plan whose column reads a slot its
// input does not have is reported as INTERNAL naming the invariant, not run.
TEST_F(OptimizerTest, ValidatePlanPassesCorrectPlansAndNamesABrokenOne) {
  ASSERT_TRUE(db_->exec("pragma validate_plan = on").ok());
  ASSERT_TRUE(db_->exec("create table u (id integer primary key, t_id integer, w real)").ok());
  ASSERT_TRUE(db_->exec("insert into t values (1, 'a'), (2, 'b'); insert into u values (1, 1, 0.5), (2, 1, 1.5)").ok());
  for (const char* sql : {
           "select v, (select count(*) from u where u.t_id = t.id) from t where id in (select t_id from u)",
           "select t.v, sum(u.w) from t join u on u.t_id = t.id group by t.v having sum(u.w) > 0 order by 1",
           "select d.v, d.n from (select v, count(*) as n from t group by v) as d where d.n > 0",
           "select v, row_number() over (order by t.id desc) from t left join u on u.t_id = t.id",
           "with recursive c(x) as (select 1 union all select x + 1 from c where x < 5) select sum(x) from c",
           "select v from t where exists (select 1 from u where u.t_id = t.id) union select 'z' limit 3",
       }) {
    std::vector<std::unique_ptr<Statement>> stmts;
    Status s = db_->prepare(sql, &stmts);
    ASSERT_TRUE(s.ok()) << sql << ": " << s.to_string();
    for (bool has = true; has;) {
      s = stmts.back()->step(&has);
      ASSERT_TRUE(s.ok()) << sql << ": " << s.to_string();
    }
  }
  // A filter reading slot 5 of a one-column row.
  auto input = std::make_shared<SingleRowNode>();
  auto filter = std::make_shared<FilterNode>();
  filter->input = input;
  filter->predicate = std::make_shared<const ColumnScalar>(0, 5, 0);
  try {
    validate_plan(*filter);
    FAIL() << "a broken plan passed validation";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kInternal);
    EXPECT_NE(std::string(e.what()).find("slot 5 of a row of 0"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace quereus
