// quereus-logic: runs .sqllogic files (FORMAT.md) and prints one line per file.
//
//   quereus-logic [--module NAME] [--config FILE] [--plugin-dir DIR] [--pass-list FILE]
//                 [--write-pass-list FILE] [--time-limit SECONDS] [--verbose] PATH...
//
// Exit status: 0 when every file passed (with --pass-list: every listed file passed),
// 1 otherwise, 2 for usage, configuration or I/O errors.
#include <cstdlib>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "config/config_loader.h"
#include "config/logging.h"
#include "logic_runner.h"

namespace {

constexpr const char* kUsage =
    "usage: quereus-logic [options] PATH...\n"
    "  PATH                    a .sqllogic file or a directory of them (searched recursively)\n"
    "  --module NAME           default module of each file's database (default: the config's\n"
    "                          databases.main.default_module, else memory)\n"
    "  --config FILE           deployment YAML: plugins to load, plugin_dir, logging\n"
    "  --plugin-dir DIR        where plugins (mem.so, …) are found; overrides the config\n"
    "  --pass-list FILE        ratchet: fail only when a file listed in FILE fails\n"
    "  --write-pass-list FILE  write the files that passed to FILE (sorted)\n"
    "  --time-limit SECONDS    per-file time limit, checked between blocks (default 15)\n"
    "  --verbose               print every block's outcome\n";

int usage_error(const std::string& message) {
  std::cerr << "quereus-logic: " << message << "\n" << kUsage;
  return 2;
}

int fatal(const quereus::Status& s) {
  std::cerr << "Error: " << s.to_string() << "\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace quereus;
  logic::RunnerOptions options;
  std::string module, config, plugin_dir, pass_list, write_list, time_limit;
  const std::map<std::string, std::string*> valued = {{"--module", &module},
                                                      {"--config", &config},
                                                      {"--plugin-dir", &plugin_dir},
                                                      {"--pass-list", &pass_list},
                                                      {"--write-pass-list", &write_list},
                                                      {"--time-limit", &time_limit}};
  std::vector<std::string> paths;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (auto it = valued.find(arg); it != valued.end()) {
      if (i + 1 >= argc) return usage_error(arg + " needs a value");
      *it->second = argv[++i];
    } else if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    } else if (arg == "--verbose" || arg == "-v") {
      verbose = true;
    } else if (arg.size() > 1 && arg[0] == '-') {
      return usage_error("unknown option " + arg);
    } else {
      paths.push_back(arg);
    }
  }
  if (!time_limit.empty()) {
    char* end = nullptr;
    options.time_limit_seconds = std::strtod(time_limit.c_str(), &end);
    if (*end || options.time_limit_seconds <= 0) return usage_error("bad --time-limit '" + time_limit + "'");
  }
  if (paths.empty()) return usage_error("no PATH given");

  if (!config.empty()) {
    Status s = load_config(config, &options.host);
    if (!s.ok()) return fatal(s);
  }
  if (!plugin_dir.empty()) options.host.plugin_dir = plugin_dir;
  options.module = !module.empty() ? module : options.host.databases["main"].default_module;
  if (verbose) options.verbose = &std::cout;
  if (Status s = apply_logging(options.host.logging); !s.ok()) return fatal(s);

  std::set<std::string> listed;
  if (!pass_list.empty()) {
    if (Status s = logic::read_pass_list(pass_list, &listed); !s.ok()) return fatal(s);
  }
  std::vector<std::pair<std::string, std::string>> files;
  if (Status s = logic::collect_logic_files(paths, &files); !s.ok()) return fatal(s);

  int passed = 0, failed = 0, skipped = 0;
  std::set<std::string> passing, seen;
  std::vector<std::string> regressions, newly_passing;
  for (const auto& [path, name] : files) {
    if (verbose) std::cout << name << "\n";
    logic::FileResult r = logic::run_logic_file(path, options);
    r.file = name;
    seen.insert(name);
    const std::string score = std::to_string(r.passed) + "/" + std::to_string(r.checks);
    if (r.skipped) {
      ++skipped;
      // A listed file that no longer runs has regressed as surely as one that fails.
      if (listed.count(r.file)) regressions.push_back(r.file + " (skipped: " + r.skip_reason + ")");
      std::cout << "SKIP " << r.file << " (" << r.skip_reason << ")\n";
    } else if (r.ok()) {
      ++passed;
      passing.insert(r.file);
      if (!pass_list.empty() && !listed.count(r.file)) newly_passing.push_back(r.file);
      std::cout << "PASS " << r.file << " " << score << "\n";
    } else {
      ++failed;
      if (listed.count(r.file)) regressions.push_back(r.file);
      std::cout << "FAIL " << r.file << " " << score << " " << r.first_failure << "\n";
    }
    std::cout.flush();
  }
  for (const std::string& n : listed)
    if (!seen.count(n)) regressions.push_back(n + " (listed but not found)");

  if (!newly_passing.empty()) {
    std::cout << "newly passing (add to the pass list):\n";
    for (const std::string& n : newly_passing) std::cout << "  " << n << "\n";
  }
  if (!regressions.empty()) {
    std::cout << "regressions (listed in the pass list, now failing or skipped):\n";
    for (const std::string& n : regressions) std::cout << "  " << n << "\n";
  }
  std::cout << passed << " passed, " << failed << " failed";
  if (skipped) std::cout << ", " << skipped << " skipped";
  std::cout << std::endl;

  if (!write_list.empty()) {
    if (Status s = logic::write_pass_list(write_list, passing); !s.ok()) return fatal(s);
  }
  if (!pass_list.empty()) return regressions.empty() ? 0 : 1;
  return failed == 0 ? 0 : 1;
}
