#!/usr/bin/env bash
# A/B of flash_bench builds on one GPU, in one run: for each build, its --check, its --digest
# against the recorded one (tests/data/h100_flash_digest.txt: a change that should keep
# the outputs must keep every line), and its bf16 forward benchmark on uniform and on repeated
# keys; then each build's table (scripts/flash_bench_table.py), with each mitigation's time
# against its own build's plain kernel. This is how the kernel variants in docs/gpu_kernels.md
# ("Tried and not kept") were measured. Builds are made elsewhere (the GPU machine may lack the
# host libraries), e.g. one per variant of kernels/flash/:
#   nvcc -std=c++17 -O3 -lineinfo -gencode=arch=compute_90a,code=sm_90a -I. \
#     kernels/flash/flash_bench.cu -o build-exp/fb_a
#   scripts/flash_ab.sh OUT_DIR build-exp/fb_a build-exp/fb_b ...
# writes OUT_DIR/<build name>.jsonl and <build name>_rep.jsonl and prints the tables.
set -uo pipefail
if [[ $# -lt 2 ]]; then
  echo "usage: scripts/flash_ab.sh OUT_DIR FLASH_BENCH..." >&2
  exit 2
fi
out=$1
shift
mkdir -p "$out"
recorded="$(dirname "$0")/../tests/data/h100_flash_digest.txt"
names=()
for bench in "$@"; do
  name=$(basename "$bench")
  names+=("$name")
  echo "=== $name"
  timeout 120 "$bench" --check > "$out/$name.check.txt" 2>&1
  echo "check: exit $?, $(grep -c ' ok$' "$out/$name.check.txt") comparisons ok"
  if timeout 120 "$bench" --digest > "$out/$name.digest.txt" 2>&1 &&
    diff <(grep '^d=' "$recorded") <(grep '^d=' "$out/$name.digest.txt") > "$out/$name.digest.diff"; then
    echo "digest: every line as recorded"
  else
    echo "digest: lines differing from the recorded ones: $(grep -c "^>" "$out/$name.digest.diff")"
  fi
  timeout 300 "$bench" --iters 20 > "$out/$name.jsonl" || echo "bench: exit $?"
  timeout 300 "$bench" --iters 20 --repeated-keys > "$out/${name}_rep.jsonl" || echo "bench: exit $?"
done
# Each build's times, with each mitigation's cost against its plain kernel on the same inputs.
for name in "${names[@]}"; do
  echo "== $name"
  for path in "$out/$name.jsonl" "$out/${name}_rep.jsonl"; do
    PYTHONPATH="$(dirname "$0")/../python" python3 "$(dirname "$0")/flash_bench_table.py" "$path"
  done
done
