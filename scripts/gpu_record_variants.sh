#!/usr/bin/env bash
# The GPU side of the attention variants in one run (docs/attention_variants.md): records every
# case of simprec.recordings.variants on PyTorch's backends, keeps the Triton code Inductor
# generated for the FlexAttention cases (score_mod and mask_mod arithmetic, as compiled) and
# measures the device's tanh at every fp32 argument (scripts/device_functions/measure_tanh.py).
# Writes OUT/variants.tar.gz (the recording folder), OUT/inductor.tar.gz and OUT/tanh/*.
#   scripts/gpu_record_variants.sh OUT [--cases NAME,...]
set -euo pipefail
out=$1; shift
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
export PYTHONPATH=$repo/python TORCHINDUCTOR_CACHE_DIR=$work/inductor
mkdir -p "$out"
python3 "$repo/scripts/record_attention_variants.py" "$work/variants" "$@" 2>&1 | tee "$out/record.log" | grep -v '^  ' || true
tar -C "$work" -czf "$out/variants.tar.gz" variants
(cd "$work" && find inductor -name '*.py' -o -name '*.best_config' | tar -czf "$out/inductor.tar.gz" -T -)
if [ "${SIMPREC_SKIP_TANH:-0}" != 1 ]; then
  python3 "$repo/scripts/device_functions/measure_tanh.py" "$out/tanh" 2>&1 | tail -5
  rm -f "$out/tanh/tanh.cu"
fi
