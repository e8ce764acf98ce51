"""measure.py's digests against the device_math strategies, and the data file the tests read.

    /usr/bin/python3 scripts/device_functions/digest_table.py DIGESTS.npz WORK_DIR STEP [OUT.txt]

For each measured function (MEASURED below) it has build/bin/device_function_digests compute the
strategy's digest of every STEP-th chunk of 2^16 arguments (every division chunk; kept in
WORK_DIR: a second run reuses them), prints per function how many of those chunks the strategy
covers (a value for every argument) and how many of them differ from the measurement, and with
OUT.txt writes the data file of
tests/data/device_math/h200_function_digests.txt: per function, the covered chunks, the measured
digests' sum over them and 80 chunks' own digests (format in the file's header).
"""
import os
import subprocess
import sys

import numpy as np

# measure.py's name -> (strategy, function): what stands for it. "ieee" is IEEE's correctly
# rounded fp32 1.0f / x and x / y, "ptx" ex2.approx.f32 (tests/device_function_digests.hpp).
MEASURED = {
    "fm_exp": ("sm90-fast-math", "exp"), "fm_log": ("sm90-fast-math", "log"),
    "fm_exp2": ("sm90-fast-math", "exp2"), "fm_log2": ("sm90-fast-math", "log2"),
    "fm_rcp": ("sm90-fast-math", "rcp"), "fm_div": ("sm90-fast-math", "div"),
    "tr_exp": ("triton-sm90", "exp"), "tr_log": ("triton-sm90", "log"),
    "tr_exp2": ("triton-sm90", "exp2"), "tr_log2": ("triton-sm90", "log2"),
    "tr_rcp": ("triton-sm90", "rcp"), "tr_div": ("triton-sm90", "div"),
    "np_exp": ("numpy", "exp"), "np_log": ("numpy", "log"),
    "cu_exp": ("sm90", "exp"), "cu_log": ("sm90", "log"), "cu_log2": ("sm90", "log2"),
    "cu_exp2": ("ptx", "ex2.approx.f32"), "cu_rcp": ("ieee", "rcp"), "cu_div": ("ieee", "div"),
    "np_exp2": ("numpy", "exp2"), "np_log2": ("numpy", "log2"),
    "cu_tanh": ("sm90", "tanh"), "tr_tanh": ("triton-sm90", "tanh"),
}
HEADER = """\
# fp32 functions measured over every argument on an NVIDIA H200 (sm_90; CUDA 13.0's nvcc,
# Triton 3.6.0) and its host CPU (numpy 2.5.2, AVX512_SPR) by scripts/device_functions/measure.py
# (tanh: measure_tanh.py, cu_tanh and tr_tanh),
# as digests (tests/device_function_digests.hpp): chunk c holds the arguments c * 2^16 + i
# (division: the pairs c * 2^16 + i), its digest the sum modulo 2^64 of mix64(key << 32 | result).
# Written by scripts/device_functions/digest_table.py; read by device_math_measured_test and
# build/bin/device_function_digests check.
#
# function MEASURED STRATEGY FUNCTION CHUNKS SUM: chunks (FIRST-LAST[/STEP], inclusive) in which
#   the strategy has a value for every argument, and the sum of their measured digests (hex)
# sample CHUNK DIGEST: one of those chunks and its measured digest
"""


def ranges(chunks, step):
    out, start = [], None
    for i, c in enumerate(chunks):
        if start is None:
            start = c
        if i + 1 == len(chunks) or chunks[i + 1] != c + step:
            out.append(f"{start}-{c}" + (f"/{step}" if step > 1 and c > start else ""))
            start = None
    return ",".join(out)


def main():
    digests, work, step = np.load(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    tool = os.path.join(os.path.dirname(__file__), "../../build/bin/device_function_digests")
    lines = [HEADER]
    for name, (strategy, function) in MEASURED.items():
        if name not in digests:  # measured by another run (measure.py, measure_tanh.py)
            continue
        n, k = (256, 1) if function == "div" else (65536, step)
        path = os.path.join(work, f"{name}_{k}.bin")
        if not os.path.exists(path):
            subprocess.run([tool, "model", strategy, function, path + ".part", str(k)], check=True)
            os.rename(path + ".part", path)
        model = np.fromfile(path, dtype=np.uint64, count=n)
        flags = np.fromfile(path, dtype=np.uint8, offset=8 * n)
        covered = flags == 1
        measured = digests[name][:n]
        differ = np.flatnonzero(covered & (model != measured))
        print(f"{name:8} {strategy:15} {function:5} {int((flags != 2).sum()):6} of {n} chunks "
              f"computed, {int(covered.sum()):6} covered, {len(differ)} differ"
              + (f" (first {differ[:8].tolist()})" if len(differ) else ""), flush=True)
        chunks = np.flatnonzero(covered & (model == measured))
        if len(differ) or not len(chunks):
            continue
        total = int(measured[chunks].sum(dtype=np.uint64))
        lines.append(f"function {name} {strategy} {function} {ranges(chunks.tolist(), k)} "
                     f"{total:016x}\n")
        for c in chunks[np.linspace(0, len(chunks) - 1, min(80, len(chunks))).astype(int)]:
            lines.append(f"sample {c} {int(measured[c]):016x}\n")
    if len(sys.argv) > 4:
        with open(sys.argv[4], "w") as f:
            f.writelines(lines)


if __name__ == "__main__":
    main()
