#!/usr/bin/env bash
# Runs each libFuzzer target of a build made with -DSIMPREC_FUZZ=ON for a bounded time, starting
# from its seed corpus fuzz/corpus/<target>/ (and dictionary fuzz/<target>.dict where there is
# one). Any crash, sanitizer finding, leak, timeout or out-of-memory fails the run; the input
# that caused it is kept in $FUZZ_ARTIFACTS (default: <build>/fuzz-artifacts) and printed.
#   scripts/fuzz.sh [SECONDS_EACH] [TARGET...]      (default 20 seconds, every target)
#   BUILD_DIR   the build folder (default build-sanitize); FUZZ_JOBS  targets at once (default nproc)
# New inputs the fuzzer finds go to a scratch corpus in the build folder, not into the repo.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build-sanitize}
seconds=${1:-20}
shift || true
artifacts=${FUZZ_ARTIFACTS:-$build_dir/fuzz-artifacts}
mkdir -p "$artifacts"

targets=("$@")
if ((${#targets[@]} == 0)); then
  for source in fuzz/*_fuzz.cpp; do targets+=("$(basename "$source" .cpp)"); done
fi
# One target per core at a time: each fuzzer is a single process, so on two cores two run side by
# side in the time of one (CI's budget); each writes its own log, printed once it has finished.
jobs=${FUZZ_JOBS:-$(nproc)}
fuzz_one() {
  local target=$1 binary=$build_dir/bin/$1 scratch=$build_dir/fuzz-corpus/$1
  mkdir -p "$scratch"
  local options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024
                 -artifact_prefix="$artifacts/$target-" -print_final_stats=1)
  [[ -f fuzz/$target.dict ]] && options+=(-dict="fuzz/$target.dict")
  "$binary" "${options[@]}" "$scratch" "fuzz/corpus/$target" >"$artifacts/$target.log" 2>&1
}
for target in "${targets[@]}"; do
  if [[ ! -x $build_dir/bin/$target ]]; then
    echo "fuzz: $build_dir/bin/$target is missing (configure $build_dir with -DSIMPREC_FUZZ=ON)" >&2
    exit 2
  fi
done
pids=()
for target in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= jobs)); do wait -n || true; done
  echo "fuzz: $target for $seconds s"
  fuzz_one "$target" &
  pids+=($!)
done
failed=0
for i in "${!targets[@]}"; do
  target=${targets[$i]}
  if ! wait "${pids[$i]}"; then
    echo "fuzz: $target FAILED; its log ($artifacts/$target.log) ends:" >&2
    tail -n 40 "$artifacts/$target.log" >&2
    failed=1
  else
    echo "fuzz: $target:"
    grep -E "^stat::number_of_executed_units|^Done [0-9]+ runs" "$artifacts/$target.log" || true
  fi
done
exit $failed
