#!/usr/bin/env bash
# The main demo: the flagship experiment (examples/flash_bias.toml) reproduces, on this CPU, the
# two papers' findings about BF16 flash attention and ends with a verdict in out/flash_bias/report.md.
# Interrupt it at will: running it again resumes where it stopped.
set -euo pipefail
cd "$(dirname "$0")/.."
simprec=${BUILD_DIR:-build}/bin/simprec
echo "== one rounding, bit by bit: paper A's example value into bf16"
echo "-4.703990459442139" | "$simprec" round --format bf16 --rounding rne
echo
echo "== the flagship experiment (160 s of CPU time: 80 s or more on two cores)"
"$simprec" run examples/flash_bias.toml --out out/flash_bias
echo
echo "The full report, with tables and plots: out/flash_bias/report.md"
