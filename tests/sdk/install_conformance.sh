#!/usr/bin/env bash
# The installed conformance suite is self-contained (issue 7, point 4, the conformance part):
# installs the `sdk` and `conformance` components of BUILD_DIR into a scratch prefix, runs
# the installed quereus-conformance on the in-tree mem plugin, then builds a small program
# OUT of the source tree against find_package(QuereusSDK) and quereus::conformance that runs
# the suite through the library API.
# Usage: tests/sdk/install_conformance.sh BUILD_DIR
set -euo pipefail
BUILD="$(cd "$1" && pwd)"
WORK="$(mktemp -d /tmp/quereus-conformance-install-XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
PREFIX="$WORK/prefix"

cmake --install "$BUILD" --prefix "$PREFIX" --component sdk >/dev/null
cmake --install "$BUILD" --prefix "$PREFIX" --component conformance >/dev/null
test -x "$PREFIX/bin/quereus-conformance"
test -f "$PREFIX/include/quereus/conformance.hpp"
LIB="$(find "$PREFIX" -name 'libquereus-conformance.so' | head -1)"
test -n "$LIB"

# Only the conformance API is exported (the engine inside stays hidden).
if nm -D --defined-only "$LIB" | c++filt | grep -E ' [TD] ' | grep -v 'quereus::conformance::' | grep -q 'quereus::'; then
  echo "libquereus-conformance exports engine symbols:" >&2
  nm -D --defined-only "$LIB" | c++filt | grep -E ' [TD] ' | grep -v 'quereus::conformance::' | grep 'quereus::' | head >&2
  exit 1
fi

# The installed runner, on the build's mem plugin.
"$PREFIX/bin/quereus-conformance" --plugin "$BUILD/lib/quereus/mem.so" --group load,crud --seed 3 | tail -1 \
  | grep -Eq '^[0-9]+ passed, 0 failed, 0 skipped$' || { echo "installed runner failed" >&2; exit 1; }

# A program of a module author's, built against the installed package only.
mkdir -p "$WORK/app"
cat > "$WORK/app/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(conformance_app CXX)
set(CMAKE_CXX_STANDARD 20)
find_package(QuereusSDK 0.1 REQUIRED COMPONENTS conformance)
add_executable(app app.cc)
target_link_libraries(app PRIVATE quereus::conformance)
CMAKE
cat > "$WORK/app/app.cc" <<'CC'
#include <quereus/conformance.hpp>
#include <iostream>
int main(int argc, char** argv) {
  quereus::conformance::Options o;
  o.plugin_path = argv[1];
  o.groups = {"load", "keys"};
  o.seed = 5;
  quereus::conformance::StreamReporter out(std::cout);
  quereus::conformance::Summary s = quereus::conformance::run_suite(o, out);
  std::cout << quereus::conformance::summary_line(s) << "\n";
  return argc == 2 && s.failed == 0 && s.passed > 0 ? 0 : 1;
}
CC
cmake -S "$WORK/app" -B "$WORK/app/build" -G Ninja -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$WORK/app/build" >/dev/null
LD_LIBRARY_PATH="$(dirname "$LIB")" "$WORK/app/build/app" "$BUILD/lib/quereus/mem.so" | tail -1
echo "installed conformance library and runner: OK"
