// The declarative differ's table stage (ddl/declarative/schema_differ.cc) end to end: status codes
// of its refusals, nothing changed by a refusal, a partially-applied migration keeping
// what landed, and DIFF SCHEMA listing exactly what APPLY SCHEMA runs.
#include <gtest/gtest.h>

#include "mem_db_test.h"

namespace quereus {
namespace {

class SchemaDifferTest : public MemDbTest {
 protected:
  std::vector<std::string> diff(const std::string& schema) {
    std::vector<std::string> out;
    for (const Row& r : query("diff schema " + schema)) out.push_back(r[0].to_text());
    return out;
  }
};

TEST_F(SchemaDifferTest, RefusalsAreUnsupportedAndChangeNothing) {
  exec("create table t (id integer primary key, a integer generated always as (id * 2))");
  exec("insert into t (id) values (1)");
  exec("declare schema main { table t (id integer primary key, a integer generated always as (id * 3)) "
       "table extra (id integer primary key) }");
  fails("apply schema main", StatusCode::kUnsupported,
        "Table 'main.t' differs from its declaration in the generated expression of column 'a'");
  fails("diff schema main", StatusCode::kUnsupported, "generated expression");
  // The refusal came before the create of `extra`.
  Status st;
  query("select * from extra", &st);
  EXPECT_FALSE(st.ok());

  exec("create table k (id integer primary key, v integer)");
  exec("declare schema main { table t (id integer primary key, a integer generated always as (id * 2)) "
       "table k (id integer, v integer) }");
  fails("apply schema main", StatusCode::kUnsupported, "its PRIMARY KEY (declared without one");
}

TEST_F(SchemaDifferTest, DiffListsWhatApplyRunsAndConverges) {
  exec("create table t (id integer primary key, a text, b integer default 1)");
  exec("insert into t values (1, 'x', 5)");
  exec("declare schema main { table t (id integer primary key, b text null, c integer default 4, unique (c)) }");
  EXPECT_EQ(diff("main"), (std::vector<std::string>{
                              "ALTER TABLE t ADD COLUMN c integer default 4",
                              "ALTER TABLE t ALTER COLUMN b DROP NOT NULL",
                              "ALTER TABLE t ALTER COLUMN b DROP DEFAULT",
                              "ALTER TABLE t ALTER COLUMN b SET DATA TYPE text",
                              "ALTER TABLE t ADD unique (c)",
                              "ALTER TABLE t DROP COLUMN a",
                          }));
  exec("apply schema main");
  EXPECT_TRUE(diff("main").empty());
  auto rows = query("select id, b, typeof(b), c from t");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][1].to_text(), "5");
  EXPECT_EQ(rows[0][2].to_text(), "text");
  EXPECT_EQ(rows[0][3].as_int(), 4);
  fails("insert into t (id, b) values (2, 'y')", StatusCode::kConstraint, "UNIQUE");
}

TEST_F(SchemaDifferTest, AFailedStepKeepsTheStepsBeforeIt) {
  exec("create table t (id integer primary key, a integer null, b integer null)");
  exec("insert into t values (1, null, null)");
  exec("declare schema main { table t (id integer primary key, a integer null default 3, b integer not null) }");
  fails("apply schema main", StatusCode::kConstraint, "NOT NULL");
  // SET DEFAULT landed; SET NOT NULL did not.
  EXPECT_EQ(diff("main"), (std::vector<std::string>{"ALTER TABLE t ALTER COLUMN b SET NOT NULL"}));
  exec("update t set b = 0");
  exec("apply schema main");
  EXPECT_TRUE(diff("main").empty());
}

// APPLY runs on the stored declaration, a copy that outlives DECLARE SCHEMA: its
// defaults migrate as declared and its seed rows are inserted as written, into the
// declared schema, keeping rows already there (ON CONFLICT (primary key) DO NOTHING).
TEST_F(SchemaDifferTest, SeedsAndDefaultsComeFromTheStoredDeclaration) {
  exec("create table t (id integer primary key, a integer default 1)");
  exec("declare schema main { table t (id integer primary key, a integer default (2 * 3)) "
       "seed t ((1, 10 + 1), (2, abs(-25))) }");
  EXPECT_EQ(diff("main"), (std::vector<std::string>{"ALTER TABLE t ALTER COLUMN a SET DEFAULT (2 * 3)"}));
  exec("apply schema main with seed");
  EXPECT_TRUE(diff("main").empty());
  exec("insert into t (id) values (3)");
  exec("update t set a = 0 where id = 1");
  exec("apply schema main with seed");  // a re-seed keeps the edited row
  auto rows = query("select id, a from t order by id");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0][1].as_int(), 0);
  EXPECT_EQ(rows[1][1].as_int(), 25);
  EXPECT_EQ(rows[2][1].as_int(), 6);

  exec("declare schema app { table k (id integer primary key, label text) seed k ((1, 'one' || '!')) }");
  exec("apply schema app with seed");
  rows = query("select label from app.k");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].str(), "one!");
}

}  // namespace
}  // namespace quereus
