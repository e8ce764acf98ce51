#!/usr/bin/env bash
# The main demo: a few values rounded into bf16 and e4m3fn, with a short rounding report.
set -euo pipefail
cd "$(dirname "$0")/.."
simprec=${BUILD_DIR:-build}/bin/simprec
values='0.1
-4.703990459442139
3.14159265358979
1e-40
65520
448.5
0x1.8p-3
-0
inf
nan'
echo "== the paper-A example: exact -4.703990459442139 and friends into bf16, nearest-even"
echo "$values" | "$simprec" round --format bf16 --rounding rne --report
echo
echo "== the same into OCP e4m3fn, saturating as cvt.rn.satfinite does"
echo "$values" | "$simprec" round --format e4m3fn --rounding rne --overflow saturate --report
echo
echo "== stochastic rounding of 0.1 into bf16, eight draws (seed 7): unbiased on average"
yes 0.1 | head -n 8 | "$simprec" round --format bf16 --rounding sr --seed 7
echo
"$simprec" formats
