#!/usr/bin/env bash
# Runs the test suite of an existing build.
#   scripts/test.sh           what CI runs: every test but those needing a GPU (the default tier
#                             and the exhaustive heavy tier, about 8 minutes on 2 cores), then
#                             `package` and `sanitize` below
#   scripts/test.sh quick     the default tier only (seconds)
#   scripts/test.sh heavy     the heavy tier only
#   scripts/test.sh package   the wheel made from the build folder, installed into a new
#                             virtual environment, and the Python suite run against it
#                             (scripts/package_check.sh; needs PyPI for the build backend)
#   scripts/test.sh sanitize  builds a second folder ($SANITIZE_BUILD_DIR, default
#                             build-sanitize) with clang, AddressSanitizer and
#                             UndefinedBehaviorSanitizer (any finding fails) and the libFuzzer
#                             targets (no Python package: an instrumented extension cannot
#                             load into an uninstrumented interpreter), runs the default tier
#                             there, then each fuzzer for
#                             $FUZZ_SECONDS (default 20) on its corpus (scripts/fuzz.sh)
# Tests labelled gpu run on a GPU machine through scripts/gpu_check.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
sanitize_dir=${SANITIZE_BUILD_DIR:-build-sanitize}

# ASan and UBSan stop at the first finding. handle_segv=0: a crash stays a SIGSEGV, as the
# plugin tests expect of their crashing plugin, rather than becoming an ASan report and exit 1.
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:abort_on_error=1:handle_segv=0:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:abort_on_error=1:print_stacktrace=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/scripts/lsan_suppressions.txt}

sanitize() {
  # Without MPI: Open MPI's runtime leaves its memory to the end of the process, which
  # LeakSanitizer reports (the default build's mpi_run test covers the MPI path).
  # shellcheck disable=SC2086
  CC=clang CXX=clang++ cmake -S . -B "$sanitize_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DSIMPREC_SANITIZE=address,undefined -DSIMPREC_FUZZ=ON -DSIMPREC_BENCHMARKS=OFF \
    -DSIMPREC_CUDA=OFF -DSIMPREC_PYTHON=OFF -DSIMPREC_MPI=OFF ${SIMPREC_CMAKE_ARGS:-}
  cmake --build "$sanitize_dir" -j "$(nproc)"
  # The longest numerics checks run in the default build only: under the sanitizers their code is
  # run by shorter tests (FloatFlash.ForwardAndBackwardBitIdenticalToSiteBySite, the other
  # DiscoverCli and DiscoverGemmCli tests, the plugin tests); the first five took 455 s of test
  # time there (the two GEMM searches 229 s), and the glibc_fp16 and descending_fp16 searches run
  # minutes on 2 cores.
  ctest --test-dir "$sanitize_dir" --output-on-failure -j "$(nproc)" -LE "gpu|heavy" \
    -E '^(FloatFlash\.Fa2BitIdenticalToSiteBySite|DiscoverCli\.FindsTheSmallStrangerBitExactly|DiscoverCli\.FindsItemsThatOnlyHelpTogether|DiscoverCli\.FindsAKeyOrderThatShowsOnlyWithItsBlockWidth|plugin_walkthrough|DiscoverGemmCli\.FindsThePromotionOfAnFp8ScaledMm|DiscoverGemmCli\.FindsTheLaunchedSplitKOfABf16Matmul)$'
  BUILD_DIR=$sanitize_dir scripts/fuzz.sh "${FUZZ_SECONDS:-20}"
}

case "${1:-all}" in
  all)
    # The Python suite (the training example's test included) runs once, in the package check,
    # against the installed wheel (the same objects as the build folder's package: the wheel is
    # made from this build).
    ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" -LE gpu \
      -E '^(python_tests|python_paper_training)$'
    BUILD_DIR=$build_dir scripts/package_check.sh
    sanitize
    ;;
  quick) exec ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" -LE "gpu|heavy" ;;
  heavy) exec ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" -L heavy ;;
  package) BUILD_DIR=$build_dir exec scripts/package_check.sh ;;
  sanitize) sanitize ;;
  *) echo "usage: scripts/test.sh [all|quick|heavy|package|sanitize]" >&2; exit 2 ;;
esac
