#!/usr/bin/env bash
# The template module builds out of tree against the installed SDK only (issue 7, points 3
# and 4): installs the `sdk` component of BUILD_DIR into a scratch prefix, copies the
# template AS INSTALLED (<prefix>/share/quereus/sdk/template) to a scratch directory outside
# the source tree, builds it with its own CMakeLists.txt (find_package(QuereusSDK),
# quereus_sdk_add_plugin), then loads the result in the host from a YAML file and runs SQL
# on it: the template's logic tests, a quick smoke session and the installed conformance
# suite.
# Usage: tests/sdk/template_out_of_tree.sh BUILD_DIR
set -euo pipefail
SRC="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="$(cd "$1" && pwd)"
WORK="$(mktemp -d /tmp/quereus-template-XXXXXX)"
trap 'rm -rf "$WORK"' EXIT

cmake --install "$BUILD" --prefix "$WORK/prefix" --component sdk >/dev/null
cmake --install "$BUILD" --prefix "$WORK/prefix" --component conformance >/dev/null
test -f "$WORK/prefix/share/quereus/sdk/template/template_module.cc" \
  || { echo "the SDK install lacks share/quereus/sdk/template"; exit 1; }

# 1. Copy: the module's folder, nothing else from the tree.
cp -r "$WORK/prefix/share/quereus/sdk/template" "$WORK/acme"
case "$WORK/acme" in "$SRC"/*) echo "scratch directory is inside the source tree"; exit 1 ;; esac

# 2-3. Build against the installed SDK only (no path into the source or build tree).
cmake -S "$WORK/acme" -B "$WORK/acme/build" -G Ninja -DCMAKE_PREFIX_PATH="$WORK/prefix" \
  -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$WORK/acme/build" >/dev/null
test -f "$WORK/acme/build/plugins/template.so"
test -f "$WORK/acme/build/plugins/template.plugin.json"
if grep -q -- "-I$SRC\|-I$BUILD" "$WORK/acme/build/build.ninja"; then
  echo "the out-of-tree build reaches into the source or build tree"; exit 1
fi

# 4. Load it from a YAML file (mem from the main build, as every deployment has it).
cp "$BUILD/lib/quereus/mem.so" "$BUILD/lib/quereus/mem.plugin.json" "$WORK/acme/build/plugins/"
cat > "$WORK/deploy.yaml" <<YAML
plugin_dir: $WORK/acme/build/plugins
plugins:
  - path: template
databases:
  main:
    default_module: template
YAML
"$BUILD/bin/quereus-logic" --config "$WORK/deploy.yaml" "$SRC/tests/logic-template"

cat > "$WORK/smoke.sqllogic" <<'SQL'
create table kv (k text primary key, v integer) using template;
insert into kv values ('b', 2), ('a', 1), ('c', 3);
select k, v from kv where k >= 'b';
→ [{"k":"b","v":2},{"k":"c","v":3}]
select detail from query_plan('select v from kv where k = ''a''') where node_type = 'TableScan';
→ [{"detail":"SCAN main.kv (template pk point seek)"}]
SQL
"$BUILD/bin/quereus-logic" --config "$WORK/deploy.yaml" "$WORK/smoke.sqllogic"

# 5. The conformance suite, as installed, on the out-of-tree build: every group passes or
# skips only for a capability the template does not declare (committed reads, persistence).
"$WORK/prefix/bin/quereus-conformance" --plugin "$WORK/acme/build/plugins/template.so" --module template \
  > "$WORK/conformance.txt" 2>&1 || { cat "$WORK/conformance.txt"; echo "the conformance suite failed the template"; exit 1; }
tail -1 "$WORK/conformance.txt"
grep -Eq '^[0-9]+ passed, 0 failed, [0-9]+ skipped$' "$WORK/conformance.txt"
if grep '^  SKIP' "$WORK/conformance.txt" | grep -v "does not declare"; then
  echo "a conformance group skipped for another reason than an undeclared capability"; exit 1
fi
# 6. The README's step 4 verbatim in spirit: the whole install, a deploy.yaml naming the
# plugin by its path (plugin_dir left to the installed default, where mem is), the
# installed quereus and quereus-logic.
cmake --install "$BUILD" --prefix "$WORK/prefix" >/dev/null
cat > "$WORK/readme-deploy.yaml" <<YAML
plugins:
  - path: $WORK/acme/build/plugins/template.so
databases:
  main:
    default_module: template
YAML
out=$("$WORK/prefix/bin/quereus" --config "$WORK/readme-deploy.yaml" --format csv \
  -c "create table t (k integer primary key, v text)" -c "insert into t values (1, 'x')" -c "select * from t")
[ "$out" = $'k,v\n1,x' ] || { echo "the installed quereus did not run the template as the README says: $out"; exit 1; }
"$WORK/prefix/bin/quereus-logic" --config "$WORK/readme-deploy.yaml" --module template "$WORK/smoke.sqllogic"
echo "template built out of tree against the installed SDK, loaded from YAML, queried and conformance-tested: OK"
