#!/usr/bin/env bash
# What `cmake --install` and the Debian package put on a machine works from there:
#   1. installs BUILD_DIR into a scratch prefix; the installed quereus finds its plugins in
#      <prefix>/lib/quereus, runs the quickstart and a persistent database with the installed
#      example configuration, and the man page, bash completion, licence and the
#      conformance runner are in place;
#   2. (when cpack and dpkg exist) builds the .deb, installs it with dpkg into a clean
#      directory tree (its own dpkg database: `dpkg --root`), runs the same from there and
#      removes it again (nothing of it may stay); checks its dependencies resolve on this
#      system (apt-get --simulate) when apt has package lists.
# Usage: install_test.sh BUILD_DIR
set -euo pipefail
BUILD="$(cd "$1" && pwd)"
WORK="$(mktemp -d /tmp/quereus-install-XXXXXX)"
trap 'rm -rf "$WORK"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# check_tree ROOT: the installed layout under ROOT (a prefix) works.
check_tree() {
  local root="$1"
  for f in bin/quereus bin/quereus-conformance lib/quereus/mem.so lib/quereus/mem.plugin.json \
           lib/quereus/store.so lib/quereus/store.plugin.json lib/quereus/sample.so \
           share/quereus/config/quickstart.yaml share/quereus/config/persistent.yaml \
           share/man/man1/quereus.1 share/bash-completion/completions/quereus \
           share/doc/quereus/LICENSE share/doc/quereus/CHANGELOG.md include/quereus/abi.h; do
    [ -e "$root/$f" ] || fail "$root/$f is not installed"
  done
  # Plugins come from the prefix, not from the build tree.
  local out
  out=$("$root/bin/quereus" -c .plugins)
  [[ "$out" == *"$root/lib/quereus/mem.so"* ]] || fail "installed quereus did not load $root/lib/quereus/mem.so: $out"
  [[ "$out" != *"$BUILD"* ]] || fail "installed quereus loaded plugins from the build tree: $out"
  # The quickstart.
  out=$("$root/bin/quereus" --config "$root/share/quereus/config/quickstart.yaml" --format csv \
    -c "create table t (a integer primary key, b text)" -c "insert into t values (1, 'one')" -c "select * from t")
  [ "$out" = $'a,b\n1,one' ] || fail "quickstart: $out"
  # A persistent database with the installed example configuration, reopened.
  export QUEREUS_DATA="$WORK/data-$(basename "$root")"
  "$root/bin/quereus" --config "$root/share/quereus/config/persistent.yaml" \
    -c "create table kept (a integer primary key, b text)" -c "insert into kept values (7, 'seven')" >/dev/null
  out=$("$root/bin/quereus" --config "$root/share/quereus/config/persistent.yaml" --format csv -c "select * from kept")
  [ "$out" = $'a,b\n7,seven' ] || fail "persistent database did not come back: $out"
  "$root/bin/quereus" --config "$root/share/quereus/config/with-sample.yaml" -c "select fnv1a('x')" >/dev/null \
    || fail "with-sample.yaml did not load the sample plugin"
  # The installed conformance runner on the installed mem plugin.
  "$root/bin/quereus-conformance" --plugin "$root/lib/quereus/mem.so" --group load,crud --seed 3 | tail -1 \
    | grep -Eq '^[0-9]+ passed, 0 failed' || fail "the installed conformance runner failed"
  if command -v man >/dev/null; then
    MANWIDTH=80 man -l "$root/share/man/man1/quereus.1" 2>/dev/null | grep -q "\.dump" || fail "the man page does not render"
  fi
  bash -n "$root/share/bash-completion/completions/quereus" || fail "bash completion does not parse"
}

# 1. cmake --install
cmake --install "$BUILD" --prefix "$WORK/prefix" >/dev/null
check_tree "$WORK/prefix"
echo "ok: cmake --install"

# 2. The Debian package.
if command -v cpack >/dev/null && command -v dpkg >/dev/null && command -v dpkg-deb >/dev/null; then
  (cd "$WORK" && cpack --config "$BUILD/CPackConfig.cmake" -G DEB -B "$WORK/pkg" >"$WORK/cpack.log" 2>&1) \
    || { cat "$WORK/cpack.log" >&2; fail "cpack -G DEB"; }
  deb=$(ls "$WORK"/pkg/*.deb | head -1)
  [ -n "$deb" ] || fail "cpack made no .deb"
  depends=$(dpkg-deb -f "$deb" Depends)
  for lib in libedit libyaml-cpp libleveldb; do
    [[ "$depends" == *"$lib"* ]] || fail "the package does not depend on $lib: $depends"
  done
  mkdir -p "$WORK/root/var/lib/dpkg/info" "$WORK/root/var/lib/dpkg/updates"
  touch "$WORK/root/var/lib/dpkg/status"
  # Dependencies are this system's libraries (checked below), not the empty tree's.
  dpkg --root="$WORK/root" --force-depends --force-not-root --force-script-chrootless -i "$deb" \
    >"$WORK/dpkg.log" 2>&1 || { cat "$WORK/dpkg.log" >&2; fail "dpkg -i $deb"; }
  dpkg --root="$WORK/root" -s quereus | grep -q "^Status: install ok installed" || fail "dpkg does not list quereus as installed"
  check_tree "$WORK/root/usr"
  dpkg --root="$WORK/root" --force-not-root --force-script-chrootless -r quereus >"$WORK/dpkg.log" 2>&1 \
    || { cat "$WORK/dpkg.log" >&2; fail "dpkg -r quereus"; }
  left=$(find "$WORK/root" -path "$WORK/root/var" -prune -o -type f -print | head -5)
  [ -z "$left" ] || fail "dpkg -r left files behind: $left"
  if [ -n "$(ls /var/lib/apt/lists 2>/dev/null | grep -v lock | head -1)" ]; then
    apt-get install --simulate -qq "$deb" >"$WORK/apt.log" 2>&1 || { cat "$WORK/apt.log" >&2; fail "apt cannot install $deb"; }
  fi
  echo "ok: $(basename "$deb") (Depends: $depends)"
fi
