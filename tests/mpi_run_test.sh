#!/usr/bin/env bash
# simprec run shared among MPI ranks on this machine: 2 and 3 ranks give the records one
# process gives (timing aside), and a rank killed mid-run costs only its unfinished cases,
# which the next run computes.
#   tests/mpi_run_test.sh SIMPREC MPIEXEC
set -euo pipefail
simprec=$1 mpiexec=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Open MPI refuses root unless told; CI and containers run as root.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# More ranks than cores, shared memory between them only, one thread per rank.
ranks() {
  local n=$1
  shift
  "$mpiexec" -n "$n" --oversubscribe --bind-to none --mca btl self,vader \
    --mca btl_vader_single_copy_mechanism none -x OMP_NUM_THREADS=1 "$simprec" "$@"
}
# Same records by case id, without the timing, and not empty.
same_records() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import json, sys
def records(folder):
    out = {}
    for line in open(folder + "/results.jsonl"):
        record = json.loads(line)
        record.pop("elapsed_s")
        record.pop("crc32", None)  # the line's checksum covers the timing
        out[record["case_id"]] = record
    return out
a, b = records(sys.argv[1]), records(sys.argv[2])
if not a or a != b:
    sys.exit(f"{sys.argv[1]} ({len(a)} records) and {sys.argv[2]} ({len(b)}) differ")
PY
}
lines() { if [ -f "$1/results.jsonl" ]; then wc -l <"$1/results.jsonl"; else echo 0; fi; }

cat >"$tmp/e.toml" <<'TOML'
name = "mpi"
[inputs.repeated]
generator = "repeated-max"
shape = [4, 1, 64, 16]
seed = 3
[implementations.baseline]
preset = "baseline-lp"
[implementations.flash]
preset = "paper-a"
tile = "16x16"
[sweep]
seed = [1, 2, 3, 4, 5, 6, 7, 8]
mitigations = [[], ["beta-rowmax"]]
[analysis]
baseline = "baseline"
TOML
"$simprec" run "$tmp/e.toml" --quiet -j 1 --out "$tmp/one"
total=$(lines "$tmp/one")
echo "one process: $total cases"

for n in 2 3; do
  ranks "$n" run "$tmp/e.toml" --quiet -j 1 --out "$tmp/ranks$n"
  same_records "$tmp/one" "$tmp/ranks$n"
  echo "$n ranks: the same $total records"
done

# Kill rank 1 (-9) once some records are written; mpirun then ends the job. The ranks are
# told from other processes by a variable they inherit.
export MPI_RUN_TEST_JOB=$tmp
ranks 3 run "$tmp/e.toml" --quiet -j 1 --out "$tmp/part" &
launcher=$!
rank_one() {
  local pid
  for pid in $(pgrep -f "simprec run $tmp/e.toml" || true); do
    if { tr '\0' '\n' <"/proc/$pid/environ"; } 2>/dev/null | grep -qx OMPI_COMM_WORLD_RANK=1 &&
      { tr '\0' '\n' <"/proc/$pid/environ"; } 2>/dev/null | grep -qx "MPI_RUN_TEST_JOB=$tmp"; then
      echo "$pid"
      return
    fi
  done
}
victim=
for _ in $(seq 1 1000); do
  [ -n "$victim" ] || victim=$(rank_one)
  [ -n "$victim" ] && [ "$(lines "$tmp/part")" -ge 3 ] && break
  sleep 0.01
done
[ -n "$victim" ] || { echo "rank 1 not found" >&2; exit 1; }
kill -9 "$victim"
if wait "$launcher"; then
  echo "mpirun succeeded although rank 1 was killed" >&2
  exit 1
fi
kept=$(/usr/bin/python3 -c '
import json, sys
n = 0
for line in open(sys.argv[1]):
    try:
        json.loads(line); n += 1
    except ValueError:
        pass
print(n)' "$tmp/part/results.jsonl")
echo "killed rank 1: $kept of $total records kept"
if [ "$kept" -lt 3 ] || [ "$kept" -ge "$total" ]; then
  echo "expected between 3 and $((total - 1)) records kept; the test proves nothing" >&2
  exit 1
fi
ranks 2 run "$tmp/e.toml" -j 1 --out "$tmp/part" >"$tmp/resume.txt" 2>&1 ||
  { cat "$tmp/resume.txt"; exit 1; }
grep -q "resuming: $kept of $total cases already in" "$tmp/resume.txt" ||
  { cat "$tmp/resume.txt"; echo "the resumed run did not keep the $kept records" >&2; exit 1; }
same_records "$tmp/one" "$tmp/part"
echo "resumed with 2 ranks: the same $total records"
