// Schema expressions (ddl/schema_expressions.h): the AST walk that reaches into
// subqueries, the determinism gate, and generated columns / mutation context end to end.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ddl/schema_expressions.h"
#include "functions/builtins.h"
#include "mem_db_test.h"
#include "parser/parser.h"

namespace quereus {
namespace {

TEST(SchemaExpressionsWalk, ReachesSubqueriesAndMarksOpaqueFrames) {
  auto e = Parser::parse_expression(
      "a + (select b from (select c from t) s where d in (select e from u)) + (with w as (select f) select g from w)");
  std::vector<std::string> plain, opaque;
  walk_expr(*e, [&](const ast::Expr& x, bool in_opaque) {
    if (x.kind != ast::ExprKind::kColumn) return;
    (in_opaque ? opaque : plain).push_back(static_cast<const ast::ColumnRef&>(x).column);
  });
  EXPECT_EQ(plain, (std::vector<std::string>{"a", "b", "d", "e", "g"}));
  EXPECT_EQ(opaque, (std::vector<std::string>{"c", "f"}));
}

TEST(SchemaExpressionsDeterminism, NamesTheFunctionWhereverItSits) {
  Registry registry;
  register_builtin_functions(registry);
  auto ok = Parser::parse_expression("abs(x) + length('a')");
  EXPECT_NO_THROW(require_deterministic(registry, *ok, "CHECK", "constraint 'c'"));
  auto nested = Parser::parse_expression("x + (select random())");
  try {
    require_deterministic(registry, *nested, "GENERATED ALWAYS AS", "for column 'g'");
    FAIL() << "random() accepted";
  } catch (const Error& err) {
    EXPECT_NE(err.raw_message().find("Non-deterministic expression not allowed in GENERATED ALWAYS AS for column 'g'"),
              std::string::npos)
        << err.raw_message();
    EXPECT_NE(err.raw_message().find("Function 'random' is not deterministic"), std::string::npos);
  }
}

class SchemaExpressionsTest : public MemDbTest {};

TEST_F(SchemaExpressionsTest, GeneratedColumnsFollowTheirDependencies) {
  exec("create table t (id integer primary key, b integer generated always as (a + 1), a integer generated "
       "always as (id * 10))");
  exec("insert into t (id) values (4)");
  auto rows = query("select a, b from t");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].as_int(), 40);
  EXPECT_EQ(rows[0][1].as_int(), 41);
  fails("update t set a = 1", StatusCode::kError, "Cannot UPDATE generated column 'a'");
}

TEST_F(SchemaExpressionsTest, RefusedDeclarationLeavesNoTable) {
  fails("create table t (id integer primary key, a integer generated always as (b), b integer generated always as (a))",
        StatusCode::kError, "Cyclic dependency in generated columns: 'a', 'b'");
  exec("create table t (id integer primary key)");  // the name is free again
}

TEST_F(SchemaExpressionsTest, ContextIsRequiredOnlyWhereRead) {
  exec("create table t (id integer primary key, who text default actor, constraint up check on update (who = actor)) "
       "with context (actor text)");
  fails("insert into t (id) values (1)", StatusCode::kError, "requires mutation context variable 'actor'");
  exec("insert into t (id, who) values (1, 'x')");  // the default does not fire, the check is on update
  fails("update t set who = 'y' with context actor = 'z'", StatusCode::kConstraint, "CHECK constraint failed: up");
  exec("update t set who = 'y' with context actor = 'y'");
  exec("delete from t");
}

}  // namespace
}  // namespace quereus
