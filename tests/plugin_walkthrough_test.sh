#!/usr/bin/env bash
# Runs the walk-through of docs/plugins.md as it stands: the shell block after the
# `<!-- walkthrough -->` marker, against this build, installing into a temporary prefix.
#   tests/plugin_walkthrough_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
source_dir=$1 build_dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
script=$tmp/walkthrough.sh
awk '/<!-- walkthrough -->/ {armed = 1; next}
     armed && /^```sh/ {inside = 1; next}
     inside && /^```/ {exit}
     inside {print}' "$source_dir/docs/plugins.md" >"$script"
[ -s "$script" ] || { echo "no walk-through block in docs/plugins.md" >&2; exit 1; }
export SIMPREC_SOURCE=$source_dir SIMPREC_BUILD=$build_dir PREFIX=$tmp/prefix WORK=$tmp/work
export HOME=$tmp/home SIMPREC_PLUGIN_PATH=
mkdir -p "$HOME"
out=$tmp/out.txt
bash -euo pipefail -x "$script" >"$out" 2>&1 || { cat "$out"; echo "walk-through failed" >&2; exit 1; }
cat "$out"
# What the page says each step shows.
expect() { grep -q -- "$1" "$out" || { echo "walk-through output lacks: $1" >&2; exit 1; }; }
expect '^plugin cpu_reference '
expect '^torch-math,format=bf16,p_cast=bf16:rne$'
expect 'kernel attention_bf16 kind=attention-forward model=torch-math,p_cast=bf16:rne bit-exact=yes'
[ "$(grep -c '^result PASS bit-exact as claimed' "$out")" -eq 3 ] ||
  { echo "expected three bit-exact validations" >&2; exit 1; }
expect '^result DIFFERENT'
# The package works without CMake too: pkg-config's flags compile the same plugin.
PKG_CONFIG_PATH=$(dirname "$(find "$tmp/prefix" -name simprec-plugin.pc)") \
  cc -shared -fPIC -fvisibility=hidden $(PKG_CONFIG_PATH=$(dirname "$(find "$tmp/prefix" -name simprec-plugin.pc)") pkg-config --cflags simprec-plugin) \
  "$source_dir/examples/plugin/my_attention.c" -lm -o "$tmp/pc_attention.so"
"$tmp/prefix/bin/simprec" validate --plugin "$tmp/pc_attention.so" --kernel attention_bf16 \
  --generate normal --seed 4 | tail -n 1 | grep -q '^result PASS bit-exact as claimed'
echo "walk-through: ok"
