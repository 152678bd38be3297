// quereus-conformance: runs the module conformance suite on a plugin (docs/conformance-suite.md).
//
//   quereus-conformance --plugin path/to/module.so [--module NAME] [--options YAML|FILE]
//                       [--group G[,G…]]… [--seed N] [--data-dir DIR] [--expect-skips FILE]
//                       [--list]
//
// Prints one line per group and per test (PASS / FAIL / SKIP with the reason) and ends with
// `N passed, N failed, N skipped`. Exit status: 0 when nothing failed, 1 on a failure (or,
// with --expect-skips, on a skip the file does not list), 2 on a usage error.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "quereus/conformance.hpp"

namespace qc = quereus::conformance;

namespace {

int usage(const std::string& why) {
  if (!why.empty()) std::cerr << "quereus-conformance: " << why << "\n";
  std::cerr << "usage: quereus-conformance --plugin path/to/module.so [--module NAME] [--options YAML|FILE]\n"
               "                           [--group G[,G...]] [--seed N] [--data-dir DIR] [--list]\n"
               "  --plugin FILE     the plugin library (its <name>.plugin.json beside it)\n"
               "  --module NAME     the module to test (default: the first the manifest provides)\n"
               "  --options X       the module's options: a YAML mapping, inline ('sync: false') or a file\n"
               "  --group G         run only these groups (name or number; repeatable, comma-separated)\n"
               "  --seed N          seed of the randomized groups (default: from the clock; printed)\n"
               "  --data-dir DIR    where persistent modules keep their test databases (default: a temp dir)\n"
               "  --expect-skips F  the tests (group.test, one per line, # comments) this module is\n"
               "                    expected to skip; any other skip fails the run\n"
               "  --list            list the groups and exit\n";
  return 2;
}

// Passes every event on, and keeps the names (group.test) of the tests that skipped.
class SkipRecorder : public qc::Reporter {
 public:
  explicit SkipRecorder(qc::Reporter& inner) : inner_(inner) {}
  void begin(const std::string& plugin, const std::string& module, uint64_t seed) override {
    inner_.begin(plugin, module, seed);
  }
  void group_begin(const qc::GroupInfo& group) override { inner_.group_begin(group); }
  void test_done(const qc::TestResult& result) override {
    if (result.outcome == qc::Outcome::kSkip) skipped.insert(result.group + "." + result.test);
    inner_.test_done(result);
  }
  void fatal(const std::string& message) override { inner_.fatal(message); }
  std::set<std::string> skipped;

 private:
  qc::Reporter& inner_;
};

// Reads an expected-skip list: one group.test per line; blank lines and # comments ignored.
bool read_expected_skips(const std::string& path, std::set<std::string>* out) {
  std::ifstream in(path);
  if (!in) return false;
  std::string line;
  while (std::getline(in, line)) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) line.pop_back();
    size_t b = line.find_first_not_of(" \t");
    if (b != std::string::npos) out->insert(line.substr(b));
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  qc::Options o;
  std::string expect_skips;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) return false;
      *out = argv[++i];
      return true;
    };
    std::string v;
    if (a == "--help" || a == "-h") return usage("");
    if (a == "--list") {
      for (const qc::GroupInfo& g : qc::groups()) std::cout << g.number << " " << g.name << ": " << g.title << "\n";
      return 0;
    }
    if (a == "--plugin") {
      if (!value(&o.plugin_path)) return usage("--plugin needs a value");
    } else if (a == "--module") {
      if (!value(&o.module)) return usage("--module needs a value");
    } else if (a == "--options") {
      if (!value(&v)) return usage("--options needs a value");
      std::error_code ec;
      if (std::filesystem::is_regular_file(v, ec)) o.options_file = v;
      else o.options_yaml = v;
    } else if (a == "--group") {
      if (!value(&v)) return usage("--group needs a value");
      size_t start = 0;
      while (start <= v.size()) {
        size_t comma = v.find(',', start);
        std::string g = v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (!g.empty()) o.groups.push_back(g);
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    } else if (a == "--seed") {
      if (!value(&v)) return usage("--seed needs a value");
      try {
        o.seed = std::stoull(v);
      } catch (const std::exception&) {
        return usage("--seed must be a number");
      }
    } else if (a == "--expect-skips") {
      if (!value(&expect_skips)) return usage("--expect-skips needs a value");
    } else if (a == "--data-dir") {
      if (!value(&o.data_dir)) return usage("--data-dir needs a value");
    } else {
      return usage("unknown argument '" + a + "'");
    }
  }
  if (o.plugin_path.empty()) return usage("--plugin is required");
  for (const std::string& g : o.groups) {
    bool known = false;
    for (const qc::GroupInfo& info : qc::groups()) known = known || g == info.name || g == std::to_string(info.number);
    if (!known) return usage("unknown group '" + g + "' (see --list)");
  }
  std::set<std::string> expected;
  if (!expect_skips.empty() && !read_expected_skips(expect_skips, &expected))
    return usage("cannot read the expected-skip list " + expect_skips);
  qc::StreamReporter stream(std::cout);
  SkipRecorder reporter(stream);
  qc::Summary s = qc::run_suite(o, reporter);
  std::cout << qc::summary_line(s) << std::endl;
  if (expect_skips.empty()) return s.failed == 0 ? 0 : 1;
  // The gate: a capability that regresses to a skip fails; a listed test that now runs is
  // only reported (take it off the list).
  std::vector<std::string> unexpected, now_running;
  for (const std::string& t : reporter.skipped)
    if (!expected.count(t)) unexpected.push_back(t);
  for (const std::string& t : expected)
    if (!reporter.skipped.count(t)) now_running.push_back(t);
  if (!now_running.empty()) {
    std::cout << "listed in " << expect_skips << " but no longer skipped (take them off the list):\n";
    for (const std::string& t : now_running) std::cout << "  " << t << "\n";
  }
  if (!unexpected.empty()) {
    std::cout << "skipped but not listed in " << expect_skips << " (a capability regressed?):\n";
    for (const std::string& t : unexpected) std::cout << "  " << t << "\n";
  }
  return s.failed == 0 && unexpected.empty() ? 0 : 1;
}
