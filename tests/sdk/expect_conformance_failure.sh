#!/usr/bin/env bash
# The conformance suite catches a module whose cursors break the order its plans claim
# (issue 7, point 6): runs quereus-conformance on tests/sdk/badorder and requires a nonzero
# exit, FAIL lines for the ordering tests that check claims against emitted rows, and the
# summary line.
# Usage: tests/sdk/expect_conformance_failure.sh QUEREUS_CONFORMANCE BADORDER_SO
set -uo pipefail
out="$("$1" --plugin "$2" --seed 7 2>&1)"
status=$?
echo "$out"
fail() { echo "expect_conformance_failure: $1" >&2; exit 1; }
[ "$status" -eq 1 ] || fail "expected exit status 1, got $status"
grep -q "^  FAIL ordering.order_by_key: " <<<"$out" || fail "ordering.order_by_key did not fail"
grep -q "^  FAIL honesty.vt_plan_claims: .*claims ordering" <<<"$out" || fail "honesty.vt_plan_claims did not catch the claim"
grep -q "^  PASS keys.vt_duplicate_pk_constraint$" <<<"$out" || fail "the module's writes are correct and should pass keys.vt_duplicate_pk_constraint"
grep -Eq "^[0-9]+ passed, [1-9][0-9]* failed, [0-9]+ skipped$" <<<"$out" || fail "no summary line"
echo "the misbehaving plugin was caught: OK"
