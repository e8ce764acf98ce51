#!/usr/bin/env bash
# Runs the test suite of an existing build.
#   scripts/test.sh           every test but those needing a GPU: the default tier and the
#                             exhaustive heavy tier (about 8 minutes on 2 cores; what CI runs)
#   scripts/test.sh quick     the default tier only (seconds)
#   scripts/test.sh heavy     the heavy tier only
# Tests labelled gpu run on a GPU machine through scripts/gpu_check.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
case "${1:-all}" in
  all)   exec ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" -LE gpu ;;
  quick) exec ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" -LE "gpu|heavy" ;;
  heavy) exec ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" -L heavy ;;
  *) echo "usage: scripts/test.sh [all|quick|heavy]" >&2; exit 2 ;;
esac
