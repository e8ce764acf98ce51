#!/usr/bin/env python3
"""The same bits at every x86-64 level this CPU runs: the tensor-core kernels (portable, AVX2,
AVX-512; emulation/cpu_level.hpp) computed for GEMMs of every fast-path input format (bf16, fp16,
e4m3, e5m2, mixed fp8; promotion, split-K, partial tiles, NaN and infinity among the operands)
and for an attention forward and backward whose products run through them, once per level
(SIMPREC_CPU_LEVEL), compared by digest. The baseline level's kernel is the one the default
test tier checks against the integer reference (tests/tensor_core_test.cpp); a machine with
AVX-512 checks its AVX-512 kernel, and the dispatch of the fp8 models to the AVX2 kernel, here.

    PYTHONPATH=build/python python3 scripts/check_cpu_levels.py

Prints one line per level with its digest; exit status 1 if two levels differ.
"""

import hashlib
import os
import subprocess
import sys

import numpy as np

LEVELS = ("baseline", "x86-64-v3", "x86-64-v4")
# Flags a level needs (of /proc/cpuinfo); the baseline needs none.
NEEDS = {"x86-64-v3": {"avx2", "fma", "bmi2"},
         "x86-64-v4": {"avx512f", "avx512bw", "avx512dq", "avx512vl"}}

GEMMS = (  # (numerics, input format, M, K, N)
    ("cublas-bf16", "bf16", 67, 300, 70),
    ("cublas-fp16,out=fp32", "fp16", 33, 129, 41),
    ("cublas-bf16,split_k=pieces:3", "bf16", 20, 768, 36),
    ("scaled-mm-e4m3", "e4m3fn", 45, 520, 66),
    ("scaled-mm-e4m3-fast", "e4m3fn", 45, 520, 66),
    ("scaled-mm-e4m3,out=fp32", "e4m3fn", 9, 256, 100),
)


def levels_here():
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f
                          if line.startswith("flags")), [])
    except OSError:
        flags = []
    return [lv for lv in LEVELS if NEEDS.get(lv, set()) <= set(flags)]


def operand(rng, shape, fmt, scale):
    """Values of the format, spread over many binades, a few NaN and infinity where it has them."""
    import simprec
    x = (rng.standard_normal(shape) * np.exp2(rng.integers(-6, 7, shape))).astype(np.float32)
    x = simprec.round(np.clip(x * scale, -400, 400).astype(np.float32), fmt)
    flat = x.reshape(-1)
    flat[rng.integers(0, flat.size, 2)] = 0.0
    if fmt in ("bf16", "fp16"):
        flat[rng.integers(0, flat.size)] = np.inf
    flat[rng.integers(0, flat.size)] = np.nan
    return x


def digest_here():
    """The digest of every output, at the level this process runs."""
    import simprec
    from simprec.gemm import gemm
    h = hashlib.sha256()
    rng = np.random.default_rng(2026)
    for numerics, fmt, m, k, n in GEMMS:
        a, b = operand(rng, (m, k), fmt, 8.0), operand(rng, (k, n), fmt, 8.0)
        d = gemm(a, b, numerics=numerics, threads=1)
        h.update(np.ascontiguousarray(d).view(np.uint32).tobytes())
    q, kk, v, do = (simprec.round(rng.standard_normal((1, 2, 150, 64)).astype(np.float32), "bf16")
                    for _ in range(4))
    r = simprec.attention(q, kk, v, numerics="fa2", format="bf16", causal=True, do=do,
                          threads=1)
    for name in ("o", "lse", "dq", "dk", "dv"):
        h.update(np.ascontiguousarray(getattr(r, name)).view(np.uint32).tobytes())
    return h.hexdigest()


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--digest":
        print(digest_here())
        return 0
    digests = {}
    for level in levels_here():
        env = dict(os.environ, SIMPREC_CPU_LEVEL=level)
        run = subprocess.run([sys.executable, __file__, "--digest"], env=env,
                             capture_output=True, text=True)
        if run.returncode != 0:
            print(f"{level:10} failed:\n{run.stderr}", file=sys.stderr)
            return 1
        out = run.stdout.split()[-1]
        digests[level] = out
        print(f"{level:10} {out}")
    same = len(set(digests.values())) == 1
    print("same bits at every level" if same else "LEVELS DIFFER")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
