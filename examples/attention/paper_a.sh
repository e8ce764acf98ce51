#!/bin/bash
# Paper A ("Why Low-Precision Transformer Training Fails"): the biased rounding of P.V when score
# rows repeat their max, on repeated-maximum inputs with concentrated attention and values of a
# common sign (V ~ N(-1, 0.25)). 32 independent draws; bias and its standard error across draws.
# Usage: examples/attention/paper_a.sh [SIMPREC] [OUTDIR]
set -euo pipefail
SIMPREC=${1:-simprec}
OUT=${2:-/tmp/simprec-paper-a}
GEN="--generate repeated-max --shape 32,1,256,64 --seed 1 --backward"
mkdir -p "$OUT"
echo "== paper-a: bias of O and D, per-site trace, attribution"
"$SIMPREC" attention $GEN --preset paper-a --trace --attribute --no-baseline --out "$OUT/paper-a"
echo "== paper-a with beta-rowmax (beta 2, eps 1e-3, as in paper A's code)"
"$SIMPREC" attention $GEN --preset paper-a --mitigation beta-rowmax:2 --no-baseline --out "$OUT/paper-a-beta2"
echo "== paper-a with beta-rowmax, beta 3"
"$SIMPREC" attention $GEN --preset paper-a --mitigation beta-rowmax:3 --no-baseline --out "$OUT/paper-a-beta3"
echo "== paper-a with stochastic rounding of the O sites (16 random bits)"
"$SIMPREC" attention $GEN --preset paper-a --mitigation sr-o:16 --no-baseline --out "$OUT/paper-a-sr-o"
echo "== fa2 on the same inputs"
"$SIMPREC" attention $GEN --preset fa2 --trace --attribute --no-baseline --out "$OUT/fa2"
