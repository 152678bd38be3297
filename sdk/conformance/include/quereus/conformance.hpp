// The module conformance suite (docs/conformance-suite.md): drives a storage-module plugin
// through the real host — the plugin loader, a Database whose default module is the one
// under test, SQL, and where a point is only visible there the host's module adapter — and
// reports one result per test, grouped.
//
//   quereus::conformance::Options opts;
//   opts.plugin_path = "build/lib/quereus/store.so";
//   opts.options_yaml = "sync: false";
//   quereus::conformance::StreamReporter out(std::cout);
//   quereus::conformance::Summary s = quereus::conformance::run_suite(opts, out);
//   return s.failed == 0 ? 0 : 1;
//
// This header is the whole public API of libquereus-conformance; it needs nothing but the
// C++ standard library.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#if defined(_WIN32)
#define QRS_CONFORMANCE_API __declspec(dllexport)
#else
#define QRS_CONFORMANCE_API __attribute__((visibility("default")))
#endif

namespace quereus::conformance {

struct Options {
  // Required: the plugin library (path to <name>.so; its <name>.plugin.json beside it).
  std::string plugin_path;
  // The module to test. Empty: the first module the plugin's manifest provides (an error
  // when it provides none).
  std::string module;
  // The module's options, a YAML mapping of scalars (`sync: false`), given as text or as a
  // file (both: the file's keys first, then the text's). The token {data_dir} in a value is
  // replaced by the test database's directory. A module that declares persistence also gets
  // `path: <that directory>` unless the options name `path`.
  std::string options_yaml;
  std::string options_file;
  // Where persistent modules keep their databases, one fresh subdirectory per test. Empty:
  // a temporary directory, removed at the end.
  std::string data_dir;
  // The seed of the randomized groups (printed). 0: one derived from the clock.
  uint64_t seed = 0;
  // Groups to run, by name or number ("ordering", "4"). Empty: all.
  std::vector<std::string> groups;
};

enum class Outcome { kPass, kFail, kSkip };

struct TestResult {
  std::string group;
  std::string test;
  Outcome outcome = Outcome::kPass;
  // kFail: what failed (the statement, expected vs got); kSkip: why.
  std::string message;
};

struct GroupInfo {
  int number = 0;
  std::string name;
  std::string title;
};

// Receives the suite's progress. run_suite calls it synchronously, on the calling thread,
// in this order: begin, then per selected group group_begin and one test_done per test; or
// fatal (once) when setup fails, possibly after begin. Implementations must not throw.
class QRS_CONFORMANCE_API Reporter {
 public:
  virtual ~Reporter();
  // Before anything runs: the plugin, the module and the seed.
  virtual void begin(const std::string& plugin, const std::string& module, uint64_t seed) = 0;
  virtual void group_begin(const GroupInfo& group) = 0;
  virtual void test_done(const TestResult& result) = 0;
  // A setup failure that stops the suite (the plugin cannot be loaded, …).
  virtual void fatal(const std::string& message) = 0;
};

// Prints `== 4 ordering: Ordering and ranges`, then `  PASS name`, `  FAIL name: message`,
// `  SKIP name: reason` per test, and finally `N passed, N failed, N skipped`.
class QRS_CONFORMANCE_API StreamReporter : public Reporter {
 public:
  explicit StreamReporter(std::ostream& out) : out_(out) {}
  void begin(const std::string& plugin, const std::string& module, uint64_t seed) override;
  void group_begin(const GroupInfo& group) override;
  void test_done(const TestResult& result) override;
  void fatal(const std::string& message) override;

 private:
  std::ostream& out_;
};

struct Summary {
  int passed = 0;
  int failed = 0;   // a fatal setup error counts as one failure
  int skipped = 0;
};

// The groups, in the order they run.
QRS_CONFORMANCE_API std::vector<GroupInfo> groups();

// Runs the selected groups and reports every test. Never throws.
// Each test gets a fresh Registry with the plugin loaded again and a fresh Database (for a
// persistent module, a fresh directory under data_dir). A plugin that crashes the process
// takes the suite with it: run untrusted plugins in a child process.
// Side effect: the host's logging is set to warnings and errors on stderr.
// Thread safety: not for concurrent calls (it loads plugins and configures logging).
// REQUIRES: options.plugin_path names a plugin library with its sidecar manifest (otherwise
// reporter.fatal and one failure).
QRS_CONFORMANCE_API Summary run_suite(const Options& options, Reporter& reporter);

// `N passed, N failed, N skipped` — the runner's last line.
QRS_CONFORMANCE_API std::string summary_line(const Summary& summary);

}  // namespace quereus::conformance
