// Log rotation from the deployment file: `rotating_file` (by size, N files kept) and
// `daily_file` (a new file each day at hour:minute) sinks, and the keys each type refuses.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <string>

#include <unistd.h>

#include "config/config_loader.h"
#include "config/logging.h"

namespace quereus {
namespace {

namespace fs = std::filesystem;

class LogRotationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("quereus-logrot-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    (void)apply_logging(LoggingOptions{});  // back to stderr, releasing the files
    fs::remove_all(dir_);
  }
  std::string config_error(const std::string& yaml) {
    HostOptions o;
    Status s = parse_config(yaml, "x.yaml", &o);
    EXPECT_FALSE(s.ok()) << yaml;
    return s.message();
  }
  fs::path dir_;
};

TEST_F(LogRotationTest, RotatingFileKeepsMaxFilesOfMaxSize) {
  HostOptions o;
  const std::string path = (dir_ / "q.log").string();
  ASSERT_TRUE(parse_config("logging:\n  level: info\n  sinks:\n    - type: rotating_file\n      path: " + path +
                               "\n      max_size: 2048\n      max_files: 2\n",
                           "x.yaml", &o)
                  .ok());
  ASSERT_EQ(o.logging.sinks.size(), 1u);
  EXPECT_EQ(o.logging.sinks[0].type, LogSinkType::kRotatingFile);
  EXPECT_EQ(o.logging.sinks[0].max_size, 2048);
  EXPECT_EQ(o.logging.sinks[0].max_files, 2);
  ASSERT_TRUE(apply_logging(o.logging).ok());
  for (int i = 0; i < 200; ++i) spdlog::info("line {} {}", i, std::string(80, 'x'));
  spdlog::default_logger()->flush();
  EXPECT_TRUE(fs::exists(dir_ / "q.log"));
  EXPECT_TRUE(fs::exists(dir_ / "q.1.log"));
  EXPECT_TRUE(fs::exists(dir_ / "q.2.log"));
  EXPECT_FALSE(fs::exists(dir_ / "q.3.log"));
  EXPECT_LE(fs::file_size(dir_ / "q.1.log"), 2048u);
}

TEST_F(LogRotationTest, DailyFileIsNamedByTheDate) {
  HostOptions o;
  const std::string path = (dir_ / "d.log").string();
  ASSERT_TRUE(parse_config("logging:\n  level: info\n  sinks:\n    - {type: daily_file, path: " + path +
                               ", hour: 3, minute: 30, max_files: 7}\n",
                           "x.yaml", &o)
                  .ok());
  EXPECT_EQ(o.logging.sinks[0].rotation_hour, 3);
  EXPECT_EQ(o.logging.sinks[0].rotation_minute, 30);
  EXPECT_EQ(o.logging.sinks[0].max_files, 7);
  ASSERT_TRUE(apply_logging(o.logging).ok());
  spdlog::info("hello");
  spdlog::default_logger()->flush();
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) {
    const std::string name = e.path().filename().string();
    EXPECT_EQ(name.rfind("d_", 0), 0u) << name;  // d_YYYY-MM-DD.log
    ++files;
  }
  EXPECT_EQ(files, 1);
}

TEST_F(LogRotationTest, EachTypeRefusesTheKeysOfAnother) {
  EXPECT_EQ(config_error("logging:\n  sinks:\n    - {type: daily_file, path: x.log, max_size: 10}\n"),
            "x.yaml:3: key 'max_size' is not allowed for type daily_file in logging.sinks[0]");
  EXPECT_EQ(config_error("logging:\n  sinks:\n    - {type: rotating_file, path: x.log, hour: 1}\n"),
            "x.yaml:3: key 'hour' is not allowed for type rotating_file in logging.sinks[0]");
  EXPECT_EQ(config_error("logging:\n  sinks:\n    - {type: stderr, max_files: 1}\n"),
            "x.yaml:3: key 'max_files' is not allowed for type stderr in logging.sinks[0]");
  EXPECT_EQ(config_error("logging:\n  sinks:\n    - {type: rotating_file}\n"),
            "x.yaml:3: missing key 'path' in logging.sinks[0] (required for type rotating_file)");
  EXPECT_EQ(config_error("logging:\n  sinks:\n    - {type: daily_file, path: x.log, hour: 24}\n"),
            "x.yaml:3: keys 'hour' and 'minute' must make a time of day (0-23, 0-59) in logging.sinks[0]");
  EXPECT_EQ(config_error("logging:\n  sinks:\n    - {type: rotating_file, path: x.log, max_size: 0}\n"),
            "x.yaml:3: key 'max_size' must be an integer >= 1");
}

}  // namespace
}  // namespace quereus
