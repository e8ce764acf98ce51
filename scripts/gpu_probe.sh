#!/usr/bin/env bash
# Collects the tensor-core ground truth on a GPU machine in one go: builds the probe driver with
# nvcc (no other dependency), checks the device, runs every probe, records which SASS
# instructions each probe kernel became, and packs the outputs for the trip back.
#   scripts/gpu_probe.sh OUT_DIR
# OUT_DIR receives summary.txt, sass.txt and tc_probe_results.tar.gz (split into <=15 MiB parts
# named tc_probe_results.tar.gz.part-aa, -ab, ...). Unpack with
#   cat tc_probe_results.tar.gz.part-* | tar xz
set -euo pipefail
out=${1:?usage: gpu_probe.sh OUT_DIR}
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
nvcc=${NVCC:-nvcc}
command -v "$nvcc" >/dev/null || nvcc=/usr/local/cuda/bin/nvcc

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv | tee "$out/device.txt"
"$nvcc" --version | tail -2 | tee -a "$out/device.txt"

"$nvcc" -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I"$repo" \
  "$repo/kernels/probe_main.cu" -o "$work/tc_probe"
if command -v cuobjdump >/dev/null; then
  cuobjdump -sass "$work/tc_probe" |
    awk '/Function :/ {fn=$3} /(HMMA|HGMMA|QGMMA|IMMA|MUFU|F2FP|F2F)/ {match($0, /(HMMA|HGMMA|QGMMA|IMMA|MUFU|F2FP|F2F)[A-Z0-9_.]*/); print fn, substr($0, RSTART, RLENGTH)}' |
    sort | uniq -c > "$out/sass.txt" || true
fi

mkdir -p "$work/results"
command -v cuobjdump >/dev/null && cuobjdump -sass "$work/tc_probe" > "$work/results/tc_probe.sass" || true
"$work/tc_probe" --out "$work/results"
cp "$work/results/summary.txt" "$out/summary.txt"
tar -C "$work/results" -czf "$work/tc_probe_results.tar.gz" .
split -b 15m -a 2 "$work/tc_probe_results.tar.gz" "$out/tc_probe_results.tar.gz.part-"
ls -la "$out"
