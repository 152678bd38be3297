#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine is missing (apt, as root) and builds the
# project into build/ (executables in build/bin, plugins in build/lib/quereus).
# Usage: scripts/setup.sh [extra cmake args...]
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(g++ cmake ninja-build ccache pkg-config
  libboost-dev libboost-filesystem-dev libyaml-cpp-dev libleveldb-dev libspdlog-dev libfmt-dev
  nlohmann-json3-dev libssl-dev libsqlite3-dev libgtest-dev libgmock-dev libabsl-dev
  libedit-dev libcli11-dev libcsv-dev libutf8proc-dev python3 dpkg-dev file)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "==> installing: ${missing[*]}" >&2
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

JOBS="${QUEREUS_JOBS:-2}"
echo "==> configuring build/" >&2
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
echo "==> building with -j${JOBS}" >&2
cmake --build build -j "${JOBS}"
