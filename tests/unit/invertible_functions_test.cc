// Invertibility profiles declared by plugin functions through the SDK (SDK 1.8,
// abi.h QRS_INVERT_*; vu-inverses.md "Scalar Invertibility"), with the real test plugin
// tests/sdk/invertible loaded through the loader:
//   - INVERSE: `update v set c = …` on a view column `cents(x)` writes uncents(…) to x;
//     a two-argument `shift(x, 5)` inverts with its constant; the column is updatable but
//     not insertable (like the built-in ±k inverses), and view_info()/column_info() agree;
//   - PASSTHROUGH: `label(x, 'tag')` is written and inserted as x;
//   - a profile in a struct as a 1.7 plugin built it (struct_size before the fields) is
//     ignored: the column stays computed and read-only;
//   - a profile whose inverse function is not registered refuses the plugin.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "main/database.h"
#include "plugin/plugin_loader.h"

namespace quereus {
namespace {

class InvertibleFunctionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_ = std::make_shared<Registry>();
    loader_ = std::make_unique<PluginLoader>(registry_,
                                             std::vector<std::string>{QUEREUS_PLUGIN_DIR, QUEREUS_TEST_PLUGIN_DIR});
    ASSERT_TRUE(loader_->load({"mem", {}, {}, ""}).ok());
  }
  std::unique_ptr<Database> open_with_plugin() {
    Status st = loader_->load({"invertible", {}, {}, ""});
    EXPECT_TRUE(st.ok()) << st.to_string();
    std::unique_ptr<Database> db;
    EXPECT_TRUE(Database::Open(registry_, {}, &db).ok());
    exec(*db, "create table t (id integer primary key, x integer null)");
    exec(*db, "insert into t values (1, 3), (2, 7)");
    return db;
  }
  static void exec(Database& db, const std::string& sql) {
    Status st = db.exec(sql);
    ASSERT_TRUE(st.ok()) << sql << ": " << st.to_string();
  }
  static void fails(Database& db, const std::string& sql, const std::string& text) {
    Status st = db.exec(sql);
    ASSERT_FALSE(st.ok()) << sql << " succeeded";
    EXPECT_NE(st.message().find(text), std::string::npos) << sql << ": " << st.to_string();
  }
  // The first row of `sql`, its cells as text (NULL as "null"), joined by '|'.
  static std::string row(Database& db, const std::string& sql) {
    std::vector<std::unique_ptr<Statement>> stmts;
    Status st = db.prepare(sql, &stmts);
    EXPECT_TRUE(st.ok()) << sql << ": " << st.to_string();
    if (!st.ok()) return "";
    bool has = false;
    st = stmts.at(0)->step(&has);
    EXPECT_TRUE(st.ok()) << sql << ": " << st.to_string();
    if (!has) return "<none>";
    std::string out;
    for (const Value& v : stmts[0]->row()) out += (out.empty() ? "" : "|") + (v.is_null() ? "null" : v.to_text());
    return out;
  }

  std::shared_ptr<Registry> registry_;
  std::unique_ptr<PluginLoader> loader_;
};

TEST_F(InvertibleFunctionsTest, DeclaredInverseMakesAViewColumnUpdatable) {
  auto db = open_with_plugin();
  exec(*db, "create view v as select id, cents(x) as c from t");
  EXPECT_EQ(row(*db, "select c from v where id = 1"), "300");
  exec(*db, "update v set c = 1200 where id = 1");
  EXPECT_EQ(row(*db, "select x from t where id = 1"), "12");  // uncents(1200)
  EXPECT_EQ(row(*db, "select c from v where id = 1"), "1200");  // PutGet
  // GetPut: writing back what was read changes nothing.
  exec(*db, "update v set c = (select c from v where id = 2) where id = 2");
  EXPECT_EQ(row(*db, "select x from t where id = 2"), "7");
  // The inverse composes with the built-in ones: cents(x) + 1 inverts to uncents(v - 1).
  exec(*db, "create view w as select id, cents(x) + 1 as c1 from t");
  exec(*db, "update w set c1 = 501 where id = 2");
  EXPECT_EQ(row(*db, "select x from t where id = 2"), "5");
  // Updatable, not insertable (the registry inverse has no insert hook): the static
  // surfaces say the same as the writes.
  EXPECT_EQ(row(*db, "select is_updatable, base_column from column_info('v') where column_name = 'c'"), "YES|x");
  fails(*db, "insert into v (id, c) values (3, 400)", "c");
  EXPECT_EQ(row(*db, "select count(*) from t"), "2");
}

TEST_F(InvertibleFunctionsTest, InverseReceivesTheOtherArgumentsAsConstants) {
  auto db = open_with_plugin();
  exec(*db, "create view v as select id, shift(x, 5) as s from t");
  EXPECT_EQ(row(*db, "select s from v where id = 1"), "8");
  exec(*db, "update v set s = 20 where id = 1");
  EXPECT_EQ(row(*db, "select x from t where id = 1"), "15");  // unshift(20, 5)
  // A non-constant other argument makes the call opaque.
  exec(*db, "create view w as select id, shift(x, id) as s from t");
  fails(*db, "update w set s = 20 where id = 1", "read-only");
}

TEST_F(InvertibleFunctionsTest, PassthroughIsWrittenAndInsertedAsItsArgument) {
  auto db = open_with_plugin();
  exec(*db, "create view v as select id, label(x, 'kg') as kg from t");
  exec(*db, "update v set kg = 42 where id = 2");
  EXPECT_EQ(row(*db, "select x from t where id = 2"), "42");
  exec(*db, "insert into v (id, kg) values (3, 9)");
  EXPECT_EQ(row(*db, "select x from t where id = 3"), "9");
  EXPECT_EQ(row(*db, "select is_updatable, base_column from column_info('v') where column_name = 'kg'"), "YES|x");
}

TEST_F(InvertibleFunctionsTest, AProfileBeyondAnOlderStructIsIgnored) {
  auto db = open_with_plugin();
  EXPECT_EQ(row(*db, "select legacy_cents(2)"), "200");  // the function itself works
  exec(*db, "create view v as select id, legacy_cents(x) as c from t");
  fails(*db, "update v set c = 500 where id = 1", "read-only");
  EXPECT_EQ(row(*db, "select x from t where id = 1"), "3");
  EXPECT_EQ(row(*db, "select is_updatable from column_info('v') where column_name = 'c'"), "NO");
}

TEST_F(InvertibleFunctionsTest, AnUnregisteredInverseRefusesThePlugin) {
  Status st = loader_->load({"invertible_broken", {}, {}, ""});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("function 'broken_inverse': its inverse 'no_such_function' is not a registered"),
            std::string::npos)
      << st.to_string();
  // Nothing of the refused plugin was kept.
  EXPECT_EQ(registry_->find_scalar("cents", 1), nullptr);
}

}  // namespace
}  // namespace quereus
