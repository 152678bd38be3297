// quereus-conformance: runs the module conformance suite on a plugin (docs/conformance-suite.md).
//
//   quereus-conformance --plugin path/to/module.so [--module NAME] [--options YAML|FILE]
//                       [--group G[,G…]]… [--seed N] [--data-dir DIR] [--list]
//
// Prints one line per group and per test (PASS / FAIL / SKIP with the reason) and ends with
// `N passed, N failed, N skipped`. Exit status: 0 when nothing failed, 1 on a failure,
// 2 on a usage error.
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <string>

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
               "  --list            list the groups and exit\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  qc::Options o;
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
  qc::StreamReporter reporter(std::cout);
  qc::Summary s = qc::run_suite(o, reporter);
  std::cout << qc::summary_line(s) << std::endl;
  return s.failed == 0 ? 0 : 1;
}
