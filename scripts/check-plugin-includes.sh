#!/usr/bin/env bash
# Verifies the SDK boundary: every compile command for a file under modules/ or plugins/
# (and sdk/template/, tests/sdk/) has sdk/include as its only project include directory.
# Usage: scripts/check-plugin-includes.sh <build-dir>
set -euo pipefail
build="${1:-build}"
src="$(cd "$(dirname "$0")/.." && pwd)"
db="$build/compile_commands.json"
[ -f "$db" ] || { echo "no $db (configure with CMAKE_EXPORT_COMPILE_COMMANDS)" >&2; exit 1; }
bad=0; checked=0
while IFS= read -r line; do
  case "$line" in
    *'"command"'*) cmd="$line" ;;
    *'"file"'*)
      file="${line#*\"file\": \"}"; file="${file%\"*}"
      case "$file" in
        "$src"/modules/*|"$src"/plugins/*|"$src"/sdk/template/*|"$src"/tests/sdk/*)
          checked=$((checked + 1))
          for inc in $(grep -o -- '-I *[^ "]*' <<<"$cmd" | sed 's/^-I *//'); do
            if [ "$inc" != "$src/sdk/include" ]; then
              echo "BOUNDARY VIOLATION: $file includes $inc" >&2; bad=1
            fi
          done
          if grep -q -- '-isystem' <<<"$cmd"; then echo "BOUNDARY VIOLATION: $file uses -isystem" >&2; bad=1; fi ;;
      esac ;;
  esac
done < "$db"
[ "$checked" -gt 0 ] || { echo "no plugin sources found in $db" >&2; exit 1; }
echo "$checked plugin source files see only sdk/include"
exit $bad
