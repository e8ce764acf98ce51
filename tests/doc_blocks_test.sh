#!/usr/bin/env bash
# Runs every ```sh block of a page of docs/ as it stands, in order, in one shell: with the build's
# simprec first on PATH, in an empty folder where `build` is the build folder (the page's paths
# are a checkout's), and checks that the output holds each EXPECTED line fragment. PAGE#MARKER
# runs only the ```sh block that follows the line `<!-- MARKER -->`.
#   tests/doc_blocks_test.sh SOURCE_DIR BUILD_DIR PAGE[#MARKER] [EXPECTED...]
set -euo pipefail
source_dir=$1 build_dir=$2 page=${3%%#*} marker=
[[ $3 == *#* ]] && marker=${3#*#}
shift 3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
awk -v marker="<!-- $marker -->" '
  marker != "<!--  -->" && !armed { if ($0 == marker) armed = 1; next }
  /^```sh$/ {inside = 1; next}
  inside && /^```$/ {inside = 0; if (marker != "<!--  -->") exit; next}
  inside {print}' "$source_dir/$page" >"$tmp/blocks.sh"
[ -s "$tmp/blocks.sh" ] || { echo "no sh block in $page" >&2; exit 1; }
ln -s "$(cd "$build_dir" && pwd)" "$tmp/build"
export PATH="$(cd "$build_dir" && pwd)/bin:$PATH"
(cd "$tmp" && bash -euo pipefail -x blocks.sh) >"$tmp/out.txt" 2>&1 ||
  { cat "$tmp/out.txt"; echo "$page: a block failed" >&2; exit 1; }
cat "$tmp/out.txt"
for expected in "$@"; do
  grep -qF -- "$expected" "$tmp/out.txt" || { echo "$page: output lacks: $expected" >&2; exit 1; }
done
echo "$page: every block ran"
