// DML as a relation (write/dml_relation.h) and the schema search path through the
// embedding API: what the logic files cannot show — a prepared statement re-executed,
// and the path changing between executions.
#include "mem_db_test.h"

namespace quereus {
namespace {

class DmlRelationTest : public MemDbTest {};

TEST_F(DmlRelationTest, APreparedDmlCteRunsOncePerExecution) {
  exec("create table t (k integer primary key)");
  std::vector<std::unique_ptr<Statement>> stmts;
  ASSERT_TRUE(db_->prepare("with c as (insert into t values (?) returning k) "
                           "select (select count(*) from c) as a, (select count(*) from c) as b",
                           &stmts)
                  .ok());
  ASSERT_EQ(stmts.size(), 1u);
  Statement& s = *stmts[0];
  for (int64_t k = 1; k <= 3; ++k) {
    ASSERT_TRUE(s.bind(1, Value::Integer(k)).ok());
    bool has = false;
    ASSERT_TRUE(s.step(&has).ok());
    ASSERT_TRUE(has);
    EXPECT_EQ(s.row()[0].as_int(), 1);  // this execution's one row, replayed twice
    EXPECT_EQ(s.row()[1].as_int(), 1);
    ASSERT_TRUE(s.step(&has).ok());
    EXPECT_FALSE(has);
    ASSERT_TRUE(s.reset().ok());
  }
  auto rows = query("select k from t order by k");
  ASSERT_EQ(rows.size(), 3u);  // one write per execution: 1, 2, 3
  EXPECT_EQ(rows[2][0].as_int(), 3);
}

TEST_F(DmlRelationTest, AFailedNestedWriteLeavesNothing) {
  exec("create table t (k integer primary key); create table log (k integer primary key);"
       "insert into t values (2)");
  fails("with c as (insert into log values (1) returning k) insert into t select k + 1 from c",
        StatusCode::kConstraint, "UNIQUE");
  EXPECT_TRUE(query("select k from log").empty());
}

TEST_F(DmlRelationTest, ChangingTheSessionPathReplansAPreparedStatement) {
  exec("create table main.t (v text); insert into main.t values ('main');"
       "create table temp.t (v text); insert into temp.t values ('temp')");
  std::vector<std::unique_ptr<Statement>> stmts;
  ASSERT_TRUE(db_->prepare("select v from t", &stmts).ok());
  Statement& s = *stmts[0];
  bool has = false;
  ASSERT_TRUE(s.step(&has).ok());
  ASSERT_TRUE(has);
  EXPECT_EQ(s.row()[0].to_text(), "main");
  ASSERT_TRUE(s.reset().ok());
  ASSERT_TRUE(db_->set_option("schema_path", Value::Text("temp,main")).ok());
  ASSERT_TRUE(s.step(&has).ok());
  ASSERT_TRUE(has);
  EXPECT_EQ(s.row()[0].to_text(), "temp");
  ASSERT_TRUE(s.reset().ok());
}

TEST_F(DmlRelationTest, AFailedApplyDropsWhatItCreated) {
  exec("declare schema s { table a (id integer primary key) view v as select * from nowhere }");
  Status st = db_->exec("apply schema s");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("nowhere"), std::string::npos) << st.to_string();
  Status err;
  query("select * from s.a", &err);
  EXPECT_FALSE(err.ok());
}

}  // namespace
}  // namespace quereus
