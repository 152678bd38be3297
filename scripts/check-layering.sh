#!/usr/bin/env bash
# Checks the engine's include direction (docs/architecture.md): every folder of
# host/engine/ has a rank, and a file may include headers of its own folder and of folders
# ranked below it, never above. Known back edges are listed, one `file -> header` per line,
# in scripts/layering-exceptions.txt: that list may only shrink. A back edge not on it
# fails the check; an entry no longer needed is reported so it can be taken off.
#
# Usage: scripts/check-layering.sh            (from anywhere; exit 1 on a new back edge)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root/host/engine"
# Lowest first. ddl/declarative/ is part of ddl.
order=(common types io eval parser catalog functions planner rewrite optimizer runtime transaction write ddl maintained main)
declare -A rank
for i in "${!order[@]}"; do rank[${order[$i]}]=$i; done
exceptions="$root/scripts/layering-exceptions.txt"
declare -A allowed=() used=()
if [ -f "$exceptions" ]; then
  while IFS= read -r line; do
    line="${line%%#*}"
    line="$(echo "$line" | xargs)"
    [ -n "$line" ] && allowed["$line"]=1
  done <"$exceptions"
fi
bad=0 edges=0 files=0
while IFS= read -r f; do
  folder="${f%%/*}"
  if [ -z "${rank[$folder]+x}" ]; then
    echo "LAYERING: $f is in folder '$folder', which has no rank (add it to scripts/check-layering.sh)" >&2
    bad=1
    continue
  fi
  files=$((files + 1))
  while IFS= read -r inc; do
    to="${inc%%/*}"
    [ -n "${rank[$to]+x}" ] || continue  # not an engine header (quereus/abi.h, …)
    edges=$((edges + 1))
    if [ "${rank[$to]}" -gt "${rank[$folder]}" ]; then
      key="$f -> $inc"
      if [ -n "${allowed[$key]+x}" ]; then
        used["$key"]=1
      else
        echo "LAYERING VIOLATION: $key ($folder may not include $to)" >&2
        bad=1
      fi
    fi
  done < <(sed -n 's/^#include "\([a-z_]*\/[a-z_/]*\.h\)".*/\1/p' "$f")
done < <(find . -name '*.h' -o -name '*.cc' | sed 's|^\./||' | sort)
stale=0
for key in "${!allowed[@]}"; do
  if [ -z "${used[$key]+x}" ]; then
    echo "no longer needed (take it off scripts/layering-exceptions.txt): $key"
    stale=$((stale + 1))
  fi
done
echo "$files files, $edges engine includes, ${#used[@]} listed back edges, $stale stale entries"
echo "order: ${order[*]}"
exit $bad
