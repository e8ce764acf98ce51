#!/usr/bin/env bash
# Runs the test suite of an existing build.
#   scripts/test.sh           the default tier (what CI runs)
#   scripts/test.sh heavy     the exhaustive tier (minutes)
#   scripts/test.sh all       both; GPU tests (label gpu) run only through scripts/gpu_check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
case "${1:-default}" in
  default) exec ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" -LE "gpu|heavy" ;;
  heavy)   exec ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" -L heavy ;;
  all)     exec ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" -LE gpu ;;
  *) echo "usage: scripts/test.sh [default|heavy|all]" >&2; exit 2 ;;
esac
