// ABI discipline (issue 7, point 5; docs/sdk.md "Versioning rules"), with real plugins
// loaded through the loader (tests/sdk/abi_versions, tests/sdk/abi_v2):
//   - a plugin built as of ABI 1.0 (shorter vtables, later slots absent) loads and works
//     (and its aggregate, laid out as 1.8 did, has no algebra: views over it recompute),
//     and the host takes its fallback paths: FK parent and UNIQUE probes through cursors
//     instead of `lookup`, ALTER TABLE without `alter_table` (schema-only arms applied by
//     the host, row-rewriting arms refused), one shared instance without `open_database`.
//     Its slots past struct_size are filled with poison in memory: none is ever called.
//   - a plugin built as of a future 1.x (a trailing slot the host does not know) loads and
//     works; the host reads its own prefix of the vtables only.
//   - a plugin of another ABI major is refused, with a clear message, before any of its
//     code runs; and the SDK's entry refuses a host of another major.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "main/database.h"
#include "plugin/plugin_loader.h"
#include "quereus/abi.h"

namespace quereus {
namespace {

namespace fs = std::filesystem;
const fs::path kTestPlugins = QUEREUS_TEST_PLUGIN_DIR;

class AbiVersionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_ = std::make_shared<Registry>();
    loader_ = std::make_unique<PluginLoader>(registry_, std::vector<std::string>{QUEREUS_PLUGIN_DIR, QUEREUS_TEST_PLUGIN_DIR});
    ASSERT_TRUE(loader_->load({"mem", {}, {}, ""}).ok());
  }
  void load(const std::string& name) {
    Status st = loader_->load({name, {}, {}, ""});
    ASSERT_TRUE(st.ok()) << st.to_string();
  }
  std::unique_ptr<Database> open() {
    std::unique_ptr<Database> db;
    EXPECT_TRUE(Database::Open(registry_, {}, &db).ok());
    return db;
  }
  static void exec(Database& db, const std::string& sql) {
    Status st = db.exec(sql);
    ASSERT_TRUE(st.ok()) << sql << ": " << st.to_string();
  }
  static void fails(Database& db, const std::string& sql, StatusCode code, const std::string& text) {
    Status st = db.exec(sql);
    ASSERT_FALSE(st.ok()) << sql;
    EXPECT_EQ(st.code(), code) << st.to_string();
    EXPECT_NE(st.message().find(text), std::string::npos) << st.to_string();
  }
  static int64_t scalar(Database& db, const std::string& sql) {
    std::vector<std::unique_ptr<Statement>> stmts;
    Status st = db.prepare(sql, &stmts);
    EXPECT_TRUE(st.ok()) << st.to_string();
    bool has = false;
    st = stmts.at(0)->step(&has);
    EXPECT_TRUE(st.ok() && has) << sql << ": " << st.to_string();
    return has ? stmts[0]->row().at(0).as_int() : -1;
  }
  static int64_t calls(Database& db, const std::string& plugin, const std::string& slot) {
    return scalar(db, "select " + plugin + "_calls('" + slot + "')");
  }

  std::shared_ptr<Registry> registry_;
  std::unique_ptr<PluginLoader> loader_;
};

TEST_F(AbiVersionsTest, OlderMinorPluginLoadsAndTheHostFallsBack) {
  load("abi_old");
  ASSERT_EQ(loader_->loaded().size(), 2u);
  EXPECT_EQ(loader_->loaded()[1].manifest.abi_minor, 0);
  EXPECT_LT(loader_->loaded()[1].manifest.abi_minor, QRS_ABI_MINOR);
  auto db = open();

  // CRUD works.
  exec(*db, "create table parent (id integer primary key, name text) using abi_old");
  exec(*db, "insert into parent values (1, 'one'), (2, 'two')");
  exec(*db, "update parent set name = 'uno' where id = 1");
  exec(*db, "delete from parent where id = 2");
  EXPECT_EQ(scalar(*db, "select count(*) from parent where name = 'uno'"), 1);
  fails(*db, "insert into parent values (1, 'again')", StatusCode::kConstraint, "UNIQUE constraint failed");

  // Foreign-key parent probe: no lookup slot, so the host opens a cursor on the parent.
  exec(*db, "create table child (id integer primary key, pid integer references parent(id)) using memory");
  int64_t cursors = calls(*db, "abi_old", "open_cursor");
  exec(*db, "insert into child values (1, 1)");
  fails(*db, "insert into child values (2, 2)", StatusCode::kConstraint, "_fk_child_pid");
  EXPECT_GE(calls(*db, "abi_old", "open_cursor"), cursors + 2);

  // UNIQUE probe of an index companion, also through cursors.
  exec(*db, "create table u (id integer primary key, email text unique) using abi_old");
  exec(*db, "insert into u values (1, 'a@x'), (2, 'b@x')");
  cursors = calls(*db, "abi_old", "open_cursor");
  fails(*db, "insert into u values (3, 'a@x')", StatusCode::kConstraint, "UNIQUE constraint failed");
  EXPECT_GT(calls(*db, "abi_old", "open_cursor"), cursors);
  EXPECT_EQ(scalar(*db, "select count(*) from u"), 2);

  // ALTER TABLE without the alter_table slot: schema-only arms run, row rewrites refused.
  exec(*db, "alter table parent rename column name to label");
  EXPECT_EQ(scalar(*db, "select count(*) from parent where label = 'uno'"), 1);
  fails(*db, "alter table parent add column extra integer", StatusCode::kUnsupported,
        "Module 'abi_old' does not support ALTER TABLE");

  // No open_database slot: one instance serves every database, so a second database over
  // the same registry sees the first one's storage (create of the same name collides).
  auto db2 = open();
  fails(*db2, "create table parent (id integer primary key) using abi_old", StatusCode::kError,
        "table main.parent already exists");

  // As a database's default module the host would open a per-database instance and keep
  // a persistent catalog through it: without those slots it shares the instance and
  // persists nothing.
  DatabaseOptions options;
  options.default_module = "abi_old";
  options.module_options["abi_old"] = {{"path", Value::Text("/nonexistent")}};
  std::unique_ptr<Database> db3;
  ASSERT_TRUE(Database::Open(registry_, options, &db3).ok());
  exec(*db3, "create table t3 (id integer primary key)");
  exec(*db3, "insert into t3 values (1)");
  EXPECT_EQ(scalar(*db3, "select count(*) from t3"), 1);

  // An aggregate registered with the 1.8 layout (no algebra; its slots past struct_size are
  // poison): a grouped materialized view over it recomputes its groups and stays exact.
  exec(*db, "create table ev (id integer primary key, g integer, x integer) using memory");
  exec(*db, "insert into ev values (1, 1, 5), (2, 1, 7), (3, 2, 1)");
  exec(*db, "create materialized view sv as select g, count(*) as n, abi_old_sum(x) as s from ev group by g");
  exec(*db, "insert into ev values (4, 1, 10)");
  exec(*db, "delete from ev where id = 3");
  exec(*db, "update ev set x = 100 where id = 1");
  EXPECT_EQ(scalar(*db, "select s from sv where g = 1"), 117);
  EXPECT_EQ(scalar(*db, "select count(*) from sv"), 1);
  EXPECT_EQ(scalar(*db, "select folded_rows from materialized_view_info() where name = 'sv'"), 0);
  EXPECT_GE(scalar(*db, "select recomputed_groups from materialized_view_info() where name = 'sv'"), 3);

  // The slots past the 1.0 struct_size were never called, nor reached through C++.
  EXPECT_EQ(calls(*db, "abi_old", "beyond"), 0);
  EXPECT_EQ(calls(*db, "abi_old", "lookup"), 0);
  EXPECT_EQ(calls(*db, "abi_old", "alter_table"), 0);
}

TEST_F(AbiVersionsTest, NewerMinorPluginLoadsAndItsUnknownSlotIsIgnored) {
  load("abi_new");
  EXPECT_GT(loader_->loaded()[1].manifest.abi_minor, QRS_ABI_MINOR);
  auto db = open();
  exec(*db, "create table parent (id integer primary key, name text) using abi_new");
  exec(*db, "insert into parent values (1, 'one')");
  exec(*db, "create table child (id integer primary key, pid integer references parent(id)) using memory");
  exec(*db, "insert into child values (1, 1)");
  fails(*db, "insert into child values (2, 2)", StatusCode::kConstraint, "_fk_child_pid");
  // Every slot the host knows is used: the FK probe went through lookup, ALTER through alter_table.
  EXPECT_GE(calls(*db, "abi_new", "lookup"), 2);
  fails(*db, "alter table parent add column extra integer", StatusCode::kUnsupported,
        "Module 'abi_new' does not support ALTER TABLE");
  EXPECT_EQ(calls(*db, "abi_new", "alter_table"), 1);
  EXPECT_EQ(calls(*db, "abi_new", "beyond"), 0);
}

TEST_F(AbiVersionsTest, OtherMajorIsRefusedBeforeItsCodeRuns) {
  // abi_v2's entry aborts the process if it ever runs.
  std::string path = (kTestPlugins / "abi_v2.so").string();
  Status st = loader_->load({path, {}, {}, ""});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kPlugin);
  EXPECT_NE(st.message().find("plugin '" + path + "': ABI major mismatch: plugin built for ABI 2, host speaks ABI 1"),
            std::string::npos)
      << st.to_string();
}

TEST_F(AbiVersionsTest, SidecarLyingAboutTheMajorIsCaughtByTheMissingEntry) {
  fs::path dir = fs::temp_directory_path() / ("quereus_abi_v2_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::copy_file(kTestPlugins / "abi_v2.so", dir / "liar.so", fs::copy_options::overwrite_existing);
  std::ofstream(dir / "liar.plugin.json")
      << R"({"name": "liar", "version": "1.0.0", "abi": {"major": 1, "minor": 0},
            "provides": {"modules": [], "collations": [], "functions": []}})";
  std::string path = (dir / "liar.so").string();
  Status st = loader_->load({path, {}, {}, ""});
  fs::remove_all(dir);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("not a plugin: no qrs_plugin_entry_v1 symbol"), std::string::npos) << st.to_string();
}

// The other direction: the SDK inside a plugin refuses a host of another major.
TEST(AbiVersionsSdk, PluginRefusesAHostOfAnotherMajor) {
  std::string path = (kTestPlugins / "abi_old.so").string();
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto entry = reinterpret_cast<qrs_plugin_entry_v1_fn>(dlsym(lib, QRS_PLUGIN_ENTRY_V1));
  ASSERT_NE(entry, nullptr);
  qrs_host_api host{};
  host.struct_size = sizeof(host);
  host.abi_major = 2;
  host.abi_minor = 0;
  qrs_registrar reg{};
  reg.struct_size = sizeof(reg);
  std::string message;
  qrs_error err{sizeof(qrs_error), &message,
                [](qrs_error* e, const char* m, size_t n) { static_cast<std::string*>(e->ctx)->assign(m, n); }};
  EXPECT_EQ(entry(&host, &reg, &err), QRS_MISUSE);
  EXPECT_EQ(message, "host ABI major 2, plugin built for 1");
  dlclose(lib);
}

}  // namespace
}  // namespace quereus
