// ddl/schema_ddl: the DDL a persistent catalog stores must recreate the table exactly.
// Property: render → execute in a fresh database → render again gives the same text,
// for tables using every column and constraint feature, also after ALTERs.
#include <string>
#include <vector>

#include "main/database_impl.h"
#include "ddl/schema_ddl.h"
#include "mem_db_test.h"

namespace quereus {
namespace {

class SchemaDdlTest : public MemDbTest {
 protected:
  DatabaseImpl& impl() { return static_cast<DatabaseImpl&>(*db_); }
  std::string bundle(const std::string& table, const std::string& schema = "main") {
    auto t = impl().catalog().find(schema, table);
    EXPECT_TRUE(t) << table;
    return t ? table_bundle(t->schema) : std::string();
  }
  // Recreates `table` from its bundle in a fresh database and expects the same bundle.
  void expect_fixed_point(const std::string& table, const std::string& setup = "") {
    std::string text = bundle(table);
    std::unique_ptr<Database> fresh;
    ASSERT_TRUE(Database::Open(registry_, {}, &fresh).ok());
    if (!setup.empty()) {
      ASSERT_TRUE(fresh->exec(setup).ok()) << setup;
    }
    Status st = fresh->exec(text);
    ASSERT_TRUE(st.ok()) << text << "\n" << st.to_string();
    auto t = static_cast<DatabaseImpl&>(*fresh).catalog().find("main", table);
    ASSERT_TRUE(t);
    EXPECT_EQ(table_bundle(t->schema), text);
  }
};

TEST_F(SchemaDdlTest, EveryColumnAttributeRoundTrips) {
  exec("create table t (id integer primary key, a text null collate nocase default ('x'), "
       "b real not null on conflict ignore default (1.5), c integer generated always as (id * 2) stored, "
       "d integer generated always as (id + 1), e blob null, f any null)");
  expect_fixed_point("t");
  EXPECT_NE(bundle("t").find("collate nocase"), std::string::npos) << bundle("t");
}

TEST_F(SchemaDdlTest, KeysAndConstraintsRoundTrip) {
  exec("create table p (k text primary key, n integer unique)");
  exec("create table t (a integer, b text, c integer null, primary key (a desc, b) on conflict replace, "
       "constraint u_c unique (c), unique (b, c) on conflict ignore, "
       "constraint pos check (a > 0), check on delete (c is null) on conflict fail, "
       "constraint fk_b foreign key (b) references p(k) on delete cascade on update set null "
       "deferrable initially deferred, foreign key (c) references p(n))");
  exec("create index t_c on t (c desc) where c > 0");
  exec("create unique index t_bc on t (b collate nocase)");
  expect_fixed_point("t", "create table p (k text primary key, n integer unique)");
}

TEST_F(SchemaDdlTest, ModuleOptionsAndContextRoundTrip) {
  exec("create table t (id integer primary key, who text default (actor)) using memory (note = 'it''s', n = 3) "
       "with context (actor text null)");
  expect_fixed_point("t");
}

TEST_F(SchemaDdlTest, TheTableAsAlteredIsWhatIsRendered) {
  exec("create table t (id integer primary key, v text, w integer)");
  exec("alter table t add column x integer default 7");
  exec("alter table t drop column v");
  exec("alter table t rename column w to ww");
  exec("alter table t alter column ww set data type text");
  exec("alter table t add constraint x_pos check (x > 0)");
  exec("alter table t alter primary key (id, x)");
  std::string text = bundle("t");
  EXPECT_EQ(text.find("\"v\""), std::string::npos) << text;
  EXPECT_NE(text.find("ww text"), std::string::npos) << text;
  EXPECT_NE(text.find("primary key (id, x)"), std::string::npos) << text;
  expect_fixed_point("t");
}

TEST_F(SchemaDdlTest, SingletonAndKeylessTables) {
  exec("create table s (a integer, primary key ())");
  expect_fixed_point("s");
  exec("create table k (a integer, b text)");  // keyed on all columns, undeclared
  expect_fixed_point("k");
  EXPECT_EQ(bundle("k").find("primary key"), std::string::npos);
}

TEST(SqlLiteral, ValuesReadBackAsThemselves) {
  EXPECT_EQ(sql_literal(Value::Text("it's")), "'it''s'");
  EXPECT_EQ(sql_literal(Value::Integer(-3)), "-3");
  EXPECT_EQ(sql_literal(Value::Real(2.0)), "2.0");
  EXPECT_EQ(sql_literal(Value::Boolean(true)), "true");
  EXPECT_EQ(sql_literal(Value()), "null");
  EXPECT_EQ(sql_literal(Value::Blob(std::string("\x00\xff", 2))), "x'00ff'");
}

}  // namespace
}  // namespace quereus
