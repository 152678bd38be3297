#!/usr/bin/env bash
# Builds the fuzzers (tests/fuzz: libFuzzer + AddressSanitizer + UndefinedBehaviorSanitizer)
# with clang into build-fuzz/ and runs each for N seconds (default 60), seeded from the
# repository (SQL from tests/logic and the reference corpus, the YAML deployments, the
# plugin manifests, a few stored rows). Inputs found interesting are kept in
# build-fuzz/corpus/<fuzzer>/ across runs.
#
# Usage: scripts/fuzz.sh [seconds] [fuzzer...]
#        fuzzers: parser sql grammar grammar-store sync-apply config manifest codec
# (grammar-store: the grammar fuzzer on the store plugin, each input's database closed and
# opened again and checked; QUEREUS_GRAMMAR_FUZZ_MODULE=store. sync-apply: a peer's page,
# generated, applied to a sync-store replica; tests/fuzz/sync_apply_fuzz.cc)
#
# QUEREUS_FUZZ_PARALLEL=1 runs the fuzzers side by side instead of one after the other (the
# long runs: `QUEREUS_FUZZ_PARALLEL=1 nice scripts/fuzz.sh 3600` is one hour of each).
#
# A crash, a sanitizer report or a failed check is a finding: the script fails and names
# the input (build-fuzz/<fuzzer>-crash-*). For the SQL fuzzer a statement that runs too
# long or too large is not a finding (libFuzzer's fork mode skips it): the engine's own
# bounds (statement_timeout_ms, max_statement_memory) are off or generous by default.
# The grammar fuzzer (random schemas and statements, tests/fuzz/sql_grammar.cc) also fails on
# an INTERNAL status and on a statement that reaches its 10 s statement timeout; replay an
# input with QUEREUS_GRAMMAR_FUZZ_PRINT=1 build-fuzz/grammar_fuzz FILE to see its SQL.
# In fork mode the SQL fuzzer first runs every seed (on this 2-core machine about 40
# minutes for the ~1,900 seeds of a long run), then mutates.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-60}"
shift || true
fuzzers=("$@")
[ ${#fuzzers[@]} -gt 0 ] || fuzzers=(parser sql grammar grammar-store sync-apply config manifest codec)

# The same packages scripts/setup.sh installs, plus clang 16 and its runtime (libFuzzer):
# the engine captures structured bindings in lambdas, which clang 14 (Debian 12's default)
# cannot compile.
need=(clang-16 libclang-rt-16-dev cmake ninja-build libboost-dev libboost-filesystem-dev libyaml-cpp-dev
  libspdlog-dev libfmt-dev nlohmann-json3-dev libssl-dev libabsl-dev)
missing=()
for p in "${need[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

out=build-fuzz
CC=clang-16 CXX=clang++-16 cmake -S tests/fuzz -B "$out" -G Ninja >/dev/null
# The fuzzer's executable: grammar-store is grammar_fuzz in store mode.
binary() {
  case "$1" in
    grammar-store) echo grammar_fuzz ;;
    sync-apply) echo sync_apply_fuzz ;;
    *) echo "${1}_fuzz" ;;
  esac
}
targets=()
for f in "${fuzzers[@]}"; do
  t=$(binary "$f")
  [[ " ${targets[*]} " == *" $t "* ]] || targets+=("$t")
done
cmake --build "$out" -j "${QUEREUS_JOBS:-2}" --target "${targets[@]}"

# ---- seeds
seeds="$out/seeds"
rm -rf "$seeds"
mkdir -p "$seeds"/{parser,sql,grammar,grammar-store,sync-apply,config,manifest,codec}
n=0
for f in tests/logic/*.sqllogic ../shared/conformance/quereus-logic/*.sqllogic; do
  [ -f "$f" ] || continue
  grep -v -e '^→' -e '^--' -e '^\s*$' "$f" | split -l 6 - "$seeds/parser/$(basename "$f")." && n=$((n + 1))
done
cp "$seeds"/parser/* "$seeds/sql/" 2>/dev/null || true  # the first byte picks the schema
# The SQL fuzzer runs a dozen inputs a second and, in fork mode, reads every seed before it
# stops: a short run (CI) keeps an even sample of at most 300 seeds so it ends on time.
if [ "$secs" -le 120 ]; then
  total=$(ls "$seeds/sql" | wc -l)
  if [ "$total" -gt 300 ]; then
    step=$(( (total + 299) / 300 ))
    i=0
    for f in "$seeds"/sql/*; do
      [ $((i % step)) -eq 0 ] || rm -f "$f"
      i=$((i + 1))
    done
  fi
fi
# grammar: the input is the generator's decisions, not SQL; any bytes will do. A fixed
# sample of the SQL seeds gives it a reproducible start.
i=0
for f in "$seeds"/parser/*; do
  [ $((i % 150)) -eq 0 ] && cp "$f" "$seeds/grammar/" && cp "$f" "$seeds/grammar-store/"
  i=$((i + 1))
done
cp config/*.yaml "$seeds/config/"
# sync-apply: the input is the page generator's decisions; any bytes will do.
for i in 1 2 3 4 5 6 7 8; do seq $((i * 37)) $((i * 53)) | tr -d '\n' >"$seeds/sync-apply/digits-$i"; done
for f in modules/*/*.plugin.json plugins/*/*.plugin.json tests/sdk/*/*.plugin.json; do
  cp "$f" "$seeds/manifest/$(basename "$(dirname "$f")")-$(basename "$f")"
done
# codec: first byte 0 mod 4 = a stored row; 2 mod 8 = a sync-store row-version record; 6 mod
# 8 = a sync page (JSON); odd = a key check (see tests/fuzz/codec_fuzz.cc)
printf '\x00\x01\x00' >"$seeds/codec/row-empty"
printf '\x00\x01\x03\x00\x01\x04\x05\x01' >"$seeds/codec/row-null-int-bool"
printf '\x00\x01\x03\x03\x05hello\x04\x02\x00\xff\x06\x07{"a":1}' >"$seeds/codec/row-text-blob-json"
printf '\x00\x01\x01\x02\x00\x00\x00\x00\x00\x00\xf8\x3f' >"$seeds/codec/row-real"
printf '\x06{"changeSets":[{"siteId":"AAAAAAAAAAAAAAAAAAAAAA","transactionId":"t","hlc":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","changes":[{"type":"column","schema":"main","table":"t","hlc":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","pk":[1],"column":"a","value":{"$blob":"AAE="},"seenDelete":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"},{"type":"delete","schema":"main","table":"t","hlc":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","pk":["x",2.5,null]},{"type":"schema","schema":"main","table":"t","hlc":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","inc":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","object":"col:a","text":"a integer","born":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}],"incarnations":[["main","t","AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",{"a":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}]]}],"frontier":["AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"],"origin":{"site":"AAAAAAAAAAAAAAAAAAAAAA","after":1,"through":2}}' >"$seeds/codec/page-delta"
printf '\x06{"changeSets":[],"snapshot":{"source":"AAAAAAAAAAAAAAAAAAAAAA","after":"","next":"","done":true}}' >"$seeds/codec/page-snapshot"
printf '\x46{"type":"column","schema":"main","table":"t","hlc":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","pk":[1,"k"],"column":"a","value":{"$json":"[1]"},"seenDelete":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}' >"$seeds/codec/change-column"
printf '\x36{"changeSets":[{"siteId":"AAAAAAAAAAAAAAAAAAAAAA","siteId":5,"transactionId":"t","hlc":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","changes":[1],"changes":[{"type":"delete","type":"column","x":[{}],"schema":"main","table":"t","hlc":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","pk":[18446744073709551615],"pk":[{"$real":"NaN"}],"column":"a","value":{"$blob":"!"},"value":{"$real":"Infinity","$real":"-Infinity"}}]}],"snapshot":null,"origin":7}' >"$seeds/codec/page-repeated-members"
printf '\x02\x03\x01\x64\x00\x00\x05\x02\x02id\x01a' >"$seeds/codec/versions-fresh"
printf '\x02\x04\x01\x64\x00\x00\x05\x02\x03' >"$seeds/codec/versions-fresh-listed"
printf '\x02\x05\x00\x02\x01\x01\x64\x00\x01\x02\x00\x03\x07\x00' >"$seeds/codec/versions-compact"
printf '\x01\x13[1,{"a":2}]["x"]' >"$seeds/codec/key-json"
printf '\x01\x04P1DT2HP3W' >"$seeds/codec/key-timespan"
printf '\x01\x30\x01\x00\x00\x00\x00\x00\x00\x80\xff\xff\xff\xff\xff\xff\xff\x7f' >"$seeds/codec/key-ints"
printf '\x01\x58\x00\x00\x00\x00\x00\x00\xf8\x3f\x00\x00\x00\x00\x00\x00\xe0\x43' >"$seeds/codec/key-int-real"

fuzz_one() {
  local f="$1" corpus="$out/corpus/$1" log="$out/$1.log" rc=0
  # The grammar fuzzer runs about two inputs a second and replays its whole corpus before
  # it mutates: a short run (CI) starts from the seeds alone so that it ends on time.
  if { [ "$f" = grammar ] || [ "$f" = grammar-store ]; } && [ "$secs" -le 120 ]; then
    corpus="$out/corpus/$f-short"
    log="$out/$f-short.log"
    rm -rf "$corpus"
  fi
  local mode=""
  [ "$f" = grammar-store ] && mode=store
  mkdir -p "$corpus"
  local args=(-max_total_time="$secs" -print_final_stats=1 -artifact_prefix="$out/$f-")
  case "$f" in
    parser) args+=(-timeout=10 -max_len=4096 -dict=tests/fuzz/sql.dict) ;;
    # Fork mode: a statement that runs past -timeout or -rss_limit_mb ends that child,
    # not the run; crashes still stop it.
    sql) args+=(-fork=1 -ignore_timeouts=1 -ignore_ooms=1 -timeout=5 -rss_limit_mb=2048 -max_len=2048
                -dict=tests/fuzz/sql.dict) ;;
    # Not fork mode: every timeout is a finding (the generator writes bounded SQL; the
    # harness stops an input after 20 s and fails a statement that reaches 10 s). Inputs
    # are decisions, not text: -len_control=0 lets them be long (more statements) at once.
    grammar|grammar-store) args+=(-timeout=120 -rss_limit_mb=3072 -max_len=4096 -len_control=0) ;;
    # Each input opens a fresh LevelDB replica, applies a page (twice when it holds no schema
    # change), reopens and checks: slow per input, bounded.
    sync-apply) args+=(-timeout=60 -rss_limit_mb=2048 -max_len=2048 -len_control=0) ;;
    config) args+=(-timeout=10 -max_len=65536 -dict=tests/fuzz/yaml.dict) ;;
    manifest) args+=(-timeout=10 -max_len=8192) ;;
    codec) args+=(-timeout=10 -max_len=4096) ;;
    *) echo "unknown fuzzer '$f'" >&2; return 2 ;;
  esac
  echo "==> fuzzing $f for ${secs}s" >&2
  local attempt
  for attempt in 1 2; do
    rc=0
    QUEREUS_GRAMMAR_FUZZ_MODULE="$mode" ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" "$out/$(binary "$f")" \
      "${args[@]}" "$corpus" "$seeds/$f" >"$log" 2>&1 || rc=$?
    # LeakSanitizer's own failure at a child's exit ("has encountered a fatal error": its
    # stop-the-world tracer crashed, seen on a loaded machine) says nothing about our code
    # and names no input: run once more. A leak report ("detected memory leaks") is a finding.
    if [ "$rc" -ne 0 ] && [ "$attempt" = 1 ] && grep -q "LeakSanitizer has encountered a fatal error" "$log" &&
       ! grep -q "ERROR: LeakSanitizer: detected memory leaks\|SUMMARY: \(Address\|UndefinedBehavior\)Sanitizer" "$log"; then
      echo "[$f] LeakSanitizer failed by itself (not a finding); running again" >&2
      continue
    fi
    break
  done
  grep -E "stat::number_of_executed_units|Done [0-9]+ runs|ERROR|SUMMARY|INFO: fuzzed for" "$log" | tail -5 |
    sed "s/^/[$f] /" || true
  if [ "$rc" -ne 0 ]; then
    echo "FINDING: $f fuzzer failed (exit $rc); log $log; input(s):" >&2
    grep -ho "Test unit written to .*" "$log" | sed 's/^/  /' >&2 || ls "$out/$f"-* >&2 || true
    return 1
  fi
}

status=0
if [ "${QUEREUS_FUZZ_PARALLEL:-0}" = 1 ]; then
  pids=()
  for f in "${fuzzers[@]}"; do fuzz_one "$f" & pids+=($!); done
  for p in "${pids[@]}"; do wait "$p" || status=1; done
else
  for f in "${fuzzers[@]}"; do fuzz_one "$f" || status=1; done
fi
exit "$status"

