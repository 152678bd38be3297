// SQL over the store module, end to end: a database whose default module is an opened
// store instance (what the host's persistent configuration will set up), driven through
// Database::exec — tables, a secondary index (an engine companion table in the same
// LevelDB), transactions, savepoints, conflicts, ALTER TABLE — then the store reopened
// and read back through the module adapter.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/database.h"
#include "core/registry.h"
#include "plugin/plugin_loader.h"
#include "vtab/module.h"

namespace quereus {
namespace {

class StoreSqlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::temp_directory_path() / ("quereus-store-sql-" + std::to_string(::getpid()) + "-" +
                                                      ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    std::filesystem::remove_all(dir_);
    registry_ = std::make_shared<Registry>();
    PluginLoader loader(registry_, {QUEREUS_PLUGIN_DIR});
    for (const char* name : {"mem", "store"}) {
      PluginSpec spec;
      spec.path = name;
      ASSERT_TRUE(loader.load(spec).ok()) << name;
    }
    opened_ = open_store();
    registry_->add_module("stored", opened_, "test");
    DatabaseOptions o;
    o.default_module = "stored";
    ASSERT_TRUE(Database::Open(registry_, o, &db_).ok());
  }
  void TearDown() override {
    db_.reset();
    opened_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::shared_ptr<VtabModule> open_store() {
    return registry_->find_module("store")->open_database("main", {{"path", Value::Text(dir_)}});
  }

  void exec(const std::string& sql) {
    Status st = db_->exec(sql);
    ASSERT_TRUE(st.ok()) << sql << ": " << st.to_string();
  }
  void fails(const std::string& sql, StatusCode code, const std::string& text) {
    Status st = db_->exec(sql);
    ASSERT_FALSE(st.ok()) << sql;
    EXPECT_EQ(st.code(), code) << st.to_string();
    EXPECT_NE(st.message().find(text), std::string::npos) << st.to_string();
  }
  // The rows of `sql` rendered as "a|b" strings.
  std::vector<std::string> query(const std::string& sql) {
    std::vector<std::unique_ptr<Statement>> stmts;
    Status st = db_->prepare(sql, &stmts);
    EXPECT_TRUE(st.ok()) << sql << ": " << st.to_string();
    std::vector<std::string> out;
    for (auto& s : stmts) {
      out.clear();
      bool has = true;
      while (has) {
        st = s->step(&has);
        EXPECT_TRUE(st.ok()) << sql << ": " << st.to_string();
        if (!st.ok()) return out;
        if (!has) break;
        std::string line;
        for (const Value& v : s->row()) line += (line.empty() ? "" : "|") + (v.is_null() ? std::string("NULL") : v.to_text());
        out.push_back(line);
      }
    }
    return out;
  }

  std::string dir_;
  std::shared_ptr<Registry> registry_;
  std::shared_ptr<VtabModule> opened_;
  std::unique_ptr<Database> db_;
};

using V = std::vector<std::string>;

TEST_F(StoreSqlTest, TablesIndexesTransactionsAndAlterOverTheStore) {
  exec("create table t (id integer primary key, name text collate nocase, score real)");
  exec("create index t_name on t(name)");
  exec("insert into t values (3, 'Cy', 3), (1, 'Al', 1.5), (2, 'bea', 2)");
  EXPECT_EQ(query("select id from t where name = 'AL'"), V{"1"});
  EXPECT_EQ(query("select id, name from t order by id desc"), (V{"3|Cy", "2|bea", "1|Al"}));
  EXPECT_EQ(query("select name from t order by name"), (V{"Al", "bea", "Cy"}));
  EXPECT_EQ(query("select id from t where id between 2 and 3 order by id"), (V{"2", "3"}));
  fails("insert into t values (1, 'x', 0)", StatusCode::kConstraint, "UNIQUE");

  exec("begin");
  exec("insert into t values (4, 'dee', 4)");
  exec("savepoint s");
  exec("delete from t where id = 1");
  EXPECT_EQ(query("select count(*) from t"), V{"3"});
  exec("rollback to s");
  exec("release s");
  exec("commit");
  EXPECT_EQ(query("select count(*) from t"), V{"4"});

  exec("begin");
  exec("update t set score = 0");
  exec("insert into t values (5, 'eve', 5)");
  EXPECT_EQ(query("select sum(score) from t"), V{"5"});
  exec("rollback");
  EXPECT_EQ(query("select sum(score) from t"), V{"10.5"});
  EXPECT_EQ(query("select id from t where name = 'EVE'"), V{});

  exec("insert or replace into t values (2, 'Bea', 20)");
  exec("alter table t add column tag text default 'z'");
  exec("update t set tag = 'y' where id = 4");
  EXPECT_EQ(query("select id, name, score, tag from t order by id"),
            (V{"1|Al|1.5|z", "2|Bea|20|z", "3|Cy|3|z", "4|dee|4|y"}));

  // Close the database and the store, reopen the directory: every committed row is there.
  db_.reset();
  registry_.reset();
  opened_.reset();
  registry_ = std::make_shared<Registry>();
  PluginLoader loader(registry_, {QUEREUS_PLUGIN_DIR});
  PluginSpec spec;
  spec.path = "store";
  ASSERT_TRUE(loader.load(spec).ok());
  auto store = open_store();
  TableSchema s;
  s.schema_name = "main";
  s.name = "t";
  auto col = [](std::string name, qrs_logical_type t, const Collation& c) {
    ColumnSchema cs;
    cs.name = std::move(name);
    cs.logical_type = t;
    cs.collation = std::shared_ptr<const Collation>(&c, [](const Collation*) {});
    return cs;
  };
  s.columns = {col("id", QRS_LT_INTEGER, Collation::binary()), col("name", QRS_LT_TEXT, Collation::nocase()),
               col("score", QRS_LT_REAL, Collation::binary()), col("tag", QRS_LT_TEXT, Collation::binary())};
  s.columns[0].primary_key = true;
  s.primary_key = {{0, false}};
  auto t = store->connect(s);
  PlanResult plan = t->best_access_plan(PlanRequest{});
  EXPECT_EQ(plan.rows, 4);  // the row count survived too
  ScanArgs args;
  args.plan_id = plan.plan_id;
  auto cur = t->open_cursor(args);
  std::vector<Row> batch;
  V rows;
  while (size_t n = cur->next_batch(batch))
    for (size_t i = 0; i < n; ++i) rows.push_back(batch[i][0].to_text() + "|" + batch[i][1].to_text() + "|" + batch[i][3].to_text());
  EXPECT_EQ(rows, (V{"1|Al|z", "2|Bea|z", "3|Cy|z", "4|dee|y"}));
}

}  // namespace
}  // namespace quereus
