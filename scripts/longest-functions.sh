#!/usr/bin/env bash
# Lists the longest functions of the engine (or of the paths given), longest first, with
# Universal Ctags (apt: universal-ctags): lines, file:line, name.
# Usage: scripts/longest-functions.sh [-n N] [PATH...]   (default: the top 20 of host/engine)
set -eu
cd "$(dirname "$0")/.."
n=20
if [ "${1:-}" = "-n" ]; then n="$2"; shift 2; fi
paths=("$@")
[ ${#paths[@]} -gt 0 ] || paths=(host/engine)
ctags -R -x --_xformat='%{end} %{line} %{input} %{scope}::%{name}' --kinds-C++=f \
    --languages=C++ --fields=+e "${paths[@]}" 2>/dev/null |
  awk '$1 ~ /^[0-9]+$/ { name = $4; sub(/^-::/, "", name); gsub(/__anon[0-9a-f]*::/, "", name); printf "%5d %s:%s %s\n", $1 - $2 + 1, $3, $2, name }' | sort -rn | head -n "$n"
