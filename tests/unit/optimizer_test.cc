// The optimizer's named passes: constant folding rewrites constant subtrees into
// literals (and can be switched off), and pragma optimizer_disabled_passes validates names.
#include <gtest/gtest.h>

#include "mem_db_test.h"

#include "main/database_impl.h"
#include "optimizer/optimizer.h"
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

}  // namespace
}  // namespace quereus
