#!/usr/bin/env bash
# Quick start, command 2: install what is missing, build, and run the whole test suite
# (unit tests, our logic tests, the conformance corpus against the committed pass list).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
echo "==> running tests" >&2
ctest --test-dir build --output-on-failure -j "${QUEREUS_JOBS:-2}"

# Every fuzzer in short form: QUEREUS_FUZZ_SECONDS each (scripts/fuzz.sh 3600 for a long run);
# QUEREUS_FUZZERS="parser codec" runs only those.
if [ "${QUEREUS_FUZZ_SECONDS:-30}" -gt 0 ]; then
  # shellcheck disable=SC2086  # a list of names
  scripts/fuzz.sh "${QUEREUS_FUZZ_SECONDS:-30}" ${QUEREUS_FUZZERS:-}
fi
