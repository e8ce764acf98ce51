#!/usr/bin/env bash
# The wheel as a user installs it: `pip wheel .` made from an existing build folder, installed
# into a new virtual environment, and the Python test suite run there against the installed
# package (its simprec, its console script `simprec`), never against build/python.
#   BUILD_DIR  the build folder (default: build), built already (scripts/setup.sh)
# Writes BUILD_DIR/package_check/: the wheel, the environment (venv/) and log.txt, every command
# that ran and its output. Needs PyPI for the build backend, scikit-build-core (pyproject.toml).
#
# The environment is made with --system-site-packages from Debian's /usr/bin/python3: it sees
# Debian's numpy, pytest and torch (python3-torch) but no simprec. torch from PyPI is too large
# to download for every CI run, and without torch a third of the suite (simprec.torch, the
# recorders, the training example) could not run; this way the whole suite runs against the
# wheel. What a clean environment adds -- the wheel's own dependencies resolved from PyPI --
# is what `pip install .` in the README does.
set -euo pipefail
cd "$(dirname "$0")/.."
source_dir=$PWD
build_dir=$(realpath "${BUILD_DIR:-build}")
work=$build_dir/package_check
rm -rf "$work"
mkdir -p "$work"
log=$work/log.txt
: >"$log"

run() {
  echo "+ $*" | tee -a "$log"
  "$@" >>"$log" 2>&1 || {
    status=$?
    tail -n 40 "$log" >&2
    echo "package_check: '$*' failed ($status); the whole log: $log" >&2
    exit "$status"
  }
}

started=$SECONDS
# scikit-build-core configures the folder with its own install prefix (a temporary folder) and
# SKBUILD variables; they are put back as they were once the wheel is made.
old_prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build_dir/CMakeCache.txt")
run /usr/bin/python3 -m venv --system-site-packages "$work/venv"
venv=$work/venv
# The wheel from BUILD_DIR itself, compiling nothing that is built already: the interpreter,
# pybind11 and the FindPython module are the ones the folder was configured with (no hints,
# no backport, no build environment on CMake's search path), so its cache stays as it was.
# The build backend is installed into this environment, always at the same path, rather than
# into a new build environment of pip's: scikit-build-core starts a build folder's cache
# afresh when its own location changes.
run "$venv/bin/pip" install "scikit-build-core>=0.10"
run "$venv/bin/pip" wheel --no-deps --no-build-isolation --wheel-dir "$work" \
  --config-settings=build-dir="$build_dir" --config-settings=cmake.python-hints=false \
  --config-settings=backport.find-python=0 --config-settings=search.site-packages=false \
  "$source_dir"
wheel=$(ls "$work"/simprec-*.whl)
run cmake -S "$source_dir" -B "$build_dir" -DCMAKE_INSTALL_PREFIX="$old_prefix" -U "SKBUILD*"
run "$venv/bin/pip" install --no-index "$wheel"
echo "package_check: wheel built and installed in $((SECONDS - started)) s" | tee -a "$log"

# cmake --install's copy: the package in PREFIX/lib/python3.X/site-packages, running the tool
# in PREFIX/bin.
prefix=$work/prefix
run cmake --install "$build_dir" --prefix "$prefix"
site=$(echo "$prefix"/lib/python3.*/site-packages)
run env PYTHONPATH="$site" /usr/bin/python3 -c "
import simprec, simprec.__main__ as m
assert simprec.__file__ == '$site/simprec/__init__.py', simprec.__file__
assert str(m.cli_path()) == '$prefix/bin/simprec', m.cli_path()"
run env PYTHONPATH="$site" /usr/bin/python3 -m simprec --version

# From a folder of its own, so that nothing of the checkout is on the path but the tests and
# examples/python (the training example's modules, as the build tree's suite has them).
cd "$work"
run env -u PYTHONPATH "$venv/bin/simprec" --version
run env SIMPREC_CLI="$venv/bin/simprec" SIMPREC_SOURCE_DIR="$source_dir" \
  SIMPREC_INSTALLED_PREFIX="$venv" PYTHONPATH="$source_dir/examples/python" \
  "$venv/bin/python" -m pytest -q -rs -p no:cacheprovider "$source_dir/python/tests"
echo "package_check: $(grep -E '^[0-9]+ (passed|failed)' "$log" | tail -n 1)" \
  "in $((SECONDS - started)) s; log: $log" | tee -a "$log"
