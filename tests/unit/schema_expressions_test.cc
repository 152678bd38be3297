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

// determinism.md "Strict-mode behaviour": a date/time function is judged by its arguments.
TEST(SchemaExpressionsDeterminism, DateFunctionsAreJudgedByTheirArguments) {
  Registry registry;
  register_builtin_functions(registry);
  for (const char* ok : {"date('2020-01-01')", "datetime('2020-01-01', '+1 day', 'start of month')",
                         "julianday(date('2020-01-01'))", "strftime('%Y', -1)", "datetime('2020-01-01', 'UTC')"})
    EXPECT_NO_THROW(require_deterministic(registry, *Parser::parse_expression(ok), "CHECK", "constraint 'c'")) << ok;
  for (const char* bad : {"date('now')", "time(' Now ')", "datetime('2020-01-01', 'localtime')",
                          "datetime('2020-01-01', ' LocalTime ')", "date(date('now'))", "date(x)", "date(?)",
                          "date('now' || '')", "epoch_s((select 'now'))"})
    EXPECT_THROW(require_deterministic(registry, *Parser::parse_expression(bad), "CHECK", "constraint 'c'"), Error)
        << bad;
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

// A write judges a table's stored CHECK / GENERATED / DEFAULT bodies, parsed from its DDL:
// the refusal must not carry a line and column of that earlier text as if they were the
// running statement's (errors.md).
TEST_F(SchemaExpressionsTest, WriteTimeRefusalHasNoPositionInTheDdl) {
  exec("pragma nondeterministic_schema = true");
  exec("create table t (\n  id integer primary key,\n  v integer null,\n  g integer null generated always as "
       "(random()),\n  constraint r check (random() is not null))");
  exec("create table d (id integer primary key, w integer default (random()))");
  exec("pragma nondeterministic_schema = false");
  for (const char* sql : {"insert into t (id) values (1)", "update t set v = 1", "insert into d (id) values (1)"}) {
    Status st = db_->exec(sql);
    ASSERT_FALSE(st.ok()) << sql;
    EXPECT_NE(st.message().find("Non-deterministic expression not allowed"), std::string::npos) << st.to_string();
    EXPECT_FALSE(st.site().has_value()) << sql << ": " << st.to_string();
  }
  // The statement that wrote the body is still told where it is.
  Status st = db_->exec("create table u (\n  id integer primary key,\n  x integer check (random() > 0))");
  ASSERT_FALSE(st.ok());
  ASSERT_TRUE(st.site().has_value()) << st.to_string();
  EXPECT_EQ(st.site()->line, 3);
}

// Any error binding a stored body for a write (not only a determinism refusal) carries no
// line/column: the body's position is in the DDL's text, not in the statement being run.
TEST_F(SchemaExpressionsTest, WriteTimeBindErrorHasNoPositionInTheDdl) {
  exec("create table t (\n  id integer primary key,\n  v integer null,\n  constraint c check (zz > 0))");
  exec("create table s (\n  id integer primary key,\n  constraint c2 check ((select count(*) from nothere) >= 0))");
  for (const char* sql : {"insert into t values (1, 1)", "update t set v = 2", "insert into s values (1)"}) {
    Status st = db_->exec(sql);
    if (st.ok()) continue;  // an UPDATE of an empty table may plan nothing
    EXPECT_FALSE(st.site().has_value()) << sql << ": " << st.to_string();
  }
  Status st = db_->exec("insert into t values (1, 1)");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("zz"), std::string::npos) << st.to_string();
}

// An error a stored body raises while it is evaluated at a write (a conversion that
// fails, a scalar subquery with two rows) carries no line/column either: the body's
// position is in the DDL's text (errors.md). Deferred CHECKs judged at COMMIT too.
TEST_F(SchemaExpressionsTest, WriteTimeEvaluationErrorHasNoPositionInTheDdl) {
  exec("create table c (\n  id integer primary key,\n  t text,\n  check (integer(t) > 0))");
  exec("create table g (\n  id integer primary key,\n  t text,\n  n integer generated always as (integer(t)))");
  exec("create table d (\n  id integer primary key,\n  t integer default (integer('zz')))");
  exec("create table s (\n  id integer primary key,\n  check ((select v from (values (1), (2)) as x(v)) > 0))");
  for (const char* sql : {"insert into c values (1, 'abc')", "insert into g values (1, 'abc')",
                          "insert into d (id) values (1)", "insert into s values (1)"}) {
    Status st = db_->exec(sql);
    ASSERT_FALSE(st.ok()) << sql;
    EXPECT_FALSE(st.site().has_value()) << sql << ": " << st.to_string();
  }
  exec("begin");
  Status st = db_->exec("insert into s values (2)");
  if (st.ok()) st = db_->exec("commit");
  ASSERT_FALSE(st.ok());
  EXPECT_FALSE(st.site().has_value()) << st.to_string();
}

// A column-level CHECK's determinism gate sees a column declared after it: a date/time
// call over a later DATE column is deterministic, over a later TEXT column it is not.
TEST_F(SchemaExpressionsTest, ColumnCheckSeesALaterColumnsType) {
  exec("create table t (a integer primary key check (date(b) > '2000-01-01'), b date)");
  exec("insert into t values (1, '2020-01-01')");
  EXPECT_FALSE(db_->exec("insert into t values (2, '1990-01-01')").ok());
  Status st = db_->exec("create table u (a integer primary key check (date(b) > '2000-01-01'), b text)");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("may be 'now'"), std::string::npos) << st.to_string();
}

}  // namespace
}  // namespace quereus
