// Hostile deployment files (issue 15, part 4): huge numbers, alias bombs, deep nesting,
// huge files, and module errors at open naming the file and line of their configuration.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "config/config_loader.h"
#include "config/host_setup.h"
#include "plugin/plugin_loader.h"

namespace quereus {
namespace {

namespace fs = std::filesystem;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

Status parse(const std::string& yaml, HostOptions* out) { return parse_config(yaml, "x.yaml", out); }

// The settings of the first plugin of `yaml` (which must parse).
SettingList settings_of(const std::string& yaml) {
  HostOptions o;
  Status s = parse(yaml, &o);
  EXPECT_TRUE(s.ok()) << s.message();
  return o.plugins.empty() ? SettingList{} : o.plugins[0].settings;
}

TEST(ConfigHardeningTest, FiftyThousandDigitNumberIsRefusedWithoutCrash) {
  // std::regex overflowed the stack on this (issue 15).
  const std::string digits(50'000, '7');
  HostOptions o;
  Status s = parse("plugins:\n  - path: x\n    settings:\n      n: " + digits + "\n", &o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kConfig);
  EXPECT_TRUE(contains(s.message(), "x.yaml:4: key 'n': number out of range")) << s.message().substr(0, 200);

  // A long number that fits a REAL, a long text and a long hash are handled too.
  SettingList st = settings_of("plugins:\n  - path: x\n    settings:\n      r: 0." + digits + "\n      t: " + digits +
                               "x\n      neg: -" + std::string(300, '9') + "\n");
  ASSERT_EQ(st.size(), 3u);
  EXPECT_EQ(st[0].second.type(), ValueType::kReal);
  EXPECT_DOUBLE_EQ(st[0].second.as_real(), 7.0 / 9.0);
  EXPECT_EQ(st[1].second.type(), ValueType::kText);
  EXPECT_EQ(st[2].second.type(), ValueType::kReal);  // beyond int64, within REAL
  EXPECT_LT(st[2].second.as_real(), -1e299);
  s = parse("plugins:\n  - path: x\n    sha256: " + std::string(50'000, 'a') + "\n", &o);
  EXPECT_TRUE(contains(s.message(), "x.yaml:3: key 'sha256' must be 64 hexadecimal digits")) << s.message();
}

TEST(ConfigHardeningTest, NumberScannersKeepTheCoreSchemaTyping) {
  SettingList st = settings_of(
      "plugins:\n  - path: x\n    settings: {a: 42, b: -7, c: +3, d: 0x1F, e: 1e3, f: .5, g: 5., h: -.inf, i: .NaN,"
      " j: 1e, k: 0x, l: 1.2.3, m: '-', n: 1_000, o: 0x7fffffffffffffff}\n");
  ASSERT_EQ(st.size(), 15u);
  EXPECT_EQ(st[0].second, Value::Integer(42));
  EXPECT_EQ(st[1].second, Value::Integer(-7));
  EXPECT_EQ(st[2].second, Value::Integer(3));
  EXPECT_EQ(st[3].second, Value::Integer(31));
  EXPECT_EQ(st[4].second, Value::Real(1000));
  EXPECT_EQ(st[5].second, Value::Real(0.5));
  EXPECT_EQ(st[6].second, Value::Real(5));
  EXPECT_EQ(st[7].second.type(), ValueType::kReal);
  EXPECT_LT(st[7].second.as_real(), 0);
  EXPECT_TRUE(std::isnan(st[8].second.as_real()));
  for (size_t i = 9; i < 14; ++i) EXPECT_EQ(st[i].second.type(), ValueType::kText) << st[i].first;
  EXPECT_EQ(st[14].second, Value::Integer(INT64_MAX));
  HostOptions o;
  Status s = parse("plugins:\n  - path: x\n    settings:\n      h: 0x8000000000000000\n", &o);
  EXPECT_TRUE(contains(s.message(), "x.yaml:4: key 'h': hexadecimal integer out of range")) << s.message();
}

// An 18 KB "billion laughs" that is otherwise a valid deployment: the first database's
// module_options anchors 300 modules sharing one 300-key settings map, and 300 more
// databases alias all of it: 27 million settings once expanded.
std::string alias_bomb() {
  std::string yaml = "databases:\n  db0:\n    module_options: &m\n      mod0: &s {";
  for (int i = 0; i < 300; ++i) yaml += (i ? "," : "") + std::string("k") + std::to_string(i) + ": 1";
  yaml += "}\n";
  for (int i = 1; i < 300; ++i) yaml += "      mod" + std::to_string(i) + ": *s\n";
  for (int i = 1; i <= 300; ++i) yaml += "  db" + std::to_string(i) + ": {module_options: *m}\n";
  return yaml;
}

TEST(ConfigHardeningTest, AliasBombIsRefusedFast) {
  const std::string yaml = alias_bomb();
  ASSERT_LT(yaml.size(), 20'000u);
  HostOptions o;
  auto start = std::chrono::steady_clock::now();
  Status s = parse(yaml, &o);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kConfig);
  EXPECT_TRUE(contains(s.message(), "x.yaml:")) << s.message();
  EXPECT_TRUE(contains(s.message(), "expands to more than 100000 nodes")) << s.message();
  EXPECT_LT(seconds, 2.0);
}

TEST(ConfigHardeningTest, OrdinaryAliasesStillWork) {
  HostOptions o;
  Status s = parse("databases:\n  a: {module_options: {memory: &opts {x: 1}}}\n  b: {module_options: {memory: *opts}}\n", &o);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(o.databases["b"].module_options["memory"].at(0).second, Value::Integer(1));
}

TEST(ConfigHardeningTest, DeepNestingIsASyntaxError) {
  HostOptions o;
  Status s = parse("plugins: " + std::string(100'000, '[') + std::string(100'000, ']') + "\n", &o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kConfig);
  EXPECT_TRUE(contains(s.message(), "x.yaml:1: YAML syntax error")) << s.message();
}

TEST(ConfigHardeningTest, HugeFileIsRefusedUnread) {
  fs::path p = fs::temp_directory_path() / ("quereus_huge_" + std::to_string(getpid()) + ".yaml");
  {
    std::ofstream out(p, std::ios::binary);
    out << "plugin_dir: x\n# " << std::string(3 << 20, 'x') << "\n";
  }
  HostOptions o;
  Status s = load_config(p.string(), &o);
  fs::remove(p);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), p.string() + ": the file is larger than 1048576 bytes; refusing it");
}

// A module that refuses its options when the database opens it: the error names the
// line of that module's mapping in the deployment file.
TEST(ConfigHardeningTest, ModuleOptionErrorNamesFileAndLine) {
  const fs::path dir = fs::temp_directory_path() / ("quereus_modopt_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / "config.yaml";
  {
    std::ofstream out(file);
    out << "plugin_dir: " << QUEREUS_PLUGIN_DIR << "\n"
        << "plugins:\n"
        << "  - path: store\n"
        << "databases:\n"
        << "  main:\n"
        << "    default_module: memory\n"
        << "    module_options:\n"
        << "      store:\n"           // line 8
        << "        sync: false\n";  // no `path`: the store refuses to open
  }
  HostOptions options;
  ASSERT_TRUE(load_config(file.string(), &options).ok());
  std::shared_ptr<Registry> registry;
  std::unique_ptr<PluginLoader> loader;
  Status s = load_host_plugins(options, &registry, &loader);
  ASSERT_TRUE(s.ok()) << s.message();
  std::unique_ptr<Database> db;
  s = open_configured_database(registry, "main", options.databases["main"], &db);
  fs::remove_all(dir);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kMisuse) << s.to_string();
  EXPECT_EQ(s.raw_message().rfind(file.string() + ":8: module 'store' open of database main: ", 0), 0u)
      << s.raw_message();
  EXPECT_TRUE(contains(s.raw_message(), "'path'")) << s.raw_message();

  // A default module that is not registered names the default_module line.
  DatabaseConfig config;
  config.default_module = "nosuch";
  config.module_origins["nosuch"] = "config.yaml:6";
  s = open_configured_database(registry, "main", config, &db);
  EXPECT_EQ(s.raw_message(), "config.yaml:6: default module 'nosuch' is not registered");
}

TEST(ConfigHardeningTest, ModuleOriginsAreRecorded) {
  HostOptions o;
  ASSERT_TRUE(parse("databases:\n  main:\n    default_module: store\n    module_options:\n      memory: {}\n      store:\n"
                    "        path: /x\n",
                    &o)
                  .ok());
  const DatabaseConfig& db = o.databases["main"];
  EXPECT_EQ(db.module_origins.at("store"), "x.yaml:6");  // its mapping wins over default_module
  EXPECT_EQ(db.module_origins.at("memory"), "x.yaml:5");
}

}  // namespace
}  // namespace quereus
