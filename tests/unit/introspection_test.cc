// The catalog introspection table-valued functions over the mem plugin: column_info(),
// check_constraint_info(), unique_constraint_info(), index_info(), view_info(),
// assertion_info() and function_info().
#include <gtest/gtest.h>

#include "mem_db_test.h"

#include "main/database.h"

namespace quereus {
namespace {

class IntrospectionTest : public MemDbTest {
 protected:
  std::string failure(const std::string& sql) {
    Status st;
    query(sql, &st);
    EXPECT_FALSE(st.ok()) << sql;
    return st.message();
  }
};

TEST_F(IntrospectionTest, ColumnInfoOfATableTracesEveryColumnToItself) {
  exec("create table t (id integer primary key, name text)");
  auto rows = query("select schema, name, cid, column_name, is_updatable, base_table, base_column "
                    "from column_info('t') order by cid");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0][0].to_text(), "main");
  EXPECT_EQ(rows[1][3].to_text(), "name");
  EXPECT_EQ(rows[1][4].to_text(), "YES");
  EXPECT_EQ(rows[1][5].to_text(), "t");
  EXPECT_EQ(rows[1][6].to_text(), "name");
}

TEST_F(IntrospectionTest, ColumnInfoOfAViewSeparatesBaseFromComputedColumns) {
  exec("create table t (id integer primary key, name text);"
       "create view v as select id as user_id, name || '!' as banner from t");
  auto rows = query("select column_name, is_updatable, base_table, base_column from column_info('v') order by cid");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0][0].to_text(), "user_id");
  EXPECT_EQ(rows[0][1].to_text(), "YES");
  EXPECT_EQ(rows[0][3].to_text(), "id");
  EXPECT_EQ(rows[1][1].to_text(), "NO");
  EXPECT_TRUE(rows[1][2].is_null());
  EXPECT_TRUE(rows[1][3].is_null());
}

TEST_F(IntrospectionTest, ColumnInfoRejectsAnUnknownRelation) {
  EXPECT_NE(failure("select * from column_info('nope')").find("not found"), std::string::npos);
}

TEST_F(IntrospectionTest, ViewInfoDerivesUpdateabilityFromLineage) {
  exec("create table t (id integer primary key, name text);"
       "create view v_all as select id, name from t;"
       "create view v_no_pk as select name from t;"
       "create view v_pinned as select id from t where name = 'x';"
       "create view v_computed as select name || '!' as b from t");
  auto rows = query("select name, is_insertable_into, is_updatable, is_deletable, effective_targets "
                    "from view_info() order by name");
  ASSERT_EQ(rows.size(), 4u);
  auto row = [&rows](const std::string& n) {
    for (auto& r : rows)
      if (r[0].to_text() == n) return r[1].to_text() + r[2].to_text() + r[3].to_text() + " " + r[4].to_text();
    return std::string("missing");
  };
  EXPECT_EQ(row("v_all"), "YESYESYES [\"t\"]");
  EXPECT_EQ(row("v_no_pk"), "NOYESNO [\"t\"]");
  EXPECT_EQ(row("v_pinned"), "YESYESYES [\"t\"]");
  EXPECT_EQ(row("v_computed"), "NONONO []");
  EXPECT_EQ(query("select name from view_info('V_ALL')").size(), 1u);
  EXPECT_EQ(query("select name from view_info('missing')").size(), 0u);
}

TEST_F(IntrospectionTest, CheckConstraintInfoListsEveryCheck) {
  exec("create table c (id integer primary key, qty integer check (qty > 0),"
       " constraint small check on insert (qty < 100))");
  auto rows = query("select id, name, expr, operations, \"deferrable\", initially_deferred, tags "
                    "from check_constraint_info('c') order by id");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_NE(rows[0][2].to_text().find("qty"), std::string::npos);
  EXPECT_EQ(rows[0][3].to_text(), "insert,update");
  EXPECT_EQ(rows[1][1].to_text(), "small");
  EXPECT_EQ(rows[1][3].to_text(), "insert");
  EXPECT_EQ(rows[1][4].as_int(), 0);
  EXPECT_TRUE(rows[1][6].is_null());
  EXPECT_NE(failure("select * from check_constraint_info('nope')").find("not found"), std::string::npos);
}

TEST_F(IntrospectionTest, PrimaryKeyIsNeitherAUniqueConstraintNorAnIndex) {
  exec("create table k (a integer, b text, primary key (a, b))");
  EXPECT_EQ(query("select * from unique_constraint_info('k')").size(), 0u);
  EXPECT_EQ(query("select * from index_info('k')").size(), 0u);
  EXPECT_NE(failure("select * from unique_constraint_info('nope')").find("not found"), std::string::npos);
  EXPECT_NE(failure("select * from index_info('nope')").find("not found"), std::string::npos);
}

TEST_F(IntrospectionTest, AssertionInfoIsEmptyWithItsColumns) {
  EXPECT_EQ(query("select schema_name, name, violation_sql, \"deferrable\", initially_deferred, dependent_tables "
                  "from assertion_info()")
                .size(),
            0u);
}

TEST_F(IntrospectionTest, FunctionInfoFiltersByName) {
  auto rows = query("select name, num_args, type from function_info('ABS')");
  ASSERT_GE(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].to_text(), "abs");
  EXPECT_EQ(rows[0][2].to_text(), "scalar");
  EXPECT_GT(query("select count(*) from function_info() where type = 'table' and name = 'view_info'")[0][0].as_int(),
            0);
}

}  // namespace
}  // namespace quereus
