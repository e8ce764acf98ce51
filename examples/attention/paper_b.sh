#!/bin/bash
# Paper B ("Is Flash Attention Stable?"): deviation of flash attention from the fp64 reference
# against standard attention in the same precision, over sequence lengths and tile sizes.
# Usage: examples/attention/paper_b.sh [SIMPREC] [OUTDIR]
# Prints one line per (preset, N, tile): flash max|err|, standard max|err| and their ratio, the
# same for rms; the standard attention is the preset's own sites run without tiling
# (stats.json "baseline"), and for fa2 also the baseline-lp preset.
set -euo pipefail
SIMPREC=${1:-simprec}
OUT=${2:-/tmp/simprec-paper-b}
mkdir -p "$OUT"
printf "%-9s %5s %7s %11s %11s %7s %11s %11s %7s\n" preset N tile flash_max std_max ratio flash_rms std_rms ratio
for preset in fa2 flash-lp; do
  for tile in 64x64 128x128; do
    for n in 256 512 1024 2048 4096; do
      dir="$OUT/$preset-$n-$tile"
      "$SIMPREC" attention --generate normal --shape 4,1,$n,64 --seed 1 --preset $preset --tile $tile \
        --out "$dir" > /dev/null
      python3 - "$dir/stats.json" "$preset" "$n" "$tile" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
f, b = s["metrics"]["o"], s["baseline"]["o"]
print("%-9s %5s %7s %11.4g %11.4g %7.3f %11.4g %11.4g %7.3f" % (sys.argv[2], sys.argv[3], sys.argv[4],
      f["max_abs"], b["max_abs"], f["max_abs"] / b["max_abs"], f["rms"], b["rms"], f["rms"] / b["rms"]))
PY
    done
  done
done
