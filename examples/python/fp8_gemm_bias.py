#!/usr/bin/env python3
"""The signed bias of FP8 GEMM outputs: e4m3 operands with tensor-wise scales through the H200's
_scaled_mm model (simprec.gemm.gemm on tc:sm90-wgmma-e4m3), with the accumulator promoted to fp32
every 128 elements of K (use_fast_accum=False), without promotion (fast accumulation, one chain
over K), and without promotion but with cuBLASLt's split-K pieces of 2816 elements (what it ran
on the recorded FP8 shapes with K >= 8192), against the exact product of the same e4m3 values.

The reference is exact: every e4m3 value is a multiple of 2^-9 and at most 448, so every product
of two is a multiple of 2^-18 of magnitude below 2^18, and a sum of K <= 16384 of them is a
multiple of 2^-18 below 2^32: an integer below 2^50 times 2^-18, which float64 (53 bits) holds
exactly, as it holds every partial sum on the way, in any order.

The bias of one GEMM: sum over its outputs of (d - exact)·sign(exact), over sum of |exact|: the
mean shrinkage toward zero (negative) or growth, relative to the outputs' size. Seeds are the
replicates (outputs of one GEMM share rows and columns); the interval is Student-t, 95%, over
seeds. Two input distributions: "centred" (A, B ~ N(0, 1)) and "positive" (|N(0, 1)| both, every
product positive, as P·V or a row of post-activation inputs against positive weights).

Run: PYTHONPATH=build/python /usr/bin/python3 examples/python/fp8_gemm_bias.py
     [--out out/fp8_gemm_bias] [--seeds 8] [--size 64] [--ks 256,...,16384] [--quick]
Writes OUT/report.md, OUT/bias.png, OUT/results.json.
"""

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

import numpy as np

import simprec
import simprec.gemm

KS = (256, 512, 1024, 2048, 4096, 8192, 16384)
MODEL = "tc:sm90-wgmma-e4m3"
VARIANTS = {  # name: simprec.gemm.gemm keywords
    "promoted every 128": dict(promote_every=128),
    "fast accumulation": dict(promote_every=None),
    "fast accumulation, split-K 2816": dict(promote_every=None, split_k=2816),
}
DISTRIBUTIONS = ("centred", "positive")


def quantized(x):
    """x in e4m3 with a tensor-wise scale mapping its amax to 448 (delayed scaling's scale when
    the history holds this tensor's amax): the e4m3 values and the scale_inv."""
    scale = np.float32(np.float32(448.0) / np.float32(np.abs(x).max()))
    q = simprec.round((x * scale).astype(np.float32), "e4m3fn", overflow="saturate")
    return q, np.float32(np.float32(1.0) / scale)


def operands(seed, size, k, distribution):
    rng = np.random.default_rng((seed, k, DISTRIBUTIONS.index(distribution)))
    a = rng.standard_normal((size, k)).astype(np.float32)
    b = rng.standard_normal((k, size)).astype(np.float32)
    if distribution == "positive":
        a, b = np.abs(a), np.abs(b)
    return quantized(a), quantized(b)


def bias(d, exact):
    return float(np.sum((d - exact) * np.sign(exact)) / np.sum(np.abs(exact)))


def measure(seeds, size, ks):
    """{distribution: {variant: {k: [bias per seed]}}}, and the mean |relative error|."""
    out = {dist: {v: {k: [] for k in ks} for v in VARIANTS} for dist in DISTRIBUTIONS}
    for dist in DISTRIBUTIONS:
        for k in ks:
            for seed in range(seeds):
                (qa, sa), (qb, sb) = operands(seed, size, k, dist)
                # The emulated accumulator against the exact sum: the scales are one fp32
                # product applied after (the same to both), so they are left out.
                exact = qa.astype(np.float64) @ qb.astype(np.float64)
                for name, keywords in VARIANTS.items():
                    d = simprec.gemm.gemm(qa, qb, model=MODEL, out_format="fp32", **keywords)
                    out[dist][name][k].append(bias(d.astype(np.float64), exact))
            print(f"{dist} K={k}: done", flush=True)
    return out


def interval(samples):
    """Mean and the 95% Student-t half-width over seeds."""
    from scipy import stats
    x = np.asarray(samples)
    half = stats.t.ppf(0.975, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size) if x.size > 1 else 0
    return float(x.mean()), float(half)


def plot(results, ks, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=False)
    for ax, dist in zip(axes, DISTRIBUTIONS):
        for name in VARIANTS:
            stats = [interval(results[dist][name][k]) for k in ks]
            ax.errorbar(ks, [m for m, _ in stats], yerr=[h for _, h in stats], marker="o",
                        capsize=3, label=name)
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("K")
        ax.set_ylabel("signed bias: Σ(d − exact)·sign(exact) / Σ|exact|")
        ax.set_title(f"e4m3 GEMM, {dist} inputs (95% t interval over seeds)")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def report(results, ks, seeds, size, command, seconds):
    lines = ["# Signed bias of FP8 (e4m3, tensor-wise) GEMM outputs", "",
             f"Command: `{command}`", "",
             f"{size}×K·K×{size} GEMMs, e4m3 operands scaled tensor-wise (amax → 448), through "
             f"`simprec.gemm.gemm` on `{MODEL}` (fp32 accumulator sums, scales left out: one fp32 "
             "product applied after), against the exact product of the same e4m3 values "
             "(float64: exact, see the script's docstring). Bias of one GEMM = Σ(d − exact)·"
             "sign(exact) / Σ|exact|; mean over "
             f"{seeds} seeds with a 95% Student-t interval over seeds. Wall time {seconds:.0f} s.",
             ""]
    for dist in DISTRIBUTIONS:
        lines += [f"## {dist} inputs", "", "| K | " + " | ".join(VARIANTS) + " |",
                  "| --- |" + " --- |" * len(VARIANTS)]
        for k in ks:
            cells = []
            for name in VARIANTS:
                m, h = interval(results[dist][name][k])
                cells.append(f"{m:+.3e} ± {h:.1e}")
            lines.append(f"| {k} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += ["![bias](bias.png)", ""]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="out/fp8_gemm_bias")
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--size", type=int, default=64, help="M = N (default 64)")
    parser.add_argument("--ks", help="comma-separated K values (default 256,...,16384)")
    parser.add_argument("--quick", action="store_true", help="3 seeds, size 16, K 256 and 1024")
    args = parser.parse_args()
    seeds, size = (3, 16) if args.quick else (args.seeds, args.size)
    ks = (256, 1024) if args.quick else KS
    if args.ks:
        try:
            ks = tuple(int(k) for k in args.ks.split(","))
        except ValueError:
            parser.error(f"--ks {args.ks}: expected comma-separated integers")
    if seeds < 2 or size < 1 or any(k < 1 or k > 16384 for k in ks):
        parser.error("expected --seeds >= 2, --size >= 1 and K in [1, 16384] (the exact "
                     "reference's bound)")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    results = measure(seeds, size, ks)
    seconds = time.perf_counter() - started
    command = "PYTHONPATH=build/python /usr/bin/python3 " + " ".join(
        shlex.quote(a) for a in [str(Path(sys.argv[0]))] + sys.argv[1:])
    (out / "results.json").write_text(json.dumps(
        {"seeds": seeds, "size": size, "ks": list(ks), "results": results}, indent=1))
    plot(results, ks, out / "bias.png")
    (out / "report.md").write_text(report(results, ks, seeds, size, command, seconds))
    print(f"report: {out / 'report.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
