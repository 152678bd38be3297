// The embedding API end to end over the mem plugin: Database, Statement, bind, step.
#include <gtest/gtest.h>

#include "mem_db_test.h"

#include "main/database.h"

namespace quereus {
namespace {

class DatabaseTest : public MemDbTest {};

TEST_F(DatabaseTest, ExecAndQuery) {
  ASSERT_TRUE(db_->exec("create table t (a integer primary key, b text); insert into t values (1, 'x'), (2, 'y')").ok());
  auto rows = query("select b from t where a = 2");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].str(), "y");
}

TEST_F(DatabaseTest, ColumnNamesFollowTheCanonicalPrinter) {
  std::vector<std::unique_ptr<Statement>> stmts;
  ASSERT_TRUE(db_->prepare("select (1 + 2) * 3, 'a' as x, count(*) from (select 1)", &stmts).ok());
  auto& names = stmts[0]->column_names();
  ASSERT_EQ(names.size(), 3u);
  EXPECT_EQ(names[0], "(1 + 2) * 3");
  EXPECT_EQ(names[1], "x");
  EXPECT_EQ(names[2], "count(*)");
}

TEST_F(DatabaseTest, PositionalAndNamedParameters) {
  ASSERT_TRUE(db_->exec("create table p (id integer primary key, v text)").ok());
  std::vector<std::unique_ptr<Statement>> stmts;
  ASSERT_TRUE(db_->prepare("insert into p values (?, :v)", &stmts).ok());
  for (int i = 1; i <= 3; ++i) {
    ASSERT_TRUE(stmts[0]->bind(1, Value::Integer(i)).ok());
    ASSERT_TRUE(stmts[0]->bind(":v", Value::Text("v" + std::to_string(i))).ok());
    bool row;
    ASSERT_TRUE(stmts[0]->step(&row).ok());
    EXPECT_FALSE(row);
    ASSERT_TRUE(stmts[0]->reset().ok());
  }
  auto rows = query("select v from p order by id desc");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0][0].str(), "v3");
}

TEST_F(DatabaseTest, ErrorsCarryCodeAndLocation) {
  Status st = db_->exec("select 1;\nselect from");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kSyntax);
  ASSERT_TRUE(st.site().has_value());
  EXPECT_EQ(st.site()->line, 2);
  EXPECT_NE(st.message().find("(at line 2, column"), std::string::npos) << st.message();
}

TEST_F(DatabaseTest, ConstraintErrorsLeaveNothingBehind) {
  ASSERT_TRUE(db_->exec("create table u (id integer primary key)").ok());
  Status st = db_->exec("insert into u values (1), (2), (1)");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kConstraint);
  EXPECT_TRUE(query("select * from u").empty());
}

// The codes errors.md and schema.md give (the logic format checks only message text):
// a relation that does not resolve is NOTFOUND at every site errors.md names, and so are
// a missing table at DROP TABLE (schema.md "Error Handling") and a missing assertion.
TEST_F(DatabaseTest, StatusCodesFollowErrorsMd) {
  exec("create table u (id integer primary key, name text, n integer check (n > 0))");
  exec("insert into u values (1, 'a', 1)");
  fails("select * from nope", StatusCode::kNotFound, "Table 'nope' not found");
  fails("create index ix on nope (a)", StatusCode::kNotFound, "no such table: nope");
  fails("alter table nope set maintained as select id from u", StatusCode::kNotFound, "no such table: nope");
  fails("drop table nope", StatusCode::kNotFound, "Table 'nope' not found");
  fails("drop assertion nope", StatusCode::kNotFound, "Assertion nope not found");
  fails("insert into u values (1, 'b', 1)", StatusCode::kConstraint, "UNIQUE constraint failed: u.id");
  fails("insert into u values (2, null, 1)", StatusCode::kConstraint, "NOT NULL constraint failed");
  fails("insert into u values (2, 'b', 0)", StatusCode::kConstraint, "CHECK constraint failed");
  fails("select integer('abc')", StatusCode::kMismatch, "Cannot convert");
  fails("insert into u values ('abc', 'b', 1)", StatusCode::kMismatch, "Type conversion failed");
  fails("select 1 from u a, u b", StatusCode::kUnsupported, "not supported");
}

TEST_F(DatabaseTest, ExplicitTransactionRollback) {
  ASSERT_TRUE(db_->exec("create table r (id integer primary key)").ok());
  ASSERT_TRUE(db_->exec("begin; insert into r values (1)").ok());
  EXPECT_TRUE(db_->in_transaction());
  EXPECT_EQ(query("select * from r").size(), 1u);
  ASSERT_TRUE(db_->exec("rollback").ok());
  EXPECT_FALSE(db_->in_transaction());
  EXPECT_TRUE(query("select * from r").empty());
}

TEST_F(DatabaseTest, DefaultModuleMustExist) {
  std::unique_ptr<Database> other;
  DatabaseOptions opts;
  opts.default_module = "nope";
  Status st = Database::Open(registry_, opts, &other);
  EXPECT_FALSE(st.ok());
}

}  // namespace
}  // namespace quereus
