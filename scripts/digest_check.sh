#!/usr/bin/env bash
# Checks that the working tree computes every bit as REVISION does: builds numerics_digest at
# REVISION (a git worktree in DIR, default /tmp/simprec-digest-base) and in BUILD_DIR (default
# build), lists the specs with REVISION's --enumerate, digests them with both, and prints the
# specs whose digests differ (exit 1 if any).
#   scripts/digest_check.sh REVISION [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
revision=${1:?usage: scripts/digest_check.sh REVISION [DIR]}
base=${2:-/tmp/simprec-digest-base}
build=${BUILD_DIR:-build}
if [ ! -d "$base" ]; then git worktree add --detach "$base" "$revision"; fi
git -C "$base" checkout --quiet --detach "$revision"
cmake -S "$base" -B "$base/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSIMPREC_CUDA=OFF \
  -DSIMPREC_PYTHON=OFF -DSIMPREC_BENCHMARKS=OFF >/dev/null
cmake --build "$base/build" --target numerics_digest
cmake --build "$build" --target numerics_digest
out=$(mktemp -d)
"$base/build/bin/numerics_digest" --enumerate >"$out/specs.txt"
"$base/build/bin/numerics_digest" "$out/specs.txt" >"$out/base.txt"
"$build/bin/numerics_digest" "$out/specs.txt" >"$out/new.txt"
echo "$(wc -l <"$out/specs.txt") specs, $(wc -l <"$out/base.txt") digests: $out"
if diff "$out/base.txt" "$out/new.txt" >"$out/diff.txt"; then
  echo "every digest equal"
else
  grep '^<' "$out/diff.txt" | cut -f1 | sort | uniq -c
  exit 1
fi
