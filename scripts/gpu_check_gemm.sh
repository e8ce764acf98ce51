#!/usr/bin/env bash
# The GEMM part of the GPU check: records cuBLAS and _scaled_mm GEMMs (scripts/record_gemm.py)
# and F.linear forward and backward (scripts/record_linear.py) again on this GPU with PyTorch,
# and checks that every case gives the bits committed in tests/data/gemm and tests/data/linear
# (same inputs, same output digests). No build needed.
#   scripts/gpu_check_gemm.sh OUT_DIR
set -uo pipefail
out=${1:?usage: scripts/gpu_check_gemm.sh OUT_DIR}
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
export PYTHONPATH=$repo/python
status=0
python3 "$repo/scripts/record_gemm.py" "$out/gemm" > "$out/record_gemm.log" 2>&1 || status=1
python3 "$repo/scripts/record_linear.py" "$out/linear" > "$out/record_linear.log" 2>&1 || status=1
for pair in "gemm gemm" "gemm/nosplitk gemm" "linear linear"; do
  set -- $pair
  python3 -m simprec.recordings.same_recordings "$repo/tests/data/$1" "$out/$2" || status=1
done
exit $status
