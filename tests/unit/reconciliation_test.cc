// Open-time structural reconciliation (docs/reconciliation.md, spec
// schema-reconciliation.md): a database whose options name schema files opens into the
// declared shape — derived structure automatically, ownership and identity changes only
// by intent — or fails with nothing changed. Each test opens the same store directory
// several times with successive declarations, as a deployment upgrading would.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "catalog/registry.h"
#include "main/database.h"
#include "plugin/plugin_loader.h"

namespace quereus {
namespace {

StructuralIntent::Named named(const std::string& t) { return {t, {"app.yaml:9", "databases.main.migrate.x"}}; }

class ReconciliationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::temp_directory_path() / ("quereus-reconcile-" + std::to_string(::getpid()) + "-" +
                                                      ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    std::filesystem::remove_all(dir_);
    registry_ = std::make_shared<Registry>();
    PluginLoader loader(registry_, {QUEREUS_PLUGIN_DIR});
    for (const char* name : {"mem", "store", "sync-store"}) {
      PluginSpec spec;
      spec.path = name;
      ASSERT_TRUE(loader.load(spec).ok()) << name;
    }
  }
  void TearDown() override {
    db_.reset();
    std::filesystem::remove_all(dir_);
  }

  // Opens the store at dir_ with `schema` as the one schema file and `intent`.
  Status open(const std::string& schema, const StructuralIntent& intent = {}, bool store = true) {
    db_.reset();
    DatabaseOptions o;
    if (store) {
      o.default_module = module_;
      o.module_options[module_] = {{"path", Value::Text(dir_)}};
    }
    if (!schema.empty()) o.schema_files.push_back({"app.sql", schema, "app.yaml:4"});
    o.migrate = intent;
    o.migrate.file = "app.yaml";
    return Database::Open(registry_, o, &db_);
  }
  void opens(const std::string& schema, const StructuralIntent& intent = {}) {
    Status st = open(schema, intent);
    ASSERT_TRUE(st.ok()) << st.to_string();
  }
  void refused(const std::string& schema, const StructuralIntent& intent, StatusCode code,
               const std::vector<std::string>& texts) {
    Status st = open(schema, intent);
    ASSERT_FALSE(st.ok()) << "the open should have failed";
    if (code != StatusCode::kOk) {
      EXPECT_EQ(st.code(), code) << st.to_string();
    }
    for (const auto& t : texts) EXPECT_NE(st.message().find(t), std::string::npos) << "no '" << t << "' in:\n" << st.to_string();
  }
  void exec(const std::string& sql) {
    Status st = db_->exec(sql);
    ASSERT_TRUE(st.ok()) << sql << ": " << st.to_string();
  }
  // The rows of `sql` as "a|b" lines joined by ';', or "!<error>".
  std::string rows(const std::string& sql) {
    std::vector<std::unique_ptr<Statement>> stmts;
    Status st = db_->prepare(sql, &stmts);
    if (!st.ok()) return "!" + st.to_string();
    std::string out;
    for (auto& s : stmts) {
      out.clear();
      bool has = true;
      while ((st = s->step(&has)).ok() && has) {
        std::string line;
        for (const Value& v : s->row()) line += (line.empty() ? "" : "|") + (v.is_null() ? "NULL" : v.to_text());
        out += (out.empty() ? "" : ";") + line;
      }
      if (!st.ok()) return "!" + st.to_string();
    }
    return out;
  }

  std::string dir_;
  std::string module_ = "store";  // the persistent module the tests open
  std::shared_ptr<Registry> registry_;
  std::unique_ptr<Database> db_;
};

const char* kV1 =
    "declare schema main {\n"
    "  table users (id integer primary key, email text) with tags (\"quereus.id\" = 'usr');\n"
    "  table drafts (id integer primary key, body text);\n"
    "  table cache (k text primary key, v text);\n"
    "}\n";


TEST_F(ReconciliationTest, FirstOpenCreatesTheDeclaredTablesAndAReopenChangesNothing) {
  opens(kV1);
  exec("insert into users values (1, 'a@x'), (2, 'b@x')");
  exec("insert into drafts values (1, 'hello')");
  opens(kV1);
  EXPECT_EQ(rows("select id, email from users order by id"), "1|a@x;2|b@x");
  EXPECT_EQ(rows("select body from drafts"), "hello");
  // The history is not a table.
  EXPECT_EQ(rows("select count(*) from schema() where name like '%history%' or name like '%structure%'"), "0");
}

TEST_F(ReconciliationTest, IndexesComeAndGoWithoutIntent) {
  opens(kV1);
  exec("insert into users values (1, 'a@x')");
  std::string v2 = std::string(kV1);
  v2.insert(v2.rfind('}'), "  index users_email on users (email);\n");
  opens(v2);
  EXPECT_EQ(rows("select count(*) from schema() where name = 'users_email'"), "1");
  EXPECT_EQ(rows("select email from users where email = 'a@x'"), "a@x");
  // A changed index (another column, then unique) is rebuilt.
  std::string v3 = std::string(kV1);
  v3.insert(v3.rfind('}'), "  index users_email on users (id desc, email);\n");
  opens(v3);
  EXPECT_EQ(rows("select sql from schema() where name = 'users_email'"),
            "CREATE INDEX \"users_email\" ON \"users\" (\"id\" COLLATE BINARY DESC, \"email\" COLLATE BINARY)");
  exec("insert into users values (2, 'a@x')");
  std::string v4 = std::string(kV1);
  v4.insert(v4.rfind('}'), "  unique index users_email on users (email);\n");
  EXPECT_EQ(open(v4).code(), StatusCode::kConstraint);  // duplicate emails: nothing changes
  opens(v3);
  exec("delete from users where id = 2");
  opens(v4);
  EXPECT_NE(rows("insert into users values (3, 'a@x')").find("CONSTRAINT"), std::string::npos);
  opens(kV1);
  EXPECT_EQ(rows("select count(*) from schema() where name = 'users_email'"), "0");
  EXPECT_EQ(rows("select count(*) from users"), "1");
}

TEST_F(ReconciliationTest, AVanishedTableNeedsIntentAndTheRefusalShowsTheYamlForEachChoice) {
  opens(kV1);
  exec("insert into drafts values (1, 'keep me')");
  const std::string v2 =
      "declare schema main {\n"
      "  table users (id integer primary key, email text) with tags (\"quereus.id\" = 'usr');\n"
      "  table cache (k text primary key, v text);\n"
      "  table notes (id integer primary key, body text);\n"
      "}\n";
  refused(v2, {}, StatusCode::kSchema,
          {"Table 'main.drafts' is stored but no longer declared", "drop: [drafts]", "preserve: [drafts]",
           "rename: {drafts: notes}", "databases.main.migrate", "nothing was changed"});
  // Nothing changed: the old declaration opens with the rows, and no `notes` was created.
  opens(kV1);
  EXPECT_EQ(rows("select body from drafts"), "keep me");
  EXPECT_EQ(rows("select count(*) from schema() where name = 'notes'"), "0");
}

TEST_F(ReconciliationTest, RenameHandsTheRowsToTheDeclaredTableAndIsDoneOnce) {
  opens(kV1);
  exec("insert into drafts values (1, 'hello'), (2, 'world')");
  const std::string v2 =
      "declare schema main {\n"
      "  table users (id integer primary key, email text) with tags (\"quereus.id\" = 'usr');\n"
      "  table notes (id integer primary key, body text, pinned integer default 0);\n"
      "  table cache (k text primary key, v text);\n"
      "}\n";
  StructuralIntent intent;
  intent.renames.push_back({"drafts", "notes", {"app.yaml:11", "databases.main.migrate.rename.drafts"}});
  opens(v2, intent);
  EXPECT_EQ(rows("select id, body, pinned from notes order by id"), "1|hello|0;2|world|0");
  EXPECT_EQ(rows("select count(*) from schema() where name = 'drafts'"), "0");
  // The same deployment opening again: the rename is recorded as done, not an error.
  opens(v2, intent);
  EXPECT_EQ(rows("select count(*) from notes"), "2");
}

TEST_F(ReconciliationTest, DropRemovesTheTableAndItsRows) {
  opens(kV1);
  exec("insert into cache values ('a', 'b')");
  const std::string v2 =
      "declare schema main {\n"
      "  table users (id integer primary key, email text) with tags (\"quereus.id\" = 'usr');\n"
      "  table drafts (id integer primary key, body text);\n"
      "}\n";
  StructuralIntent intent;
  intent.drops.push_back(named("cache"));
  opens(v2, intent);
  EXPECT_EQ(rows("select count(*) from schema() where name = 'cache'"), "0");
  // Keeping a drop of a table the declaration names again is contradictory…
  refused(kV1, intent, StatusCode::kConfig, {"'cache' is declared"});
  // …without it, the table declared again is a new, empty one.
  opens(kV1);
  EXPECT_EQ(rows("select count(*) from cache"), "0");
}

TEST_F(ReconciliationTest, PreserveKeepsATableDormantAndDeclaringItAgainReactivatesIt) {
  opens(kV1);
  exec("insert into drafts values (1, 'dormant row')");
  const std::string v2 =
      "declare schema main {\n"
      "  table users (id integer primary key, email text) with tags (\"quereus.id\" = 'usr');\n"
      "  table cache (k text primary key, v text);\n"
      "}\n";
  StructuralIntent intent;
  intent.preserves.push_back(named("drafts"));
  opens(v2, intent);
  EXPECT_EQ(rows("select count(*) from schema() where name = 'drafts'"), "0");
  EXPECT_NE(rows("select * from drafts").find("!"), std::string::npos);
  // Stays dormant across opens that keep the intent, or drop it from the YAML.
  opens(v2, intent);
  opens(v2);
  EXPECT_EQ(rows("select count(*) from schema() where name = 'drafts'"), "0");
  // Declared again: back with its rows.
  opens(kV1);
  EXPECT_EQ(rows("select id, body from drafts"), "1|dormant row");
}

TEST_F(ReconciliationTest, AnIdentityChangeNeedsARetagAndARetagMustAuthorizeSomething) {
  opens(kV1);
  exec("insert into users values (1, 'a@x')");
  std::string v2 = kV1;
  v2.replace(v2.find("'usr'"), 5, "'per'");
  refused(v2, {}, StatusCode::kSchema, {"Table 'main.users' is declared with quereus.id 'per'", "stored with identity 'usr'",
                                       "retag: {users: usr}"});
  StructuralIntent wrong;
  wrong.retags.push_back({"users", "xyz", {"app.yaml:12", "databases.main.migrate.retag.users"}});
  refused(v2, wrong, StatusCode::kConfig, {"app.yaml:12", "retag.users", "previous identity 'xyz'", "'usr'"});
  StructuralIntent intent;
  intent.retags.push_back({"users", "usr", {"app.yaml:12", "databases.main.migrate.retag.users"}});
  opens(v2, intent);
  EXPECT_EQ(rows("select email from users"), "a@x");
  EXPECT_EQ(rows("select json_extract(tags, '$.\"quereus.id\"') from schema() where name = 'users'"), "per");
  opens(v2, intent);  // done before: accepted
  // A retag where nothing changes authorizes nothing.
  StructuralIntent idle;
  idle.retags.push_back({"drafts", "d0", {"app.yaml:13", "databases.main.migrate.retag.drafts"}});
  refused(v2, idle, StatusCode::kConfig, {"app.yaml:13", "databases.main.migrate.retag.drafts", "authorizes nothing"});
}

TEST_F(ReconciliationTest, ATableClaimingAnotherTablesIdentityNeedsARename) {
  opens(kV1);
  exec("insert into users values (1, 'a@x')");
  const std::string v2 =
      "declare schema main {\n"
      "  table people (id integer primary key, email text) with tags (\"quereus.id\" = 'usr');\n"
      "  table drafts (id integer primary key, body text);\n"
      "  table cache (k text primary key, v text);\n"
      "}\n";
  refused(v2, {}, StatusCode::kSchema,
          {"Table 'main.people' is declared with quereus.id 'usr', the identity of stored table 'main.users'",
           "rename: {users: people}"});
  StructuralIntent intent;
  intent.renames.push_back({"users", "people", {"app.yaml:11", "databases.main.migrate.rename.users"}});
  opens(v2, intent);
  EXPECT_EQ(rows("select email from people"), "a@x");
}

TEST_F(ReconciliationTest, ContradictoryIntentsAreRefusedNamingTheYamlKey) {
  opens(kV1);
  const std::string v2 =
      "declare schema main {\n"
      "  table users (id integer primary key, email text) with tags (\"quereus.id\" = 'usr');\n"
      "  table notes (id integer primary key, body text);\n"
      "}\n";
  auto at = [](const std::string& key, int line) { return IntentOrigin{"app.yaml:" + std::to_string(line), key}; };
  {  // a table not in the diff
    StructuralIntent i;
    i.drops.push_back({"cache", at("databases.main.migrate.drop", 10)});
    i.drops.push_back({"nosuch", at("databases.main.migrate.drop", 11)});
    i.preserves.push_back(named("drafts"));
    refused(v2, i, StatusCode::kConfig, {"app.yaml:11", "no stored table 'nosuch'"});
  }
  {  // two operations for one prior table
    StructuralIntent i;
    i.drops.push_back({"drafts", at("databases.main.migrate.drop", 10)});
    i.preserves.push_back({"drafts", at("databases.main.migrate.preserve", 12)});
    refused(v2, i, StatusCode::kConfig, {"app.yaml:12", "already has an operation", "exactly one of"});
  }
  {  // two prior tables onto one
    StructuralIntent i;
    i.renames.push_back({"drafts", "notes", at("databases.main.migrate.rename.drafts", 10)});
    i.renames.push_back({"cache", "notes", at("databases.main.migrate.rename.cache", 11)});
    refused(v2, i, StatusCode::kConfig, {"app.yaml:11", "renamed onto one table 'notes'"});
  }
  {  // preserving a declared table
    StructuralIntent i;
    i.preserves.push_back({"users", at("databases.main.migrate.preserve", 10)});
    refused(v2, i, StatusCode::kConfig, {"app.yaml:10", "'users' is declared"});
  }
  // None of those changed anything.
  opens(kV1);
  EXPECT_EQ(rows("select count(*) from schema() where name in ('drafts', 'cache', 'users')"), "3");
}

TEST_F(ReconciliationTest, APreservedTablesNameOrIdentityCannotBeReused) {
  const std::string v1 =
      "declare schema main {\n"
      "  table users (id integer primary key) with tags (\"quereus.id\" = 'usr');\n"
      "  table drafts (id integer primary key, body text) with tags (\"quereus.id\" = 'drf');\n"
      "}\n";
  opens(v1);
  exec("insert into drafts values (7, 'x')");
  StructuralIntent keep;
  keep.preserves.push_back(named("drafts"));
  opens("declare schema main { table users (id integer primary key) with tags (\"quereus.id\" = 'usr'); }", keep);
  refused("declare schema main { table users (id integer primary key) with tags (\"quereus.id\" = 'usr');"
          " table drafts (id integer primary key) with tags (\"quereus.id\" = 'other'); }",
          {}, StatusCode::kSchema, {"reuses the name of a preserved table", "'drf'"});
  refused("declare schema main { table users (id integer primary key) with tags (\"quereus.id\" = 'usr');"
          " table sketches (id integer primary key) with tags (\"quereus.id\" = 'drf'); }",
          {}, StatusCode::kSchema, {"the identity of preserved table 'main.drafts'"});
  opens(v1);
  EXPECT_EQ(rows("select id, body from drafts"), "7|x");
}

TEST_F(ReconciliationTest, PrepareConstraintsRepairsRowsBeforeTheDeclaredConstraintAndRunsOnce) {
  opens(kV1);
  exec("insert into users values (1, 'a@x'), (2, 'A@x'), (3, 'a@x')");
  const std::string v2 =
      "declare schema main {\n"
      "  table users (id integer primary key, email text unique) with tags (\"quereus.id\" = 'usr');\n"
      "  table drafts (id integer primary key, body text);\n"
      "  table cache (k text primary key, v text);\n"
      "}\n";
  // Without the repair the constraint cannot be materialized: the open fails, nothing changes.
  Status st = open(v2);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kConstraint) << st.to_string();
  // The error names the schema file (and the declared table's line) and the YAML naming it.
  EXPECT_NE(st.message().find("app.sql:2:"), std::string::npos) << st.to_string();
  EXPECT_NE(st.message().find("applying schema 'main'"), std::string::npos) << st.to_string();
  EXPECT_NE(st.message().find("(schema file named at app.yaml:4)"), std::string::npos) << st.to_string();
  opens(kV1);
  EXPECT_EQ(rows("select count(*) from users"), "3");
  StructuralIntent intent;
  intent.prepare_constraints.push_back({"dedupe_emails",
                                        "delete from users where id in (select b.id from users a join users b "
                                        "on a.email = b.email and b.id > a.id)",
                                        {"app.yaml:14", "databases.main.migrate.prepare_constraints.dedupe_emails"}});
  opens(v2, intent);
  EXPECT_EQ(rows("select id, email from users order by id"), "1|a@x;2|A@x");
  exec("insert into users values (9, 'z@x')");
  // A step runs once: the next open does not run it again (it would delete nothing here,
  // so make it visible with a step that would fail).
  intent.prepare_constraints[0].sql = "select no_such_function()";
  opens(v2, intent);
  EXPECT_EQ(rows("select count(*) from users"), "3");
}

TEST_F(ReconciliationTest, AFailingOpenLeavesEverythingAsItWas) {
  opens(kV1);
  exec("insert into drafts values (1, 'hello')");
  exec("insert into cache values ('k', 'v')");
  const std::string v2 =
      "declare schema main {\n"
      "  table users (id integer primary key, email text) with tags (\"quereus.id\" = 'usr');\n"
      "  table notes (id integer primary key, body text);\n"
      "  table fresh (id integer primary key);\n"
      "}\n";
  StructuralIntent intent;
  intent.renames.push_back({"drafts", "notes", {"app.yaml:11", "databases.main.migrate.rename.drafts"}});
  intent.drops.push_back(named("cache"));
  // The rename and the drop have run when this step fails.
  intent.prepare_constraints.push_back({"broken", "insert into nosuch values (1)",
                                        {"app.yaml:14", "databases.main.migrate.prepare_constraints.broken"}});
  refused(v2, intent, StatusCode::kOk, {"app.yaml:14", "prepare_constraints step 'broken' failed"});
  opens(kV1);
  EXPECT_EQ(rows("select body from drafts"), "hello");
  EXPECT_EQ(rows("select v from cache"), "v");
  EXPECT_EQ(rows("select count(*) from schema() where name in ('notes', 'fresh')"), "0");
}

TEST_F(ReconciliationTest, InMemoryTheDeclarationIsAppliedAndIntentsAreValidated) {
  Status st = open(kV1, {}, /*store=*/false);
  ASSERT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(rows("select count(*) from schema() where name in ('users', 'drafts', 'cache')"), "3");
  StructuralIntent i;
  i.drops.push_back({"legacy", {"app.yaml:10", "databases.main.migrate.drop"}});
  st = open(kV1, i, /*store=*/false);
  EXPECT_EQ(st.code(), StatusCode::kConfig) << st.to_string();
  EXPECT_NE(st.message().find("no stored table 'legacy'"), std::string::npos) << st.to_string();
  // Intents without schema files are a configuration error.
  st = open("", i, /*store=*/false);
  EXPECT_EQ(st.code(), StatusCode::kConfig) << st.to_string();
}

TEST_F(ReconciliationTest, ASchemaFileWithOtherStatementsIsRefusedWithItsLine) {
  Status st = open("declare schema main { table t (id integer primary key); }\ncreate table x (id integer primary key);");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kConfig) << st.to_string();
  EXPECT_NE(st.message().find("app.sql:2"), std::string::npos) << st.to_string();
  EXPECT_NE(st.message().find("app.yaml:4"), std::string::npos) << st.to_string();
  st = open("declare schema main { table t (id integer primary key) ");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("app.sql:1"), std::string::npos) << st.to_string();
}

TEST_F(ReconciliationTest, MaintainedTablesAndViewsFollowTheDeclarationWithoutIntent) {
  const std::string v1 =
      "declare schema main {\n"
      "  table sales (id integer primary key, region text, amount integer);\n"
      "  materialized view totals as select region, sum(amount) as total from sales group by region;\n"
      "  view big as select * from sales where amount > 10;\n"
      "}\n";
  opens(v1);
  exec("insert into sales values (1, 'n', 5), (2, 'n', 20), (3, 's', 7)");
  EXPECT_EQ(rows("select region, total from totals order by region"), "n|25;s|7");
  // The derived structures change or go; the plain table keeps its rows.
  const std::string v2 =
      "declare schema main {\n"
      "  table sales (id integer primary key, region text, amount integer);\n"
      "  materialized view totals as select region, count(*) as n from sales group by region;\n"
      "}\n";
  opens(v2);
  EXPECT_EQ(rows("select region, n from totals order by region"), "n|2;s|1");
  EXPECT_EQ(rows("select count(*) from schema() where name = 'big'"), "0");
  opens("declare schema main { table sales (id integer primary key, region text, amount integer); }");
  EXPECT_EQ(rows("select count(*) from schema() where name = 'totals'"), "0");
  EXPECT_EQ(rows("select count(*) from sales"), "3");
}

TEST_F(ReconciliationTest, ALogicalSchemaAndItsLensComeFromTheSchemaFileToo) {
  const std::string v1 =
      "declare schema main { table person_row (id integer primary key, full_name text); }\n"
      "declare logical schema app { table person (id integer primary key, full_name text); }\n"
      "declare lens for app over main { view person as select id, full_name from main.person_row; }\n";
  opens(v1);
  exec("insert into app.person values (1, 'Ada')");
  opens(v1);
  EXPECT_EQ(rows("select full_name from app.person"), "Ada");
  EXPECT_EQ(rows("select full_name from person_row"), "Ada");
}

TEST_F(ReconciliationTest, OnSyncStoreRenamePreserveAndReactivateWorkAlike) {
  module_ = "sync-store";
  opens(kV1);
  exec("insert into drafts values (1, 'synced')");
  exec("insert into cache values ('k', 'v')");
  const std::string v2 =
      "declare schema main {\n"
      "  table users (id integer primary key, email text) with tags (\"quereus.id\" = 'usr');\n"
      "  table notes (id integer primary key, body text);\n"
      "}\n";
  StructuralIntent intent;
  intent.renames.push_back({"drafts", "notes", {"app.yaml:11", "databases.main.migrate.rename.drafts"}});
  intent.preserves.push_back(named("cache"));
  refused(v2, {}, StatusCode::kSchema, {"main.drafts", "main.cache"});
  opens(v2, intent);
  EXPECT_EQ(rows("select body from notes"), "synced");
  EXPECT_EQ(rows("select count(*) from schema() where name = 'cache'"), "0");
  // Declared again (with notes in drafts' place): cache is back with its row.
  std::string v3 = kV1;
  v3.replace(v3.find("drafts"), 6, "notes");
  opens(v3);
  EXPECT_EQ(rows("select v from cache"), "v");
  EXPECT_EQ(rows("select body from notes"), "synced");
}

// Review findings: a preserved table's names stay reserved, its schema may have gone, a
// drop may wait for the declaration to drop a foreign key to it, a referenced table is
// not preserved, an untagged declaration does not take a tagged dormant table.
TEST_F(ReconciliationTest, APreservedTablesNamesStayReservedUntilItIsReactivated) {
  const std::string v1 =
      "declare schema main {\n"
      "  table keep (id integer primary key);\n"
      "  table x (id integer primary key, v text) with tags (\"quereus.id\" = 'xid');\n"
      "  index ix_v on x (v);\n"
      "}\n";
  const std::string v2 = "declare schema main { table keep (id integer primary key); }";
  opens(v1);
  exec("insert into x values (1, 'a'), (2, 'b')");
  StructuralIntent keep;
  keep.preserves.push_back(named("x"));
  opens(v2, keep);
  // Neither the table's nor its index's name may be taken meanwhile, by any statement.
  EXPECT_NE(rows("create table x (id integer primary key)").find("held by preserved table 'main.x'"), std::string::npos);
  EXPECT_NE(rows("create view x as select 1 as a").find("held by preserved table"), std::string::npos);
  EXPECT_NE(rows("create index ix_v on keep (id)").find("held by preserved table"), std::string::npos);
  EXPECT_NE(rows("alter table keep rename to x").find("held by preserved table"), std::string::npos);
  // Nor declared: a materialized view of that name fails the open, and changes nothing.
  Status st = open("declare schema main { table keep (id integer primary key); materialized view x as select id from keep; }");
  EXPECT_FALSE(st.ok());
  // An untagged declaration does not take the tagged dormant table silently.
  refused("declare schema main { table keep (id integer primary key); table x (id integer primary key, v text); }", {},
          StatusCode::kSchema, {"reuses the name of a preserved table", "retag: {x: xid}"});
  opens(v1);
  EXPECT_EQ(rows("select id, v from x order by id"), "1|a;2|b");
}

TEST_F(ReconciliationTest, ADormantTableWhoseSchemaWentIsReactivatedOrDropped) {
  const std::string v1 =
      "declare schema main { table k (id integer primary key); }\n"
      "declare schema app { table x (id integer primary key, v text); }\n";
  const std::string v2 = "declare schema main { table k (id integer primary key); }";
  opens(v1);
  exec("insert into app.x values (1, 'one')");
  StructuralIntent keep;
  keep.preserves.push_back(named("app.x"));
  opens(v2, keep);
  opens(v2);
  opens(v1);
  EXPECT_EQ(rows("select v from app.x"), "one");
  opens(v2, keep);
  StructuralIntent drop;
  drop.drops.push_back(named("app.x"));
  opens(v2, drop);
  opens(v1);
  EXPECT_EQ(rows("select count(*) from app.x"), "0");
}

TEST_F(ReconciliationTest, DropWaitsForTheDeclarationToRemoveAForeignKeyAndPreserveRefusesAReferencedTable) {
  const std::string v1 =
      "declare schema main {\n"
      "  table parent (id integer primary key);\n"
      "  table child (id integer primary key, pid integer null references parent(id));\n"
      "}\n";
  opens(v1);
  exec("insert into parent values (1)");
  exec("insert into child values (1, 1)");
  StructuralIntent preserve;
  preserve.preserves.push_back(named("parent"));
  refused("declare schema main { table child (id integer primary key, pid integer null references parent(id)); }",
          preserve, StatusCode::kSchema, {"'main.parent' cannot be preserved", "main.child"});
  StructuralIntent drop;
  drop.drops.push_back(named("parent"));
  opens("declare schema main { table child (id integer primary key, pid integer null); }", drop);
  EXPECT_EQ(rows("select id, pid from child"), "1|1");
  EXPECT_EQ(rows("select count(*) from schema() where name = 'parent'"), "0");
}

TEST_F(ReconciliationTest, ARenameKeepsTheDeclaredSpellingAndAFutureHistoryIsRefused) {
  opens(kV1);
  const std::string v2 =
      "declare schema main {\n"
      "  table users (id integer primary key, email text) with tags (\"quereus.id\" = 'usr');\n"
      "  table MyNotes (id integer primary key, body text);\n"
      "  table cache (k text primary key, v text);\n"
      "}\n";
  StructuralIntent intent;
  intent.renames.push_back({"Drafts", "MyNotes", {"app.yaml:11", "databases.main.migrate.rename.Drafts"}});
  opens(v2, intent);
  EXPECT_EQ(rows("select name from schema() where type = 'table' and lower(name) = 'mynotes'"), "MyNotes");
  EXPECT_THROW(StructuralHistory::decode(R"({"format":2})"), Error);
  try {
    StructuralHistory::decode(R"({"format":2})");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kFormat);
  }
}

// On sync-store a prepare_constraints repair is replicated like any write: its deletions
// are in the change log peers pull (it runs inside the open's schema-change scope).
TEST_F(ReconciliationTest, OnSyncStoreAPrepareStepsRepairIsReplicated) {
  module_ = "sync-store";
  opens(kV1);
  exec("insert into users values (1, 'a@x'), (2, 'b@x'), (3, 'a@x')");
  auto deletions = [&] {
    std::string page = rows("select sync_changes('main', 0, null, 1000)");
    size_t n = 0;
    for (size_t at = page.find("\"delete\""); at != std::string::npos; at = page.find("\"delete\"", at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(deletions(), 0u);
  const std::string v2 =
      "declare schema main {\n"
      "  table users (id integer primary key, email text unique) with tags (\"quereus.id\" = 'usr');\n"
      "  table drafts (id integer primary key, body text);\n"
      "  table cache (k text primary key, v text);\n"
      "}\n";
  StructuralIntent intent;
  intent.prepare_constraints.push_back({"dedupe_emails",
                                        "delete from users where id in (select b.id from users a join users b "
                                        "on a.email = b.email and b.id > a.id)",
                                        {"app.yaml:14", "databases.main.migrate.prepare_constraints.dedupe_emails"}});
  opens(v2, intent);
  EXPECT_EQ(rows("select id from users order by id"), "1;2");
  EXPECT_EQ(deletions(), 1u) << rows("select sync_changes('main', 0, null, 1000)");
  // Reopened, the log still holds it (it landed with the scope).
  opens(v2, intent);
  EXPECT_EQ(deletions(), 1u);
}

TEST_F(ReconciliationTest, TableNamesHoldingADotAreWrittenInSqlQuotes) {
  const std::string v1 =
      "declare schema main {\n"
      "  table \"old.cache\" (k text primary key, v text);\n"
      "  table \"draft notes\" (id integer primary key, body text);\n"
      "}\n";
  opens(v1);
  exec("insert into \"old.cache\" values ('a', 'b')");
  exec("insert into \"draft notes\" values (1, 'hello')");
  const std::string v2 =
      "declare schema main {\n"
      "  table \"notes.v2\" (id integer primary key, body text);\n"
      "}\n";
  // The refusal prints each choice as YAML that reads back to the same table.
  refused(v2, {}, StatusCode::kSchema,
          {"drop: ['\"old.cache\"']", "preserve: ['\"draft notes\"']", "rename: {'\"draft notes\"': '\"notes.v2\"'}"});
  StructuralIntent intent;
  intent.drops.push_back(named("\"old.cache\""));
  intent.renames.push_back({"\"draft notes\"", "\"notes.v2\"", {"app.yaml:11", "databases.main.migrate.rename"}});
  opens(v2, intent);
  EXPECT_EQ(rows("select id, body from \"notes.v2\""), "1|hello");
  EXPECT_EQ(rows("select count(*) from schema() where name in ('old.cache', 'draft notes')"), "0");
  // Unquoted, the dot qualifies: `old.cache` is table `cache` of schema `old`.
  EXPECT_EQ(split_table_ref("old.cache"), (std::pair<std::string, std::string>{"old", "cache"}));
  EXPECT_EQ(split_table_ref("\"Old.Cache\""), (std::pair<std::string, std::string>{"main", "old.cache"}));
  EXPECT_EQ(split_table_ref("s.\"a \"\"b\"\"\""), (std::pair<std::string, std::string>{"s", "a \"b\""}));
}

}  // namespace
}  // namespace quereus
