// Unit tests for host/config: parsing and validating deployment files, env interpolation,
// the built-in defaults, the default `mem` plugin and logging.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "config/config_loader.h"
#include "config/host_setup.h"
#include "config/logging.h"

namespace quereus {
namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

Status parse(const std::string& yaml, HostOptions* out) { return parse_config(yaml, "x.yaml", out); }

std::string error_of(const std::string& yaml) {
  HostOptions o;
  Status s = parse(yaml, &o);
  EXPECT_FALSE(s.ok()) << yaml;
  EXPECT_EQ(s.code(), StatusCode::kConfig);
  return s.message();
}

TEST(ConfigTest, EmptyTextGivesDefaults) {
  HostOptions o;
  ASSERT_TRUE(parse("", &o).ok());
  EXPECT_EQ(o.plugin_dir, "");
  EXPECT_TRUE(o.plugins.empty());
  ASSERT_EQ(o.databases.count("main"), 1u);
  EXPECT_EQ(o.databases["main"].default_module, "memory");
  EXPECT_EQ(o.logging.level, LogLevel::kWarn);
  ASSERT_EQ(o.logging.sinks.size(), 1u);
  EXPECT_EQ(o.logging.sinks[0].type, LogSinkType::kStderr);
}

TEST(ConfigTest, ValidConfigParses) {
  HostOptions o;
  Status s = parse(R"(
plugin_dir: /opt/quereus/lib
plugins:
  - path: sample
  - path: /x/acme.so
    sha256: 9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08
    settings: {n: 42, r: 0.5, b: true, q: "42", t: hello, z: ~, h: 0x10, big: 99999999999999999999}
databases:
  main:
    default_module: mem
    module_options:
      memory: {pages: 8}
  other: {}
logging:
  level: debug
  sinks:
    - type: stdout
    - {type: file, path: /tmp/q.log}
)",
                   &o);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(o.plugin_dir, "/opt/quereus/lib");
  ASSERT_EQ(o.plugins.size(), 2u);
  EXPECT_EQ(o.plugins[0].path, "sample");
  EXPECT_EQ(o.plugins[0].origin, "x.yaml:4");
  EXPECT_FALSE(o.plugins[0].sha256);
  EXPECT_EQ(*o.plugins[1].sha256, "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08");
  const SettingList& st = o.plugins[1].settings;
  ASSERT_EQ(st.size(), 8u);
  EXPECT_EQ(st[0].first, "n");
  EXPECT_EQ(st[0].second.type(), ValueType::kInteger);
  EXPECT_EQ(st[0].second.as_int(), 42);
  EXPECT_EQ(st[1].second.type(), ValueType::kReal);
  EXPECT_DOUBLE_EQ(st[1].second.as_real(), 0.5);
  EXPECT_EQ(st[2].second.type(), ValueType::kBoolean);
  EXPECT_TRUE(st[2].second.as_bool());
  EXPECT_EQ(st[3].second.type(), ValueType::kText);  // quoted
  EXPECT_EQ(st[3].second.str(), "42");
  EXPECT_EQ(st[4].second.str(), "hello");
  EXPECT_TRUE(st[5].second.is_null());
  EXPECT_EQ(st[6].second.as_int(), 16);
  EXPECT_EQ(st[7].second.type(), ValueType::kReal);  // beyond int64
  EXPECT_EQ(o.databases["main"].default_module, "mem");
  ASSERT_EQ(o.databases["main"].module_options["memory"].size(), 1u);
  EXPECT_EQ(o.databases["main"].module_options["memory"][0].second.as_int(), 8);
  EXPECT_EQ(o.databases["other"].default_module, "memory");
  EXPECT_EQ(o.logging.level, LogLevel::kDebug);
  ASSERT_EQ(o.logging.sinks.size(), 2u);
  EXPECT_EQ(o.logging.sinks[1].type, LogSinkType::kFile);
  EXPECT_EQ(o.logging.sinks[1].path, "/tmp/q.log");
}

TEST(ConfigTest, UnknownKeyNamesFileLineAndKey) {
  EXPECT_EQ(error_of("plugin_dir: x\n\nplugns: []\n"),
            "x.yaml:3: unknown key 'plugns' in top level (did you mean 'plugins'?)");
  EXPECT_EQ(error_of("logging:\n  level: info\n  colour: red\n"),
            "x.yaml:3: unknown key 'colour' in logging");
  EXPECT_TRUE(starts_with(error_of("plugins:\n  - path: a\n    sha: 1\n"),
                          "x.yaml:3: unknown key 'sha' in plugins[0]"));
  EXPECT_TRUE(starts_with(error_of("databases:\n  main:\n    module: x\n"),
                          "x.yaml:3: unknown key 'module' in databases.main"));
}

TEST(ConfigTest, WrongTypes) {
  EXPECT_EQ(error_of("plugins: 5\n"), "x.yaml:1: key 'plugins' must be a list");
  EXPECT_EQ(error_of("logging: [a]\n"), "x.yaml:1: key 'logging' must be a mapping");
  EXPECT_EQ(error_of("plugin_dir: [a, b]\n"), "x.yaml:1: key 'plugin_dir' must be a string");
  EXPECT_EQ(error_of("plugins:\n  - sample\n"), "x.yaml:2: plugins[0] must be a mapping with a key 'path'");
  EXPECT_TRUE(
      contains(error_of("plugins:\n  - path: a\n    settings: {x: [1]}\n"), "key 'x' must be a scalar"));
  EXPECT_EQ(error_of("plugins:\n  - path: a\n    sha256: abc\n"),
            "x.yaml:3: key 'sha256' must be 64 hexadecimal digits");
  EXPECT_EQ(error_of("- a\n"), "x.yaml:1: the top level must be a mapping");
}

TEST(ConfigTest, MissingAndDuplicateKeys) {
  EXPECT_EQ(error_of("plugins:\n  - settings: {}\n"), "x.yaml:2: missing key 'path' in plugins[0]");
  EXPECT_EQ(error_of("logging:\n  sinks:\n    - type: file\n"),
            "x.yaml:3: missing key 'path' in logging.sinks[0] (required for type file)");
  EXPECT_EQ(error_of("logging:\n  sinks:\n    - {type: stderr, path: x}\n"),
            "x.yaml:3: key 'path' is only allowed for the file types in logging.sinks[0]");
  EXPECT_EQ(error_of("plugin_dir: a\nplugin_dir: b\n"), "x.yaml:2: duplicate key 'plugin_dir' in top level");
}

TEST(ConfigTest, LoggingLevelValidation) {
  HostOptions o;
  for (const char* level : {"trace", "debug", "info", "warn", "error", "off"}) {
    ASSERT_TRUE(parse(std::string("logging: {level: ") + level + "}\n", &o).ok());
    EXPECT_STREQ(log_level_name(o.logging.level), level);
  }
  EXPECT_EQ(error_of("logging:\n  level: loud\n"),
            "x.yaml:2: key 'level' must be one of trace, debug, info, warn, error, off (got 'loud')");
  EXPECT_TRUE(contains(error_of("logging:\n  sinks: [{type: syslog}]\n"),
                       "key 'type' must be one of stderr, stdout, file"));
}

TEST(ConfigTest, FileAccess) {
  HostOptions o;
  ASSERT_TRUE(parse("databases:\n  main: {}\n", &o).ok());
  EXPECT_EQ(database_options(o.databases["main"]).file_access, DatabaseOptions::FileAccess::kReadWrite);
  ASSERT_TRUE(parse("databases:\n  main:\n    file_access: read\n", &o).ok());
  EXPECT_EQ(database_options(o.databases["main"]).file_access, DatabaseOptions::FileAccess::kRead);
  ASSERT_TRUE(parse("databases:\n  main:\n    file_access: none\n", &o).ok());
  EXPECT_EQ(database_options(o.databases["main"]).file_access, DatabaseOptions::FileAccess::kNone);
  EXPECT_EQ(error_of("databases:\n  main:\n    file_access: all\n"),
            "x.yaml:3: key 'file_access' must be one of none, read, read_write (got 'all')");
}

TEST(ConfigTest, SyntaxErrorHasLine) {
  EXPECT_EQ(error_of("logging:\n  level: warn\n bad: x\n"),
            "x.yaml:3: YAML syntax error: end of map not found");
}

TEST(ConfigTest, EnvironmentInterpolation) {
  setenv("QRS_TEST_DIR", "/srv/q", 1);
  setenv("QRS_TEST_N", "7", 1);
  setenv("QRS_TEST_EMPTY", "", 1);
  unsetenv("QRS_TEST_UNSET");
  HostOptions o;
  Status s = parse(R"(
plugin_dir: ${QRS_TEST_DIR}/lib
plugins:
  - path: ${QRS_TEST_UNSET:-sample}
    settings:
      n: ${QRS_TEST_N}
      e: ${QRS_TEST_EMPTY:-fallback}
      q: "${QRS_TEST_N}"
      lit: $${QRS_TEST_N}
)",
                   &o);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(o.plugin_dir, "/srv/q/lib");
  EXPECT_EQ(o.plugins[0].path, "sample");
  const SettingList& st = o.plugins[0].settings;
  EXPECT_EQ(st[0].second.type(), ValueType::kInteger);  // typed after interpolation
  EXPECT_EQ(st[0].second.as_int(), 7);
  EXPECT_EQ(st[1].second.str(), "fallback");  // :- also covers an empty variable
  EXPECT_EQ(st[2].second.type(), ValueType::kText);
  EXPECT_EQ(st[3].second.str(), "${QRS_TEST_N}");
}

TEST(ConfigTest, UnsetVariableIsAnError) {
  unsetenv("QRS_TEST_UNSET");
  EXPECT_EQ(error_of("logging:\n  level: ${QRS_TEST_UNSET}\n"),
            "x.yaml:2: environment variable 'QRS_TEST_UNSET' is not set (in key 'level')");
  EXPECT_EQ(error_of("plugin_dir: ${QRS_TEST_UNSET\n"), "x.yaml:1: unterminated '${' in key 'plugin_dir'");
}

TEST(ConfigTest, MissingFile) {
  HostOptions o;
  Status s = load_config("/nonexistent/dir/q.yaml", &o);
  EXPECT_EQ(s.code(), StatusCode::kConfig);
  EXPECT_EQ(s.message(), "/nonexistent/dir/q.yaml: cannot open file");
}

TEST(ConfigTest, RelativePluginDirIsResolvedAgainstTheFile) {
  const auto dir = std::filesystem::temp_directory_path() / "quereus_config_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "d.yaml") << "plugin_dir: ../plugins\n";
  HostOptions o;
  ASSERT_TRUE(load_config((dir / "d.yaml").string(), &o).ok());
  EXPECT_EQ(o.plugin_dir, (dir.parent_path() / "plugins").string());
  std::filesystem::remove_all(dir);
}

#ifdef QUEREUS_SOURCE_DIR
TEST(ConfigTest, QuickstartEqualsBuiltInDefaults) {
  HostOptions o;
  Status s = load_config(QUEREUS_SOURCE_DIR "/config/quickstart.yaml", &o);
  ASSERT_TRUE(s.ok()) << s.message();
  const HostOptions d;
  EXPECT_EQ(o.plugin_dir, d.plugin_dir);
  EXPECT_TRUE(o.plugins.empty());
  ASSERT_EQ(o.databases.size(), 1u);
  EXPECT_EQ(o.databases["main"].default_module, "memory");
  EXPECT_TRUE(o.databases["main"].module_options.empty());
  EXPECT_EQ(o.logging.level, d.logging.level);
  ASSERT_EQ(o.logging.sinks.size(), 1u);
  EXPECT_EQ(o.logging.sinks[0].type, LogSinkType::kStderr);
}

TEST(ConfigTest, WithSampleListsTheSamplePlugin) {
  HostOptions o;
  Status s = load_config(QUEREUS_SOURCE_DIR "/config/with-sample.yaml", &o);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(o.plugins.size(), 1u);
  EXPECT_EQ(o.plugins[0].path, "sample");
}
#endif

TEST(HostSetupTest, MemIsLoadedFirstUnlessListed) {
  HostOptions o;
  o.plugins.push_back(PluginEntry{"sample", std::nullopt, {}, "x.yaml:2"});
  std::vector<PluginEntry> list = plugins_to_load(o);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].path, "mem");
  EXPECT_EQ(list[1].path, "sample");
  o.plugins.push_back(PluginEntry{"/opt/q/mem.so", std::nullopt, {}, "x.yaml:3"});
  list = plugins_to_load(o);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[1].path, "/opt/q/mem.so");
  EXPECT_EQ(effective_plugin_dir(HostOptions{}), default_plugin_dir());
  EXPECT_TRUE(contains(default_plugin_dir(), "lib/quereus"));
}

TEST(LoggingTest, AppliesLevelAndSinks) {
  LoggingOptions l;
  l.level = LogLevel::kInfo;
  ASSERT_TRUE(apply_logging(l).ok());
  EXPECT_EQ(spdlog::default_logger()->level(), spdlog::level::info);
  EXPECT_EQ(spdlog::default_logger()->sinks().size(), 1u);
  l.sinks.clear();
  l.level = LogLevel::kOff;
  ASSERT_TRUE(apply_logging(l).ok());
  EXPECT_EQ(spdlog::default_logger()->level(), spdlog::level::off);
  EXPECT_TRUE(spdlog::default_logger()->sinks().empty());
  l.sinks.push_back(LogSink{LogSinkType::kFile, "/dev/null/q.log"});
  EXPECT_EQ(apply_logging(l).code(), StatusCode::kConfig);
  ASSERT_TRUE(apply_logging(LoggingOptions{}).ok());
}

}  // namespace
}  // namespace quereus

namespace quereus {
namespace {

// databases.<name>.schema and .migrate (docs/reconciliation.md): files read relative to
// the YAML file, every intent with its line and key, mistakes refused with file:line.
TEST(ConfigReconciliationTest, SchemaFilesAndIntentsParseWithTheirOrigins) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("quereus-config-reconcile-" + std::to_string(::getpid()));
  fs::create_directories(dir / "schema");
  std::ofstream(dir / "schema" / "app.sql") << "declare schema main { table t (id integer primary key); }";
  std::ofstream(dir / "fix.sql") << "delete from t where id < 0";
  const std::string yaml = R"(databases:
  main:
    default_module: store
    schema: [schema/app.sql]
    migrate:
      rename: {drafts: notes}
      drop: [cache, other.junk]
      preserve: [experiments]
      retag: {users: usr}
      prepare_constraints:
        - name: inline
          sql: delete from t where id > 100
        - {name: from_file, file: fix.sql}
)";
  std::ofstream(dir / "app.yaml") << yaml;
  HostOptions o;
  Status s = load_config((dir / "app.yaml").string(), &o);
  ASSERT_TRUE(s.ok()) << s.to_string();
  const DatabaseConfig& db = o.databases["main"];
  ASSERT_EQ(db.schema_files.size(), 1u);
  EXPECT_NE(db.schema_files[0].text.find("declare schema main"), std::string::npos);
  EXPECT_TRUE(db.schema_files[0].origin.size() > 0 && db.schema_files[0].origin.find("app.yaml:4") != std::string::npos)
      << db.schema_files[0].origin;
  ASSERT_EQ(db.migrate.renames.size(), 1u);
  EXPECT_EQ(db.migrate.renames[0].from, "drafts");
  EXPECT_EQ(db.migrate.renames[0].to, "notes");
  EXPECT_NE(db.migrate.renames[0].origin.where.find("app.yaml:6"), std::string::npos);
  EXPECT_EQ(db.migrate.renames[0].origin.key, "databases.main.migrate.rename.drafts");
  ASSERT_EQ(db.migrate.drops.size(), 2u);
  EXPECT_EQ(db.migrate.drops[1].table, "other.junk");
  ASSERT_EQ(db.migrate.preserves.size(), 1u);
  ASSERT_EQ(db.migrate.retags.size(), 1u);
  EXPECT_EQ(db.migrate.retags[0].previous_id, "usr");
  ASSERT_EQ(db.migrate.prepare_constraints.size(), 2u);
  EXPECT_EQ(db.migrate.prepare_constraints[0].sql, "delete from t where id > 100");
  EXPECT_EQ(db.migrate.prepare_constraints[1].sql, "delete from t where id < 0");
  EXPECT_EQ(database_options(db).schema_files.size(), 1u);
  EXPECT_EQ(database_options(db).migrate.prepare_constraints.size(), 2u);
  fs::remove_all(dir);
}

TEST(ConfigReconciliationTest, BadSchemaAndMigrateEntriesNameTheLine) {
  EXPECT_TRUE(contains(error_of("databases:\n  main:\n    schema: [/no/such/file.sql]\n"), "x.yaml:3"));
  EXPECT_TRUE(contains(error_of("databases:\n  main:\n    schema: [/no/such/file.sql]\n"), "cannot open file"));
  EXPECT_TRUE(contains(error_of("databases:\n  main:\n    migrate:\n      drop: cache\n"), "must be a list"));
  EXPECT_TRUE(contains(error_of("databases:\n  main:\n    migrate:\n      rename: {a: b.c.d}\n"), "is not a table name"));
  EXPECT_TRUE(contains(error_of("databases:\n  main:\n    migrate:\n      retgag: {a: b}\n"), "did you mean 'retag'"));
  EXPECT_TRUE(contains(error_of("databases:\n  main:\n    migrate:\n      prepare_constraints:\n        - {sql: x}\n"),
                       "needs a 'name'"));
  EXPECT_TRUE(contains(
      error_of("databases:\n  main:\n    migrate:\n      prepare_constraints:\n        - {name: a, sql: x, file: y}\n"),
      "one of 'sql' and 'file'"));
}

}  // namespace
}  // namespace quereus
