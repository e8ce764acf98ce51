#!/usr/bin/env bash
# Runs each libFuzzer target of a build made with -DSIMPREC_FUZZ=ON for a bounded time, starting
# from its seed corpus fuzz/corpus/<target>/ (and dictionary fuzz/<target>.dict where there is
# one). Any crash, sanitizer finding, leak, timeout or out-of-memory fails the run; the input
# that caused it is kept in $FUZZ_ARTIFACTS (default: <build>/fuzz-artifacts) and printed.
#   scripts/fuzz.sh [SECONDS_EACH] [TARGET...]      (default 20 seconds, every target)
#   BUILD_DIR   the build folder (default build-sanitize)
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
failed=0
for target in "${targets[@]}"; do
  binary=$build_dir/bin/$target
  if [[ ! -x $binary ]]; then
    echo "fuzz: $binary is missing (configure $build_dir with -DSIMPREC_FUZZ=ON)" >&2
    exit 2
  fi
  scratch=$build_dir/fuzz-corpus/$target
  mkdir -p "$scratch"
  options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024
           -artifact_prefix="$artifacts/$target-" -print_final_stats=1)
  [[ -f fuzz/$target.dict ]] && options+=(-dict="fuzz/$target.dict")
  echo "fuzz: $target for $seconds s"
  if ! "$binary" "${options[@]}" "$scratch" "fuzz/corpus/$target" > "$artifacts/$target.log" 2>&1; then
    echo "fuzz: $target FAILED; its log ($artifacts/$target.log) ends:" >&2
    tail -n 40 "$artifacts/$target.log" >&2
    failed=1
  else
    grep -E "^stat::number_of_executed_units|^Done [0-9]+ runs" "$artifacts/$target.log" || true
  fi
done
exit $failed
