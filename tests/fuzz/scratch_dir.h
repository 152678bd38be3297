// A fuzzer process's scratch directory (tests/fuzz): <tmp>/<prefix>-<pid>, created once and
// removed when the process exits. Never destroyed itself: the exit handler that removes the
// directory runs after the statics die.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace quereus::fuzz {

inline const std::string& scratch_dir(const char* prefix) {
  static const std::string& dir = *[prefix] {
    auto* d = new std::string(
        (std::filesystem::temp_directory_path() / (std::string(prefix) + "-" + std::to_string(getpid()))).string());
    std::filesystem::create_directories(*d);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    });
    return d;
  }();
  return dir;
}

}  // namespace quereus::fuzz
