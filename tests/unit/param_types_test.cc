// Declared parameter types: inference from example values, plan-time typing, and the
// check of bound values on every execution (types-parameters.md).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mem_db_test.h"

namespace quereus {
namespace {

class ParamTypesTest : public MemDbTest {
 protected:
  std::unique_ptr<Statement> prepare(const std::string& sql) {
    std::vector<std::unique_ptr<Statement>> out;
    Status s = db_->prepare(sql, &out);
    EXPECT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(out.size(), 1u);
    return std::move(out[0]);
  }
  // Runs one execution; returns the rows as "a|b" strings, or "ERROR <code>: <message>".
  std::vector<std::string> run(Statement& st) {
    std::vector<std::string> rows;
    bool has = false;
    Status s;
    while ((s = st.step(&has)).ok() && has) {
      std::string r;
      for (const Value& v : st.row()) r += (r.empty() ? "" : "|") + v.to_text();
      rows.push_back(r);
    }
    if (!s.ok()) rows.push_back("ERROR " + std::to_string(static_cast<int>(s.code())) + ": " + s.message());
    EXPECT_TRUE(st.reset().ok());
    return rows;
  }
};

TEST(ParamTypesInference, FromExampleValues) {
  std::vector<Value> vals = {Value::Integer(1), Value::Real(2.5), Value::Text("x"), Value::Blob("b"),
                             Value::Boolean(true), Value::Json("[1]"), Value()};
  ParamTypes t = ParamTypes::from_values(vals, {{":n", Value::Text("y")}});
  ASSERT_EQ(t.positional.size(), 7u);
  EXPECT_EQ(t.positional[1].type, QRS_LT_INTEGER);
  EXPECT_EQ(t.positional[2].type, QRS_LT_REAL);
  EXPECT_EQ(t.positional[3].type, QRS_LT_TEXT);
  EXPECT_EQ(t.positional[4].type, QRS_LT_BLOB);
  EXPECT_EQ(t.positional[5].type, QRS_LT_BOOLEAN);
  EXPECT_EQ(t.positional[6].type, QRS_LT_JSON);
  EXPECT_EQ(t.positional[7].type, QRS_LT_ANY);
  EXPECT_TRUE(t.positional[7].nullable);
  ASSERT_EQ(t.named.count("n"), 1u);  // the sigil is dropped
  EXPECT_EQ(t.named["n"].type, QRS_LT_TEXT);
}

TEST(ParamTypesInference, PhysicalCompatibility) {
  std::string why;
  EXPECT_TRUE(value_fits_param(Value::Integer(1), {QRS_LT_REAL, true}, &why));  // REAL takes any number
  EXPECT_FALSE(value_fits_param(Value::Real(1.5), {QRS_LT_INTEGER, true}, &why));
  EXPECT_EQ(why, "expected INTEGER, got real");
  EXPECT_TRUE(value_fits_param(Value::Text("2024-01-15"), {QRS_LT_DATE, true}, &why));
  EXPECT_FALSE(value_fits_param(Value::Integer(1), {QRS_LT_BOOLEAN, true}, &why));
  EXPECT_TRUE(value_fits_param(Value(), {QRS_LT_INTEGER, true}, &why));
  EXPECT_FALSE(value_fits_param(Value(), {QRS_LT_INTEGER, false}, &why));
  EXPECT_EQ(why, "expected INTEGER NOT NULL, got NULL");
  EXPECT_TRUE(value_fits_param(Value::Blob("z"), {QRS_LT_ANY, false}, &why));
}

TEST_F(ParamTypesTest, EveryExecutionChecksTheBoundValues) {
  ASSERT_TRUE(db_->exec("create table t (id integer primary key, name text)").ok());
  auto ins = prepare("insert into t values (?, ?)");
  ASSERT_TRUE(ins->set_parameter_types(ParamTypes::from_values(std::vector<Value>{Value::Integer(1), Value::Text("a")})).ok());
  ASSERT_TRUE(ins->bind(1, Value::Integer(1)).ok());
  ASSERT_TRUE(ins->bind(2, Value::Text("alice")).ok());
  EXPECT_TRUE(run(*ins).empty());
  ASSERT_TRUE(ins->bind(1, Value::Integer(2)).ok());
  ASSERT_TRUE(ins->bind(2, Value::Text("bob")).ok());
  EXPECT_TRUE(run(*ins).empty());

  // A REAL where INTEGER was established: refused before anything is written.
  ASSERT_TRUE(ins->bind(1, Value::Real(3.5)).ok());
  auto r = run(*ins);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0], "ERROR " + std::to_string(static_cast<int>(StatusCode::kMismatch)) +
                      ": Parameter type mismatch for parameter 1: expected INTEGER, got real");
  auto count = prepare("select count(*) from t");
  EXPECT_EQ(run(*count), std::vector<std::string>{"2"});

  // NULL fits a nullable declaration (the NOT NULL column then refuses it as usual).
  ASSERT_TRUE(ins->bind(1, Value::Integer(3)).ok());
  ASSERT_TRUE(ins->bind(2, Value()).ok());
  r = run(*ins);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_NE(r[0].find("NOT NULL constraint failed"), std::string::npos) << r[0];

  // A NOT NULL declaration refuses it at the parameter.
  ParamTypes strict;
  strict.positional[1] = {QRS_LT_INTEGER, false};
  strict.positional[2] = {QRS_LT_TEXT, false};
  ASSERT_TRUE(ins->set_parameter_types(strict).ok());
  r = run(*ins);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0], "ERROR " + std::to_string(static_cast<int>(StatusCode::kMismatch)) +
                      ": Parameter type mismatch for parameter 2: expected TEXT NOT NULL, got NULL");
}

TEST_F(ParamTypesTest, NamedParametersAreCheckedByName) {
  auto st = prepare("select :a + 1");
  ParamTypes types;
  types.named["a"] = {QRS_LT_INTEGER, true};
  ASSERT_TRUE(st->set_parameter_types(types).ok());
  ASSERT_TRUE(st->bind(":a", Value::Integer(41)).ok());
  EXPECT_EQ(run(*st), std::vector<std::string>{"42"});
  ASSERT_TRUE(st->bind(":a", Value::Text("41")).ok());
  auto r = run(*st);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_NE(r[0].find("Parameter type mismatch for parameter :a: expected INTEGER, got text"), std::string::npos)
      << r[0];
}

TEST_F(ParamTypesTest, DeclaredTypesTypeThePlan) {
  // typeof() is a plan-independent check of the value; the plan's typing shows in the
  // comparison coercion: a TEXT parameter against an INTEGER column compares numerically
  // (types-inference.md), exactly as a TEXT column would.
  ASSERT_TRUE(db_->exec("create table n (id integer primary key); insert into n values (1), (2), (10)").ok());
  auto st = prepare("select id from n where id < ? order by id");
  ParamTypes types;
  types.positional[1] = {QRS_LT_TEXT, true};
  ASSERT_TRUE(st->set_parameter_types(types).ok());
  ASSERT_TRUE(st->bind(1, Value::Text("9")).ok());
  EXPECT_EQ(run(*st), (std::vector<std::string>{"1", "2"}));

  // Undeclared, the bound value types the parameter (types-parameters.md "Type Inference
  // Rules"): the same text value is TEXT, so it compares numerically as well.
  auto inferred = prepare("select id from n where id < ? order by id");
  ASSERT_TRUE(inferred->bind(1, Value::Text("9")).ok());
  EXPECT_EQ(run(*inferred), (std::vector<std::string>{"1", "2"}));
  // A value of another type re-plans the statement with that type.
  ASSERT_TRUE(inferred->bind(1, Value::Integer(10)).ok());
  EXPECT_EQ(run(*inferred), (std::vector<std::string>{"1", "2"}));
  ASSERT_TRUE(inferred->bind(1, Value::Text("2")).ok());
  EXPECT_EQ(run(*inferred), (std::vector<std::string>{"1"}));
}

// The declared types travel with the statement's plan (PlanSeed), not through the
// database: a write's WHERE and a DML statement nested as a relation are typed too.
TEST_F(ParamTypesTest, DeclaredTypesReachWritesAndNestedStatements) {
  ASSERT_TRUE(db_->exec("create table n (id integer primary key); insert into n values (1), (2), (10)").ok());
  ParamTypes types;
  types.positional[1] = {QRS_LT_TEXT, true};
  auto nested = prepare("select count(*) from (delete from n where id < ? returning id)");
  ASSERT_TRUE(nested->set_parameter_types(types).ok());
  ASSERT_TRUE(nested->bind(1, Value::Text("9")).ok());
  EXPECT_EQ(run(*nested), (std::vector<std::string>{"2"}));  // 1 and 2: compared as numbers

  ASSERT_TRUE(db_->exec("insert into n values (1), (2)").ok());
  auto upd = prepare("update n set id = id + 100 where id < ?");
  ASSERT_TRUE(upd->set_parameter_types(types).ok());
  ASSERT_TRUE(upd->bind(1, Value::Text("9")).ok());
  EXPECT_TRUE(run(*upd).empty());
  auto all = prepare("select id from n order by id");
  EXPECT_EQ(run(*all), (std::vector<std::string>{"10", "101", "102"}));
}

TEST_F(ParamTypesTest, BadDeclarationsAndRunningStatementsAreRefused) {
  auto st = prepare("select ?");
  ParamTypes bad;
  bad.positional[0] = {QRS_LT_INTEGER, true};
  EXPECT_EQ(st->set_parameter_types(bad).code(), StatusCode::kRange);
}

}  // namespace
}  // namespace quereus
