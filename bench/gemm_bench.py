#!/usr/bin/env python3
"""The C++ GEMM engine (simprec.gemm.gemm, lib/gemm) against the Python composition it replaced
(simprec.matmul on each piece of K, the fp32 sums and the epilogue in numpy), on recorded shapes,
in the same run: prints each case's median time of both and their ratio (Python / C++; above 1:
the engine is faster). Both give the same bits (checked here on every case).

    PYTHONPATH=build/python python3 bench/gemm_bench.py [--rounds N]
"""

import argparse
import statistics
import time

import numpy as np

import simprec
from simprec.gemm import gemm
from simprec.recordings import gemm_cases

# (case, numerics, keyword form of the Python composition)
CASES = (
    ((64, 64, 16384), "bf16", "cublas-bf16-splitk,tile=32x64,cluster=2",
     dict(model="tc:sm90-wgmma-bf16", out_format="bf16", split_k=1408)),
    ((256, 256, 256), "bf16", "cublas-bf16",
     dict(model="tc:sm90-wgmma-bf16", out_format="bf16")),
    ((128, 128, 1024), "e4m3", "scaled-mm-e4m3",
     dict(model="tc:sm90-wgmma-e4m3", out_format="bf16", promote_every=128)),
)


def composed(a, b, *, model, out_format="fp32", split_k=None, promote_every=None,
             scale_a=None, scale_b=None):
    """The Python composition as simprec.gemm had it (tensor-wise scales, alpha order)."""
    k = a.shape[1]

    def promoted(a, b):
        if promote_every is None or promote_every >= a.shape[1]:
            return simprec.matmul(a, b, model=model)
        acc = np.zeros((a.shape[0], b.shape[1]), dtype=np.float32)
        for k0 in range(0, a.shape[1], promote_every):
            acc += simprec.matmul(np.ascontiguousarray(a[:, k0:k0 + promote_every]),
                                  np.ascontiguousarray(b[k0:k0 + promote_every]), model=model)
        return acc

    if split_k is None or split_k >= k:
        acc = promoted(a, b)
    else:
        acc = np.zeros((a.shape[0], b.shape[1]), dtype=np.float32)
        for k0 in range(0, k, split_k):
            acc += promoted(np.ascontiguousarray(a[:, k0:k0 + split_k]),
                            np.ascontiguousarray(b[k0:k0 + split_k]))
    if scale_a is not None:
        acc = acc * np.float32(np.float32(scale_a) * np.float32(scale_b))
    acc = np.asarray(acc, dtype=np.float32)
    return acc if out_format == "fp32" else simprec.round(acc, out_format)


def median_seconds(fn, rounds):
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print("| M×N×K | numerics | Python s | C++ s | Python / C++ |")
    print("| --- | --- | --- | --- | --- |")
    for shape, fmt, numerics, keywords in CASES:
        a = gemm_cases.operand_bits(gemm_cases.SEED, shape, "a", fmt)
        b = np.ascontiguousarray(gemm_cases.operand_bits(gemm_cases.SEED, shape, "w", fmt).T)
        scales = {}
        if fmt == "e4m3":
            scales = dict(scale_a=np.float32(1.3), scale_b=np.float32(0.7))
        want = composed(a, b, **keywords, **scales)
        got = gemm(a, b, numerics=numerics, **scales)
        if not np.array_equal(np.asarray(want).view(np.uint32), got.view(np.uint32)):
            raise SystemExit(f"{shape} {numerics}: the engine and the composition differ")
        python = median_seconds(lambda: composed(a, b, **keywords, **scales), args.rounds)
        cpp = median_seconds(lambda: gemm(a, b, numerics=numerics, **scales), args.rounds)
        print(f"| {'×'.join(map(str, shape))} | `{numerics}` | {python:.3f} | {cpp:.3f} | "
              f"{python / cpp:.2f} |", flush=True)


if __name__ == "__main__":
    main()
