#!/usr/bin/env bash
# Instruction mix of one flash kernel instance under Nsight Compute, per warp and key block:
# what each SASS opcode costs a mitigation, measured rather than guessed (docs/findings.md).
# Needs ncu and a GPU.
#   scripts/ncu_instruction_mix.sh FLASH_BENCH MANGLED_NAME_REGEX OUT_PREFIX [BASELINE.csv]
# e.g. scripts/ncu_instruction_mix.sh build-gpu/bin/flash_bench \
#        'wgmma_kernelINS0_7Bf16TagELb0ELi8E' /tmp/wg_sr /tmp/wg_plain.source.csv
# profiles the first launch whose mangled name matches (flash_bench's timing run, B4 H16 N4096
# d128), writes OUT_PREFIX.source.csv (per-instruction counts) and prints each opcode's count per
# warp and key block (one iteration of the key-block loop), beside BASELINE's when given.
set -euo pipefail
bench=$1 regex=$2 prefix=$3 baseline=${4:-}
ncu --kernel-name-base mangled --kernel-name "regex:$regex" --launch-count 1 \
  --section SourceCounters -o "$prefix" -f "$bench" --iters 1 > "$prefix.ncu.log"
ncu -i "$prefix.ncu-rep" --page source --csv --print-source sass > "$prefix.source.csv"
python3 - "$prefix.source.csv" $baseline <<'PY'
import collections, csv, sys

def mix(path):
    rows = list(csv.reader(open(path)))
    header, lines = rows[1], rows[2:]
    source, executed = header.index("Source"), header.index("Instructions Executed")
    counts, per_line = collections.Counter(), collections.Counter()
    for row in lines:
        n = int(row[executed] or 0)
        words = row[source].split()
        if not words or n == 0:
            continue
        opcode = words[1] if words[0].startswith("@") else words[0]
        counts[opcode.split(".")[0]] += n
        per_line[n] += 1
    # One loop iteration: the execution count that accounts for the most instructions (the
    # key-block loop's body; prologue and peeled lines run once per warp).
    iteration = max(per_line, key=lambda n: n * per_line[n])
    return {k: v / iteration for k, v in counts.items()}, iteration

mine, iteration = mix(sys.argv[1])
base = mix(sys.argv[2])[0] if len(sys.argv) > 2 else {}
print(f"per warp and key block ({iteration} warp-iterations); total {sum(mine.values()):.0f}"
      + (f", baseline {sum(base.values()):.0f}" if base else ""))
for opcode in sorted(set(mine) | set(base), key=lambda k: -mine.get(k, 0))[:30]:
    extra = f"  {mine.get(opcode, 0) - base.get(opcode, 0):+7.1f}" if base else ""
    print(f"  {opcode:10s} {mine.get(opcode, 0):7.1f}{extra}")
PY
