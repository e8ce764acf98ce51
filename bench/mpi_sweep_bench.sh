#!/usr/bin/env bash
# The speed-up of a sweep shared among 2 MPI ranks over 1 process, each with one thread
# (-j 1), measured in the same run; a single process with 2 threads (-j 2) beside them.
# The records of every run are checked to be the same.
#   bench/mpi_sweep_bench.sh [SIMPREC] [CASE_N]   (defaults: build/bin/simprec, 256)
set -euo pipefail
simprec=$(realpath "${1:-build/bin/simprec}")
n=${2:-256}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cat >"$tmp/sweep.toml" <<TOML
name = "mpi_bench"
[inputs.repeated]
generator = "repeated-max"
shape = [4, 1, $n, 64]
seed = 3
[implementations.baseline]
preset = "baseline-lp"
[implementations.flash]
preset = "paper-a"
tile = "64x64"
[sweep]
seed = [1, 2, 3, 4, 5, 6, 7, 8]
mitigations = [[], ["beta-rowmax"]]
[analysis]
baseline = "baseline"
TOML
seconds() {  # seconds the command took (wall clock)
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { print b - a }'
}
one=$(seconds "$simprec" run "$tmp/sweep.toml" --quiet -j 1 --out "$tmp/one")
two_ranks=$(seconds mpirun -n 2 --oversubscribe --bind-to none --mca btl self,vader \
  --mca btl_vader_single_copy_mechanism none "$simprec" run "$tmp/sweep.toml" --quiet -j 1 \
  --out "$tmp/ranks")
two_threads=$(seconds "$simprec" run "$tmp/sweep.toml" --quiet -j 2 --out "$tmp/threads")
records() { /usr/bin/python3 -c '
import json, sys
rs = {}
for line in open(sys.argv[1] + "/results.jsonl"):
    r = json.loads(line); r.pop("elapsed_s"); rs[r["case_id"]] = r
print(json.dumps(rs, sort_keys=True))' "$1"; }
[ "$(records "$tmp/one")" = "$(records "$tmp/ranks")" ] &&
  [ "$(records "$tmp/one")" = "$(records "$tmp/threads")" ] ||
  { echo "the runs' records differ" >&2; exit 1; }
cases=$(wc -l <"$tmp/one/results.jsonl")
printf 'sweep: %d cases, shape [4, 1, %d, 64], nproc %d\n' "$cases" "$n" "$(nproc)"
printf '1 process, -j 1:   %6.2f s\n' "$one"
printf '2 MPI ranks, -j 1: %6.2f s   speed-up %.2fx\n' "$two_ranks" "$(awk -v a="$one" -v b="$two_ranks" 'BEGIN { print a / b }')"
printf '1 process, -j 2:   %6.2f s   speed-up %.2fx\n' "$two_threads" "$(awk -v a="$one" -v b="$two_threads" 'BEGIN { print a / b }')"
