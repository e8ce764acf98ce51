#!/usr/bin/env bash
# Installs what simprec needs from Debian's packages (only what is missing) and builds it.
# Idempotent and non-interactive; run as root on a fresh Debian machine.
#   BUILD_DIR   build folder (default: build)
#   SIMPREC_CMAKE_ARGS  extra arguments for cmake
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")/.."  # the checkout, also when run through a link to it

packages=(
  build-essential cmake ninja-build pkg-config git
  libmpfr-dev libgmp-dev liblzma-dev libboost-dev libeigen3-dev
  libtomlplusplus-dev libcli11-dev nlohmann-json3-dev librandom123-dev libdlpack-dev tao-pegtl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  gnuplot-nox python3
  pybind11-dev python3-dev python3-numpy python3-pytest python3-torch
  python3-pip python3-venv  # pip install . and the wheel's check (scripts/package_check.sh)
  libomp-dev  # OpenMP for clang (GCC's libgomp comes with build-essential)
  libopenmpi-dev openmpi-bin  # simprec run shared among MPI ranks (optional: builds without)
  python3-matplotlib  # the plots of examples/python/paper_a_training.py
  python3-scipy  # its verdict's intervals and tests
  clang libclang-rt-dev  # the sanitizer build and the libFuzzer targets of scripts/test.sh
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

build_dir=${BUILD_DIR:-build}
# shellcheck disable=SC2086
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release ${SIMPREC_CMAKE_ARGS:-}
cmake --build "$build_dir" -j "$(nproc)"
echo "setup: built into $build_dir (the command-line tool is $build_dir/bin/simprec)"
