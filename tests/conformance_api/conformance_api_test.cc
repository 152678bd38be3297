// libquereus-conformance through its public header only (sdk/conformance/include/quereus/
// conformance.hpp): group selection, seeds, the reporter, fatal setup errors, a persistent
// module's data directory, and a misbehaving module caught.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "quereus/conformance.hpp"

namespace qc = quereus::conformance;
namespace fs = std::filesystem;

namespace {

struct Capture : qc::Reporter {
  std::string plugin, module;
  uint64_t seed = 0;
  std::vector<std::string> groups, fatals;
  std::vector<qc::TestResult> results;
  void begin(const std::string& p, const std::string& m, uint64_t s) override {
    plugin = p;
    module = m;
    seed = s;
  }
  void group_begin(const qc::GroupInfo& g) override { groups.push_back(g.name); }
  void test_done(const qc::TestResult& r) override { results.push_back(r); }
  void fatal(const std::string& m) override { fatals.push_back(m); }
  const qc::TestResult* find(const std::string& test) const {
    for (const auto& r : results)
      if (r.test == test) return &r;
    return nullptr;
  }
};

std::string plugin(const char* name) { return std::string(QUEREUS_PLUGIN_DIR) + "/" + name + ".so"; }

TEST(ConformanceApi, GroupsAreNumberedInRunOrder) {
  std::vector<qc::GroupInfo> g = qc::groups();
  ASSERT_EQ(g.size(), 12u);
  for (size_t i = 0; i < g.size(); ++i) EXPECT_EQ(g[i].number, static_cast<int>(i) + 1);
  EXPECT_EQ(g[0].name, "load");
  EXPECT_EQ(g[4].name, "honesty");
  EXPECT_EQ(g[8].name, "persistence");
  EXPECT_EQ(g[9].name, "backing");
  EXPECT_EQ(g[10].name, "lens");
  EXPECT_EQ(g[11].name, "advertise");
}

TEST(ConformanceApi, AMissingPluginIsOneFatalFailure) {
  qc::Options o;
  o.plugin_path = "/nonexistent/dir/nothing.so";
  Capture c;
  qc::Summary s = qc::run_suite(o, c);
  EXPECT_EQ(s.failed, 1);
  EXPECT_EQ(s.passed, 0);
  ASSERT_EQ(c.fatals.size(), 1u);
  EXPECT_NE(c.fatals[0].find("nothing.so"), std::string::npos) << c.fatals[0];
  EXPECT_TRUE(c.results.empty());
  EXPECT_EQ(qc::summary_line(s), "0 passed, 1 failed, 0 skipped");
}

TEST(ConformanceApi, BadOptionsYamlIsFatal) {
  qc::Options o;
  o.plugin_path = plugin("mem");
  o.options_yaml = "[unclosed";
  Capture c;
  qc::Summary s = qc::run_suite(o, c);
  EXPECT_EQ(s.failed, 1);
  ASSERT_EQ(c.fatals.size(), 1u);
  EXPECT_NE(c.fatals[0].find("module options"), std::string::npos) << c.fatals[0];
}

TEST(ConformanceApi, AnUnknownGroupIsFatal) {
  qc::Options o;
  o.plugin_path = plugin("mem");
  o.groups = {"keys", "nosuch"};
  Capture c;
  qc::Summary s = qc::run_suite(o, c);
  EXPECT_EQ(s.failed, 1);
  ASSERT_EQ(c.fatals.size(), 1u);
  EXPECT_EQ(c.fatals[0], "unknown group 'nosuch'");
  EXPECT_TRUE(c.results.empty());
}

TEST(ConformanceApi, TheGroupFilterRunsOnlyThoseGroups) {
  qc::Options o;
  o.plugin_path = plugin("mem");
  o.module = "MEM";  // an alias, any case
  o.groups = {"keys", "7"};
  Capture c;
  qc::Summary s = qc::run_suite(o, c);
  EXPECT_EQ(c.module, "mem");
  EXPECT_EQ(c.groups, (std::vector<std::string>{"keys", "halloween"}));
  EXPECT_EQ(s.failed, 0);
  EXPECT_GT(s.passed, 5);
  for (const auto& r : c.results) EXPECT_TRUE(r.group == "keys" || r.group == "halloween") << r.group;
  EXPECT_EQ(static_cast<size_t>(s.passed + s.failed + s.skipped), c.results.size());
}

TEST(ConformanceApi, TheDefaultModuleIsTheManifestsFirst) {
  qc::Options o;
  o.plugin_path = plugin("mem");
  o.groups = {"load"};
  Capture c;
  qc::run_suite(o, c);
  EXPECT_EQ(c.module, "memory");
  EXPECT_TRUE(fs::path(c.plugin).is_absolute());
}

TEST(ConformanceApi, ASeedIsReportedAndReproducesTheRandomizedTests) {
  qc::Options o;
  o.plugin_path = plugin("mem");
  o.groups = {"honesty"};
  o.seed = 99;
  Capture a, b;
  qc::Summary sa = qc::run_suite(o, a);
  qc::Summary sb = qc::run_suite(o, b);
  EXPECT_EQ(a.seed, 99u);
  EXPECT_EQ(sa.failed, 0);
  EXPECT_EQ(sa.passed, sb.passed);
  o.seed = 0;  // from the clock, still reported
  Capture z;
  qc::run_suite(o, z);
  EXPECT_NE(z.seed, 0u);
}

TEST(ConformanceApi, APersistentModuleKeepsItsDatabasesInTheDataDir) {
  qc::Options o;
  o.plugin_path = plugin("store");
  if (!fs::exists(o.plugin_path)) GTEST_SKIP() << "store plugin not built";
  o.options_yaml = "sync: false";
  o.groups = {"persistence"};
  fs::path dir = fs::temp_directory_path() / ("qrs-conformance-api-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  o.data_dir = dir.string();
  Capture c;
  qc::Summary s = qc::run_suite(o, c);
  EXPECT_EQ(s.failed, 0);
  EXPECT_EQ(s.passed, 1);
  EXPECT_EQ(s.skipped, 0);
  EXPECT_FALSE(fs::is_empty(dir));  // a given data dir is left for inspection
  fs::remove_all(dir);
  // Without persistence the same group skips, naming the capability.
  o.plugin_path = plugin("mem");
  o.options_yaml.clear();
  o.data_dir.clear();
  Capture m;
  s = qc::run_suite(o, m);
  EXPECT_EQ(s.skipped, 1);
  ASSERT_EQ(m.results.size(), 1u);
  EXPECT_NE(m.results[0].message.find("persistent"), std::string::npos);
}

TEST(ConformanceApi, AModuleBreakingItsClaimedOrderFails) {
  qc::Options o;
  o.plugin_path = QUEREUS_BADORDER_PLUGIN;
  o.groups = {"ordering", "honesty"};
  o.seed = 3;
  Capture c;
  qc::Summary s = qc::run_suite(o, c);
  EXPECT_GT(s.failed, 0);
  const qc::TestResult* r = c.find("order_by_key");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->outcome, qc::Outcome::kFail);
  EXPECT_NE(r->message.find("select k from t order by k"), std::string::npos) << r->message;
  r = c.find("vt_plan_claims");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->outcome, qc::Outcome::kFail);
  EXPECT_NE(r->message.find("claims ordering"), std::string::npos) << r->message;
  EXPECT_NE(r->message.find("seed 3"), std::string::npos) << r->message;
}

}  // namespace
