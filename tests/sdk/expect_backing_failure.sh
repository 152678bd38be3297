#!/usr/bin/env bash
# The conformance suite's `backing` group (SDK 1.5 backing hosts) catches a broken host and
# skips a module without the capability. Runs quereus-conformance --group backing on
#   tests/sdk/badbacking, module noisy_backing  (reports a value-identical upsert as UPDATE)
#   tests/sdk/badbacking, module torn_backing   (replace_contents is not atomic)
#   tests/sdk/badorder                           (declares no backing_host: every test SKIPs)
# and requires the failures to name the broken promise while the rest of the group passes.
# Usage: tests/sdk/expect_backing_failure.sh QUEREUS_CONFORMANCE BADBACKING_SO BADORDER_SO
set -uo pipefail
fail() { echo "expect_backing_failure: $1" >&2; exit 1; }

out="$("$1" --plugin "$2" --module noisy_backing --group backing --seed 7 2>&1)"
status=$?
echo "$out"
[ "$status" -eq 1 ] || fail "noisy_backing: expected exit status 1, got $status"
grep -q "^  FAIL backing.upsert_suppression: the same row again: expected the changes \[\], got \[UPDATE" <<<"$out" \
  || fail "noisy_backing: backing.upsert_suppression did not catch the no-op reported as UPDATE"
grep -q "^  PASS backing.replace_atomic$" <<<"$out" || fail "noisy_backing: its replace is atomic and should pass backing.replace_atomic"
grep -q "^  PASS backing.ordered_prefix_scan$" <<<"$out" || fail "noisy_backing: its prefix scan is correct"

out="$("$1" --plugin "$2" --module torn_backing --group backing --seed 7 2>&1)"
status=$?
echo "$out"
[ "$status" -eq 1 ] || fail "torn_backing: expected exit status 1, got $status"
grep -q "^  FAIL backing.replace_atomic: " <<<"$out" || fail "torn_backing: backing.replace_atomic did not catch the torn replace"
grep -q "^  FAIL backing.replace_source_failure: " <<<"$out" || fail "torn_backing: backing.replace_source_failure did not fail"
grep -q "^  PASS backing.upsert_suppression$" <<<"$out" || fail "torn_backing: its upserts are correct and should pass"

out="$("$1" --plugin "$3" --group backing --seed 7 2>&1)"
status=$?
echo "$out"
[ "$status" -eq 0 ] || fail "badorder (no backing_host): expected exit status 0 (skips are not failures), got $status"
grep -q "^  SKIP backing.upsert_suppression: the module does not declare the backing-host capability" <<<"$out" \
  || fail "badorder: the backing group was not skipped"
grep -Eq "^0 passed, 0 failed, [1-9][0-9]* skipped$" <<<"$out" || fail "badorder: expected every backing test skipped"
# Group 11: a module claiming relations that are not its tables is caught; one counting
# its own passes.
out="$("$1" --plugin "$2" --module noisy_backing --group lens --seed 7 2>&1)"
echo "$out"
grep -q "^  FAIL lens.counts_only_its_own: .*expected 2, got 4" <<<"$out" \
  || fail "noisy_backing: lens.counts_only_its_own did not catch the claimed foreign relations"
out="$("$1" --plugin "$2" --module torn_backing --group lens --seed 7 2>&1)"
echo "$out"
grep -q "^  PASS lens.counts_only_its_own$" <<<"$out" || fail "torn_backing: it counts its own tables and should pass"
grep -q "^  PASS lens.backs_its_tables$" <<<"$out" || fail "torn_backing: lens.backs_its_tables should pass"

echo "the broken backing hosts were caught and the module without the capability skipped: OK"
