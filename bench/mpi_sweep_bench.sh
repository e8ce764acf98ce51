#!/usr/bin/env bash
# The speed-up of a sweep shared among 2 MPI ranks over 1 process, each with one thread
# (-j 1), measured in the same run; a single process with 2 threads (-j 2) beside them.
# The records of every run are checked to be the same. The speed-up is one process's wall
# time over the run's; cpu/wall is how many cores the run had on average (a machine busy with
# other work gives fewer than asked for, and then no speed-up can show).
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
# "WALL CPU": seconds of wall clock, and CPU seconds (user + system) of the command and the
# processes it waited for (mpirun waits for its ranks).
measure() {
  local TIMEFORMAT='%R %U %S' t
  t=$({ time "$@" >/dev/null 2>&1; } 2>&1)
  awk '{ print $1, $2 + $3 }' <<<"$t"
}
read -r one one_cpu < <(measure "$simprec" run "$tmp/sweep.toml" --quiet -j 1 --out "$tmp/one")
read -r two_ranks two_ranks_cpu < <(measure mpirun -n 2 --oversubscribe --bind-to none \
  --mca btl self,vader --mca btl_vader_single_copy_mechanism none \
  "$simprec" run "$tmp/sweep.toml" --quiet -j 1 --out "$tmp/ranks")
read -r two_threads two_threads_cpu < <(measure "$simprec" run "$tmp/sweep.toml" --quiet -j 2 \
  --out "$tmp/threads")
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
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
printf 'sweep: %d cases, shape [4, 1, %d, 64], nproc %d, load average %s\n' "$cases" "$n" \
  "$(nproc)" "$(cut -d' ' -f1 /proc/loadavg)"
printf '%-18s %8s %8s %9s %9s\n' run wall_s cpu_s speed-up cpu/wall
row() { printf '%-18s %8.2f %8.2f %8sx %9s\n' "$1" "$2" "$3" "$(ratio "$one" "$2")" "$(ratio "$3" "$2")"; }
row "1 process, -j 1" "$one" "$one_cpu"
row "2 MPI ranks, -j 1" "$two_ranks" "$two_ranks_cpu"
row "1 process, -j 2" "$two_threads" "$two_threads_cpu"
