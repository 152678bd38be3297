#!/usr/bin/env bash
# Quick start, command 1: install what is missing, build, and start the interactive
# SQL shell on config/quickstart.yaml (embedded `mem` module as the default).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec build/bin/quereus --config config/quickstart.yaml "$@"
