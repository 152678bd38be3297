// Plain views end to end over the mem plugin: CREATE / DROP VIEW, expansion in FROM,
// the shared table/view namespace, home-schema resolution, schema() introspection, and
// the refusal to write through a non-updatable view. Also the catalog statements that came with them:
// ANALYZE, generate_series() and foreign_key_info().
#include <gtest/gtest.h>

#include "mem_db_test.h"

#include "main/database.h"

namespace quereus {
namespace {

class ViewsTest : public MemDbTest {
 protected:
  Status failure(const std::string& sql) {
    Status st;
    query(sql, &st);
    EXPECT_FALSE(st.ok()) << sql;
    return st;
  }
};

TEST_F(ViewsTest, ViewReEvaluatesItsBodyOnEveryReference) {
  exec("create table t (id integer primary key, v integer); insert into t values (1, 10), (2, 20);"
       "create view big as select id, v from t where v > 15");
  auto rows = query("select id from big");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].as_int(), 2);
  exec("insert into t values (3, 30)");
  EXPECT_EQ(query("select count(*) from big")[0][0].as_int(), 2);
}

TEST_F(ViewsTest, ColumnListRenamesAndMustMatchTheBody) {
  exec("create table t (id integer primary key, v integer); insert into t values (1, 10);"
       "create view r (k, amount) as select id, v from t");
  auto rows = query("select k, amount from r");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][1].as_int(), 10);
  EXPECT_NE(failure("create view bad (a) as select id, v from t").message().find("declared columns"),
            std::string::npos);
}

TEST_F(ViewsTest, TablesAndViewsShareOneNamespace) {
  exec("create table t (id integer primary key); create view v as select id from t");
  EXPECT_NE(failure("create view t as select 1").message().find("a table with the same name already exists"),
            std::string::npos);
  EXPECT_NE(failure("create table v (x integer)").message().find("a view with the same name already exists"),
            std::string::npos);
  EXPECT_NE(failure("create view v as select 2").message().find("already exists"), std::string::npos);
  exec("create view if not exists v as select 2 as id");  // a no-op: the original stays
  EXPECT_EQ(query("select count(*) from v")[0][0].as_int(), 0);
}

TEST_F(ViewsTest, DropViewAndMissingViews) {
  exec("create table t (id integer primary key); create view v as select id from t; drop view v");
  EXPECT_NE(failure("select * from v").message().find("not found"), std::string::npos);
  EXPECT_NE(failure("drop view v").message().find("View 'main.v' does not exist"), std::string::npos);
  exec("drop view if exists v");
  // DROP VIEW does not drop a table of that name, and says which statement would.
  EXPECT_NE(failure("drop view t").message().find("does not exist"), std::string::npos);
  EXPECT_NE(failure("drop view t").message().find("'t' is a table: use DROP TABLE"), std::string::npos);
  // DROP TABLE does not drop a view either; IF EXISTS keeps a mismatched name a no-op.
  exec("create view w as select id from t");
  EXPECT_NE(failure("drop table w").message().find("not found"), std::string::npos);
  EXPECT_NE(failure("drop table w").message().find("'w' is a view: use DROP VIEW"), std::string::npos);
  exec("drop table if exists w; drop view if exists t");
  EXPECT_EQ(query("select count(*) from w")[0][0].as_int(), 0);
}

TEST_F(ViewsTest, BodyIsValidatedAtCreateAndOnEveryUse) {
  EXPECT_NE(failure("create view v as select x from nowhere").message().find("nowhere"), std::string::npos);
  exec("create table t (id integer primary key); create view v as select id from t");
  EXPECT_NE(failure("create view d as insert into t values (1) returning id").message().find(
                "cannot be used as a view body"),
            std::string::npos);
  exec("drop table t");
  EXPECT_NE(failure("select * from v").message().find("not found"), std::string::npos);
}

TEST_F(ViewsTest, CallerCtesDoNotShadowTheBodyButQualifiedNamesReachTheView) {
  exec("create table p (id integer primary key); insert into p values (1), (2), (3);"
       "create table c (k integer primary key); insert into c values (7);"
       "create view cv as select k from c");
  // The body reads the table c, not the caller's CTE c.
  EXPECT_EQ(query("with c as (select 1 as k union all select 2) select count(*) from cv")[0][0].as_int(), 1);
  // A schema-qualified name skips the CTE and reaches the view.
  EXPECT_EQ(query("with cv as (select id as k from p) select count(*) from main.cv")[0][0].as_int(), 1);
  EXPECT_EQ(query("with cv as (select id as k from p) select count(*) from cv")[0][0].as_int(), 3);
}

TEST_F(ViewsTest, BodyResolvesUnqualifiedNamesInItsOwnSchema) {
  exec("create table t (x integer primary key); insert into t values (1);"
       "create table temp.t (x integer primary key); insert into temp.t values (2);"
       "create view temp.tv as select x from t");
  // The view lives in temp, off the default search path (main), so it is named
  // qualified; its body still reads temp.t, its own schema.
  EXPECT_EQ(query("select x from temp.tv")[0][0].as_int(), 2);
  EXPECT_EQ(query("select x from t")[0][0].as_int(), 1);
}

TEST_F(ViewsTest, ViewsOverViewsAggregatesAndSelfJoins) {
  exec("create table b (id integer primary key, cat text, val integer);"
       "insert into b values (1, 'a', 10), (2, 'b', 20), (3, 'a', 30);"
       "create view v1 as select cat, val from b where val > 15;"
       "create view v2 as select cat, sum(val) as s from v1 group by cat");
  auto rows = query("select cat, s from v2 order by cat");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0][1].as_int(), 30);
  EXPECT_EQ(query("select count(*) from v1 x join v1 y on x.cat = y.cat")[0][0].as_int(), 2);
}

TEST_F(ViewsTest, WritingThroughANonUpdatableViewIsRefused) {
  // Writing through views is rewrite/view_writes.cc (tests/unit/view_writes_test.cc); a body
  // with no row-by-row lineage is refused at plan time, naming the view.
  exec("create table t (id integer primary key); create view v as select count(*) as n from t");
  for (const char* sql : {"insert into v values (1)", "update v set n = 2", "delete from v"}) {
    Status st = failure(sql);
    EXPECT_EQ(st.code(), StatusCode::kError) << sql << ": " << st.to_string();
    EXPECT_NE(st.message().find("cannot write through view 'v'"), std::string::npos) << st.to_string();
  }
}

TEST_F(ViewsTest, SchemaListsViewsWithTheirSqlAndTags) {
  exec("create table t (id integer primary key);"
       "create view if not exists v as select id from t with tags (purpose = 'demo', live = true)");
  auto rows = query("select type, sql, tags from schema() where name = 'v'");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].str(), "view");
  EXPECT_EQ(rows[0][1].str().rfind("create view v as select id from t", 0), 0u) << rows[0][1].str();
  EXPECT_EQ(rows[0][2].str(), "{\"live\":true,\"purpose\":\"demo\"}");
}

TEST_F(ViewsTest, AnalyzeCountsRowsAndRefusesViews) {
  exec("create table t (id integer primary key); insert into t values (1), (2), (3);"
       "create view v as select id from t");
  auto rows = query("analyze t");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].str(), "t");
  EXPECT_EQ(rows[0][1].as_int(), 3);
  EXPECT_NE(failure("analyze v").message().find("Cannot ANALYZE view 'main.v'"), std::string::npos);
  EXPECT_NE(failure("analyze nosuch.*").message().find("Schema not found: nosuch"), std::string::npos);
  EXPECT_EQ(query("analyze").size(), 1u);
}

TEST_F(ViewsTest, GenerateSeries) {
  auto rows = query("select value from generate_series(1, 5)");
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[4][0].as_int(), 5);
  rows = query("select value from generate_series(10, 1, -3)");
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[3][0].as_int(), 1);
  EXPECT_TRUE(query("select value from generate_series(1, null)").empty());
  EXPECT_NE(failure("select value from generate_series(1, 2, 0)").message().find("step"), std::string::npos);
}

TEST_F(ViewsTest, ForeignKeyInfo) {
  exec("create table parent (a integer, b integer, primary key (a, b));"
       "create table child (id integer primary key, x integer, y integer,"
       " constraint fk_xy foreign key (x, y) references parent on delete cascade)");
  auto rows = query("select name, \"from\", \"to\", on_delete, seq from foreign_key_info('child') order by seq");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0][0].str(), "fk_xy");
  EXPECT_EQ(rows[1][1].str(), "y");
  EXPECT_EQ(rows[1][2].str(), "b");
  EXPECT_EQ(rows[0][3].str(), "cascade");
  EXPECT_NE(failure("select * from foreign_key_info(1)").message().find("requires a table name string"),
            std::string::npos);
}

// The catalog keeps its own copy of the definition: the text shown is the canonical
// CREATE VIEW (comments dropped, parameters as written), and the view keeps working
// after the batch that created it is gone and after a rename rewrites it.
TEST_F(ViewsTest, DefinitionOutlivesItsStatementWithCommentsAndParameters) {
  exec("create table t (id integer primary key, v integer); insert into t values (1, 10);"
       "select 1; -- a comment\n"
       "create view w /* the view */ as select id, v + coalesce(:bump, 0) as bumped, ? as q from t");
  auto rows = query("select sql from schema() where name = 'w'");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].str(), "create view w as select id, v + coalesce(:bump, 0) as bumped, ? as q from t");
  rows = query("select id, bumped from w");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][1].as_int(), 10);
  exec("alter table t rename to t2");
  rows = query("select sql from schema() where name = 'w'");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].str(), "create view w as select id, v + coalesce(:bump, 0) as bumped, ? as q from t2");
  EXPECT_EQ(query("select count(*) from w")[0][0].as_int(), 1);
}

}  // namespace
}  // namespace quereus
