#!/usr/bin/env bash
# The installed SDK is enough to build a plugin (issue 7, point 4): installs the `sdk`
# component of BUILD_DIR into a scratch prefix, copies plugins/sample OUT of the source
# tree with a standalone CMakeLists.txt that uses only find_package(QuereusSDK), builds
# it, checks the pkg-config file, then loads the result in the host from a YAML file and
# runs the sample plugin's logic tests against it.
# Usage: tests/sdk/out_of_tree.sh BUILD_DIR
set -euo pipefail
SRC="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="$(cd "$1" && pwd)"
WORK="$(mktemp -d /tmp/quereus-sdk-XXXXXX)"
trap 'rm -rf "$WORK"' EXIT

cmake --install "$BUILD" --prefix "$WORK/prefix" --component sdk >/dev/null
test -f "$WORK/prefix/include/quereus/sdk.hpp"

mkdir -p "$WORK/sample"
cp "$SRC/plugins/sample/sample_plugin.cc" "$SRC/plugins/sample/sample.plugin.json" "$WORK/sample/"
cat > "$WORK/sample/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(sample_out_of_tree CXX)
find_package(QuereusSDK 0.1 REQUIRED)
quereus_sdk_add_plugin(sample SOURCES sample_plugin.cc MANIFEST sample.plugin.json)
quereus_embed_manifest(sample sample.plugin.json kSampleManifest)
CMAKE
cmake -S "$WORK/sample" -B "$WORK/sample/build" -G Ninja -DCMAKE_PREFIX_PATH="$WORK/prefix" \
  -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$WORK/sample/build" >/dev/null
test -f "$WORK/sample/build/plugins/sample.so"
test -f "$WORK/sample/build/plugins/sample.plugin.json"

# pkg-config sees the same headers.
PKG_CONFIG_PATH="$(dirname "$(find "$WORK/prefix" -name quereus-sdk.pc)")" pkg-config --cflags quereus-sdk \
  | grep -q -- "-I$WORK/prefix/.*include" || { echo "pkg-config: wrong include path"; exit 1; }

# The host loads the out-of-tree build from a YAML file (mem from the main build).
cp "$BUILD/lib/quereus/mem.so" "$BUILD/lib/quereus/mem.plugin.json" "$WORK/sample/build/plugins/"
cat > "$WORK/deploy.yaml" <<YAML
plugin_dir: $WORK/sample/build/plugins
plugins:
  - path: sample
YAML
"$BUILD/bin/quereus-logic" --config "$WORK/deploy.yaml" "$SRC/tests/logic-sample"
echo "out-of-tree plugin built against the installed SDK and loaded: OK"

# The trigram test plugin (a storage module with access forms and advertisements, issue
# 21) builds the same way, and runs its decomposition over mem, store and itself.
mkdir -p "$WORK/trigram"
cp "$SRC/plugins/trigram/trigram_plugin.cc" "$SRC/plugins/trigram/trigram.plugin.json" "$WORK/trigram/"
cat > "$WORK/trigram/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(trigram_out_of_tree CXX)
find_package(QuereusSDK 0.1 REQUIRED)
quereus_sdk_add_plugin(trigram SOURCES trigram_plugin.cc MANIFEST trigram.plugin.json)
quereus_embed_manifest(trigram trigram.plugin.json kTrigramManifest)
CMAKE
cmake -S "$WORK/trigram" -B "$WORK/trigram/build" -G Ninja -DCMAKE_PREFIX_PATH="$WORK/prefix" \
  -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$WORK/trigram/build" >/dev/null
cp "$BUILD/lib/quereus/mem.so" "$BUILD/lib/quereus/mem.plugin.json" "$BUILD/lib/quereus/store.so" \
  "$BUILD/lib/quereus/store.plugin.json" "$WORK/trigram/build/plugins/"
cat > "$WORK/trigram.yaml" <<YAML
plugin_dir: $WORK/trigram/build/plugins
plugins: [{path: store}, {path: trigram}]
YAML
"$BUILD/bin/quereus-logic" --module store --config "$WORK/trigram.yaml" "$SRC/tests/logic-trigram"
echo "out-of-tree trigram module built against the installed SDK and routed: OK"
