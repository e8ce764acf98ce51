#!/usr/bin/env bash
# The GPU part of the Python package's checks, in one run on a machine with an NVIDIA GPU and a
# Python with PyTorch 2.x (and Triton): builds the package for that Python, runs the pytest
# suite, then validates PyTorch's SDPA flash backend, FlexAttention and the Triton kernel of
# examples/python/triton_flash_forward.py against simprec's emulation
# (examples/python/validate_on_gpu.py). Everything goes to OUT_DIR; OUT_DIR/summary.txt has one
# line per validation (BIT-EXACT, DIFFERENT, or NOT RUN with the reason).
#   scripts/gpu_python_check.sh [OUT_DIR]
#   PYTHON         the interpreter with torch (default: python3 on PATH)
#   BUILD_DIR      build folder (default: build-python-gpu)
#   SIMPREC_DEPS_DEBS  a folder of Debian's build dependencies as .deb files, for a machine
#                  without them (scripts/gpu_deps.sh download DIR, run on Debian)
#   SIMPREC_BUILD_ONLY=1  stop after the build (for other scripts that use the package)
# pybind11 comes from Debian's pybind11-dev or from the interpreter (pip install pybind11).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-gpu_python_out}
python=${PYTHON:-python3}
build=${BUILD_DIR:-build-python-gpu}
mkdir -p "$out" "$build"
build=$(cd "$build" && pwd)

"$python" -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())" \
  | tee "$out/environment.txt"
deps_args=()
if [ -n "${SIMPREC_DEPS_DEBS:-}" ]; then
  # Debian's build dependencies as .deb files (scripts/gpu_deps.sh download), for a machine
  # that has none installed: unpacked beside the build and found there.
  prefix="$build/deps"
  scripts/gpu_deps.sh unpack "$SIMPREC_DEPS_DEBS" "$prefix"
  lib=$prefix/usr/lib/x86_64-linux-gnu
  export PKG_CONFIG_LIBDIR=$lib/pkgconfig:$prefix/usr/share/pkgconfig PKG_CONFIG_SYSROOT_DIR=$prefix
  export PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_ALLOW_SYSTEM_LIBS=1
  export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  deps_args=("-DPKG_CONFIG_EXECUTABLE=$prefix/usr/bin/pkgconf" "-DCMAKE_PREFIX_PATH=$prefix/usr;$lib"
             "-DCMAKE_CXX_FLAGS=-isystem $prefix/usr/include -isystem $prefix/usr/include/x86_64-linux-gnu"
             "-DCMAKE_EXE_LINKER_FLAGS=-L$lib -Wl,-rpath,$lib" "-DCMAKE_SHARED_LINKER_FLAGS=-L$lib -Wl,-rpath,$lib")
fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSIMPREC_CUDA=OFF -DSIMPREC_TESTS=OFF \
  -DSIMPREC_BENCHMARKS=OFF -DPython_EXECUTABLE="$(command -v "$python")" "${deps_args[@]}" \
  >"$out/cmake.txt" 2>&1
grep "Python package ON" "$out/cmake.txt" || {
  echo "gpu_python_check: the Python package is not built (see $out/cmake.txt)" >&2
  exit 1
}
cmake --build "$build" -j "$(nproc)" --target simprec simprec-plugin-runner simprec_python \
  >"$out/build.txt"
[ "${SIMPREC_BUILD_ONLY:-0}" = 1 ] && exit 0

export PYTHONPATH="$build/python:$PWD/examples/python"
export SIMPREC_CLI="$build/bin/simprec" SIMPREC_SOURCE_DIR="$PWD"
status=0
"$python" -m pytest -q -p no:cacheprovider python/tests >"$out/pytest.txt" 2>&1 || status=$?
tail -1 "$out/pytest.txt"
"$python" examples/python/validate_on_gpu.py "$out/validations"
cp "$out/validations/summary.txt" "$out/summary.txt"
echo "pytest: exit $status ($(tail -1 "$out/pytest.txt"))" >>"$out/summary.txt"
exit $status
