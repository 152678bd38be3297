#!/usr/bin/env bash
# Builds the parser fuzzer with clang into build-fuzz/ and runs it for N seconds
# (default 60) seeded with the statements of tests/logic and the reference corpus.
# Usage: scripts/fuzz.sh [seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-60}"
for p in clang libclang-rt-14-dev; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends clang libclang-rt-14-dev >/dev/null
    break
  fi
done
CXX=clang++ cmake -S tests/fuzz -B build-fuzz -G Ninja >/dev/null
cmake --build build-fuzz -j "${QUEREUS_JOBS:-2}"
seeds=build-fuzz/seeds
rm -rf "$seeds"; mkdir -p "$seeds"
n=0
for f in tests/logic/*.sqllogic ../shared/conformance/quereus-logic/*.sqllogic; do
  [ -f "$f" ] || continue
  grep -v -e '^→' -e '^--' -e '^\s*$' "$f" | split -l 6 - "$seeds/$(basename "$f")." && n=$((n + 1))
done
echo "==> fuzzing the parser for ${secs}s (seeds from $n files)" >&2
log=build-fuzz/fuzz.log
status=0
build-fuzz/parser_fuzz -max_total_time="$secs" -timeout=10 -max_len=4096 -print_final_stats=1 \
  -dict=tests/fuzz/sql.dict \
  -artifact_prefix=build-fuzz/ "$seeds" >"$log" 2>&1 || status=$?
grep -E "stat::number_of_executed_units|Done [0-9]+ runs|ERROR|SUMMARY" "$log" || true
if [ "$status" -ne 0 ]; then
  echo "parser fuzzer found a problem (exit $status); see $log and build-fuzz/crash-*" >&2
  exit 1
fi
