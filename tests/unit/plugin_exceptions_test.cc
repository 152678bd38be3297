// Exception containment at the plugin boundary (issue 7, point 6): an exception thrown
// inside any plugin call becomes an error status carrying the plugin's message, whatever
// its type, and the host keeps working. Driven through SQL with the test plugin
// tests/sdk/thrower (built with the SDK only), which throws on demand in the call a
// table's module options name.
#include <gtest/gtest.h>

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <string>
#include <vector>

#include "main/database.h"
#include "plugin/plugin_loader.h"

namespace quereus {
namespace {

class PluginExceptionsTest : public ::testing::Test {
 protected:
  void SetUp() override { open({}); }

  void open(std::vector<std::pair<std::string, Value>> settings) {
    db_.reset();
    registry_ = std::make_shared<Registry>();
    PluginLoader loader(registry_, {QUEREUS_PLUGIN_DIR, QUEREUS_TEST_PLUGIN_DIR});
    ASSERT_TRUE(loader.load({"mem", {}, {}, ""}).ok());
    Status st = loader.load({"thrower", {}, std::move(settings), ""});
    ASSERT_TRUE(st.ok()) << st.to_string();
    ASSERT_TRUE(Database::Open(registry_, {}, &db_).ok());
    exec("create table ok_t (id integer primary key) using memory");
  }

  void exec(const std::string& sql) {
    Status st = db_->exec(sql);
    ASSERT_TRUE(st.ok()) << sql << ": " << st.to_string();
  }
  // `sql` fails with `code` and a message containing `text`; then the host still works
  // (checked at once unless `check_after` is false: inside a transaction that still holds
  // the throwing table, every later statement meets it again).
  void fails(const std::string& sql, StatusCode code, const std::string& text, bool check_after = true) {
    Status st = db_->exec(sql);
    ASSERT_FALSE(st.ok()) << sql;
    EXPECT_EQ(st.code(), code) << sql << ": " << st.to_string();
    EXPECT_NE(st.message().find(text), std::string::npos) << sql << ": " << st.to_string();
    if (check_after) still_works();
  }
  void still_works() {
    Status st = db_->exec("insert into ok_t values (" + std::to_string(++probe_) + ")");
    EXPECT_TRUE(st.ok()) << "the host stopped working: " << st.to_string();
  }
  // A thrower table throwing `what` in `call` with message `msg`.
  void make(const std::string& name, const std::string& call, const std::string& what = "std",
            const std::string& msg = "") {
    std::string m = msg.empty() ? "kaboom in " + call : msg;
    exec("create table " + name + " (id integer primary key, v text) using thrower(throw_in = '" + call +
         "', throw_what = '" + what + "', message = '" + m + "')");
  }
  int64_t count(const std::string& table) {
    std::vector<std::unique_ptr<Statement>> stmts;
    EXPECT_TRUE(db_->prepare("select count(*) from " + table, &stmts).ok());
    bool has = false;
    EXPECT_TRUE(stmts.at(0)->step(&has).ok());
    return has ? stmts[0]->row().at(0).as_int() : -1;
  }

  std::shared_ptr<Registry> registry_;
  std::unique_ptr<Database> db_;
  int probe_ = 0;
};

// ---- every kind of call, with a std::exception -----------------------------------------------

TEST_F(PluginExceptionsTest, CreateAndDestroy) {
  fails("create table c (id integer primary key) using thrower(throw_in = 'create', message = 'kaboom in create')",
        StatusCode::kInternal, "kaboom in create");
  make("d", "destroy");
  fails("drop table d", StatusCode::kInternal, "kaboom in destroy");
}

TEST_F(PluginExceptionsTest, OpenDatabase) {
  DatabaseOptions options;
  options.module_options["thrower"] = {{"throw_in", Value::Text("open_database")},
                                       {"message", Value::Text("kaboom in open_database")}};
  std::unique_ptr<Database> other;
  Status st = Database::Open(registry_, options, &other);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kInternal) << st.to_string();
  EXPECT_NE(st.message().find("kaboom in open_database"), std::string::npos) << st.to_string();
  EXPECT_EQ(other, nullptr);
  still_works();
}

TEST_F(PluginExceptionsTest, PlanCursorAndBatches) {
  make("p", "plan");
  fails("select * from p", StatusCode::kInternal, "kaboom in plan");
  make("o", "open_cursor");
  fails("select * from o", StatusCode::kInternal, "kaboom in open_cursor");
  make("n", "next_batch");
  fails("select * from n", StatusCode::kInternal, "kaboom in next_batch");
}

TEST_F(PluginExceptionsTest, Writes) {
  make("i", "insert");
  fails("insert into i values (1, 'a')", StatusCode::kInternal, "kaboom in insert");
  EXPECT_EQ(count("i"), 0);
  make("u", "update");
  exec("insert into u values (1, 'a')");
  fails("update u set v = 'b' where id = 1", StatusCode::kInternal, "kaboom in update");
  make("x", "delete");
  exec("insert into x values (1, 'a')");
  fails("delete from x where id = 1", StatusCode::kInternal, "kaboom in delete");
  EXPECT_EQ(count("x"), 1);
}

TEST_F(PluginExceptionsTest, TransactionCalls) {
  make("oc", "open_connection");
  fails("insert into oc values (1, 'a')", StatusCode::kInternal, "kaboom in open_connection");
  make("b", "begin");
  fails("insert into b values (1, 'a')", StatusCode::kInternal, "kaboom in begin");
  make("c", "commit");
  fails("insert into c values (1, 'a')", StatusCode::kInternal, "kaboom in commit");

  make("r", "rollback");
  exec("begin");
  exec("insert into r values (1, 'a')");
  fails("rollback", StatusCode::kInternal, "kaboom in rollback");
  exec("begin");  // the failed rollback still ended the transaction
  exec("commit");

  make("s", "savepoint");
  exec("begin");
  fails("insert into s values (1, 'a')", StatusCode::kInternal, "kaboom in savepoint");
  exec("rollback");

  // Inside a transaction every statement releases its own savepoint.
  make("rs", "release_savepoint");
  exec("begin");
  fails("insert into rs values (1, 'a')", StatusCode::kInternal, "kaboom in release_savepoint", false);
  exec("rollback");
  still_works();

  make("rt", "rollback_to_savepoint");
  exec("begin");
  exec("savepoint sp");
  exec("insert into rt values (1, 'a')");
  fails("rollback to sp", StatusCode::kInternal, "kaboom in rollback_to_savepoint", false);
  exec("rollback");
  still_works();
}

TEST_F(PluginExceptionsTest, AlterAndLookup) {
  make("al", "alter_table");
  exec("insert into al values (1, 'a')");
  fails("alter table al add column w integer", StatusCode::kInternal, "kaboom in alter_table");

  make("parent", "lookup");
  exec("insert into parent values (1, 'p')");
  exec("create table child (id integer primary key, pid integer references parent(id)) using memory");
  fails("insert into child values (1, 1)", StatusCode::kInternal, "kaboom in lookup");
}

TEST_F(PluginExceptionsTest, Functions) {
  fails("select thrower_fail('std', 'kaboom in a scalar')", StatusCode::kInternal, "kaboom in a scalar");
  fails("select thrower_agg(m) from (values ('a'), ('step')) as x(m)", StatusCode::kInternal,
        "thrower: boom in aggregate step");
  fails("select thrower_agg(m) from (values ('a'), ('final')) as x(m)", StatusCode::kRange,
        "thrower: boom in aggregate final");
}

// ---- every kind of exception, in one call -----------------------------------------------------

TEST_F(PluginExceptionsTest, EveryExceptionTypeCarriesItsMessage) {
  struct Case {
    const char* what;
    StatusCode code;
    const char* text;
  };
  const Case cases[] = {
      {"error", StatusCode::kIoErr, "kaboom as error"},  // sdk::Error keeps its status
      {"std", StatusCode::kInternal, "kaboom as std"},
      {"string", StatusCode::kInternal, "kaboom as string"},
      {"cstr", StatusCode::kInternal, "kaboom as cstr"},
      {"bad_alloc", StatusCode::kNoMem, "out of memory"},
      {"int", StatusCode::kInternal, "unknown exception of type 'int' (not derived from std::exception)"},
      {"custom", StatusCode::kInternal, "unknown exception of type 'thrower::Custom'"},
  };
  int n = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    std::string t = "t" + std::to_string(n++);
    make(t, "insert", c.what, std::string("kaboom as ") + c.what);
    fails("insert into " + t + " values (1, 'a')", c.code, c.text);
  }
  fails("select thrower_fail('custom', '')", StatusCode::kInternal, "not derived from std::exception");
}

// ---- calls that cannot report: contained and logged --------------------------------------------

class LogCapture {
 public:
  LogCapture() : sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(64)), saved_(spdlog::default_logger()) {
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("capture", sink_));
    spdlog::set_level(spdlog::level::trace);
  }
  ~LogCapture() { spdlog::set_default_logger(saved_); }
  bool contains(const std::string& text) const {
    for (const std::string& line : sink_->last_formatted())
      if (line.find(text) != std::string::npos) return true;
    return false;
  }

 private:
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
  std::shared_ptr<spdlog::logger> saved_;
};

TEST_F(PluginExceptionsTest, ThrowingCollationAnswersBinaryAndIsLogged) {
  LogCapture log;
  std::vector<std::unique_ptr<Statement>> stmts;
  ASSERT_TRUE(db_->prepare("select v from (values ('b'), ('a'), ('C')) as x(v) order by v collate THROWY", &stmts).ok());
  std::vector<std::string> got;
  bool has = true;
  while (true) {
    Status st = stmts.at(0)->step(&has);
    ASSERT_TRUE(st.ok()) << st.to_string();
    if (!has) break;
    got.push_back(std::string(stmts[0]->row().at(0).str()));
  }
  EXPECT_EQ(got, (std::vector<std::string>{"C", "a", "b"}));  // BINARY order
  EXPECT_TRUE(log.contains("collation THROWY threw (answering with BINARY order): thrower: boom in collation THROWY"));
  still_works();
}

TEST_F(PluginExceptionsTest, ThrowingCapabilitiesMeansDefaultsAndIsLogged) {
  LogCapture log;
  open({{"throw_in_capabilities", Value::Boolean(true)}});
  EXPECT_TRUE(log.contains("plugin exception in Module::capabilities (the host uses the defaults) ignored: "
                           "thrower: boom in capabilities"));
  exec("create table t (id integer primary key, v text) using thrower");
  exec("insert into t values (1, 'a')");
  EXPECT_EQ(count("t"), 1);
}

TEST(PluginEntryExceptions, ThrowingEntryRefusesThePluginWithItsMessage) {
  auto registry = std::make_shared<Registry>();
  PluginLoader loader(registry, {QUEREUS_TEST_PLUGIN_DIR});
  Status st = loader.load({"thrower", {}, {{"throw_in_entry", Value::Text("std")}}, ""});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kPlugin);
  EXPECT_NE(st.message().find("qrs_plugin_entry_v1 failed (INTERNAL): thrower: boom in the plugin entry"),
            std::string::npos)
      << st.to_string();
  EXPECT_EQ(registry->find_module("thrower"), nullptr);  // nothing it registered is kept

  st = loader.load({"thrower", {}, {{"throw_in_entry", Value::Text("custom")}}, ""});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("unknown exception of type 'thrower::Custom'"), std::string::npos) << st.to_string();
  // And a clean load after the refusals works.
  ASSERT_TRUE(loader.load({"thrower", {}, {}, ""}).ok());
  EXPECT_NE(registry->find_module("thrower"), nullptr);
}

// A plugin without the SDK's trampolines can let an exception escape a slot (the C ABI
// forbids it); the host stops it at the boundary with an error naming the call.
TEST(RawPluginExceptions, EscapedExceptionsStopAtTheBoundary) {
  auto registry = std::make_shared<Registry>();
  PluginLoader loader(registry, {QUEREUS_PLUGIN_DIR, QUEREUS_TEST_PLUGIN_DIR});
  ASSERT_TRUE(loader.load({"mem", {}, {}, ""}).ok());
  Status st = loader.load({"raw_thrower", {}, {{"throw_in_entry", Value::Boolean(true)}}, ""});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kPlugin);
  EXPECT_NE(st.message().find("plugin qrs_plugin_entry_v1 let an exception cross the C ABI: raw entry boom"),
            std::string::npos)
      << st.to_string();

  ASSERT_TRUE(loader.load({"raw_thrower", {}, {}, ""}).ok());
  std::unique_ptr<Database> db;
  ASSERT_TRUE(Database::Open(registry, {}, &db).ok());
  st = db->exec("select raw_fail('std')");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kInternal);
  EXPECT_NE(st.message().find("plugin function raw_fail let an exception cross the C ABI: raw boom"), std::string::npos)
      << st.to_string();
  st = db->exec("select raw_fail('int')");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("plugin function raw_fail let an exception cross the C ABI: an exception of type 'int'"),
            std::string::npos)
      << st.to_string();
  EXPECT_TRUE(db->exec("create table t (id integer primary key); insert into t values (1)").ok());
}

}  // namespace
}  // namespace quereus
