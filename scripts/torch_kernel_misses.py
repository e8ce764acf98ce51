#!/usr/bin/env python3
"""Which site a preset's misses against a recorded PyTorch kernel come from, where the GPU's
approximate exp2 and log2 (ex2.approx, lg2.approx: not correctly rounded, by up to 2 ulp) may
explain them.

    PYTHONPATH=build/python /usr/bin/python3 scripts/torch_kernel_misses.py \\
        --kernel flex --numerics torch-flex [--shapes NAME,...]

For every shape it runs the emulation as scripts/compare_torch_recordings.py does and counts, on
the recorded rows, the O, dQ, dK and dV elements that differ from the recording ("miss"). It
runs the emulation again four times with one site's rounding changed from nearest-even to
round-up and to round-toward-zero: the exp site (every exp2, the changes an approximate exp2
makes) and the lse site (the log2 of the LSE and the additions after it). A miss counts as
explained by exp2 when one of the exp variants gives the recorded value, by log2 when only one of
the lse variants does. The variants change every exp2 (or every LSE) of the head at once, so the
count is a lower bound on what the approximations explain where several errors combine (dK and
dV sum over every query row), and an element can also match by chance. The last column is the
emulation's own sensitivity: the share of dK elements that rounding every exp2 up changes, which
is large where dK sums many terms that cancel.

Where the recording holds every query row of O (Sq <= 128), a second table gives the gradients
of the backward pass alone, run from PyTorch's own O and LSE: what is left when the forward
pass's exp2 and log2 are the GPU's.
"""
import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare_torch_recordings as recordings  # noqa: E402

ROWS = {"o": "o_rows", "dq": "dq_rows", "dk": "k_rows", "dv": "k_rows"}
VARIANTS = {"exp2": ("exp=fp32:rup", "exp=fp32:rtz"), "log2": ("lse=fp32:rup", "lse=fp32:rtz")}


def emulate(simprec, spec, inputs, shape):
    _, _, sq, sk, d, causal, _ = shape
    q, k, v, do = inputs
    r = simprec.attention(q.reshape(1, 1, sq, d), k.reshape(1, 1, sk, d), v.reshape(1, 1, sk, d),
                          do.reshape(1, 1, sq, d), numerics=spec, input_format="bf16",
                          causal=causal, scale=recordings.kernel_scale(d), reference=False,
                          baseline=False)
    return {out: recordings.bits_of_bf16_values(getattr(r, out)[0, 0]) for out in ROWS}


def backward_from_recording(simprec, spec, inputs, shape, recorded):
    """dQ, dK, dV bits of the backward pass from the recorded O and LSE."""
    _, _, sq, sk, d, causal, _ = shape
    q, k, v, do = inputs
    o = (recorded["o"].astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    r = simprec.attention(q.reshape(1, 1, sq, d), k.reshape(1, 1, sk, d), v.reshape(1, 1, sk, d),
                          do.reshape(1, 1, sq, d), numerics=spec, input_format="bf16",
                          causal=causal, scale=recordings.kernel_scale(d), reference=False,
                          baseline=False, o=o.reshape(1, 1, sq, d),
                          lse=recorded["lse"].astype(np.float64).reshape(1, 1, sq))
    return {out: recordings.bits_of_bf16_values(getattr(r, out)[0, 0]) for out in ("dq", "dk", "dv")}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kernel", required=True, choices=("flash", "efficient", "flex"))
    parser.add_argument("--numerics", required=True)
    parser.add_argument("--shapes", default="")
    parser.add_argument("--data", default=os.path.join(HERE, "..", "tests", "data",
                                                       "torch_kernels"))
    args = parser.parse_args()
    import simprec

    summary_file = "summary_flex.json" if args.kernel == "flex" else "summary_sdpa.json"
    with open(os.path.join(args.data, summary_file)) as f:
        summary = json.load(f)
    names = [s for s in args.shapes.split(",") if s] or [
        n for n in summary["shapes"] if args.kernel in summary["shapes"][n]["kernels"]]
    print("| shape | " + " | ".join(f"{o} misses (exp2 / log2)" for o in ROWS) +
          " | dK changed by exp2 rounded up % |")
    print("|---|" + "---|" * (len(ROWS) + 1))
    whole = []
    for name in names:
        if name not in recordings.SHAPES:
            raise SystemExit(f"unknown shape '{name}'")
        shape = recordings.SHAPES[name]
        b_, h_, sq, sk, d, _, kind = shape
        recorded = np.load(os.path.join(args.data, args.kernel, name + ".npz"))
        inputs = tuple(recordings.bf16_bits(t) for t in recordings.head_inputs(
            kind, sq, sk, d, recordings.SEED, b_ - 1, h_ - 1))
        if recordings.sha256(*inputs) != str(recorded["digest_inputs"]):
            raise SystemExit(f"{name}: the regenerated inputs differ from the recording's")
        spec = recordings.spec_with_dispatch(args.numerics, shape, summary["multiprocessors"],
                                             simprec)
        base = emulate(simprec, spec, inputs, shape)
        variants = {site: [emulate(simprec, f"{spec},{v}", inputs, shape) for v in settings]
                    for site, settings in VARIANTS.items()}
        cells = []
        for out, rows in ROWS.items():
            kept, want = recorded[rows], recorded[out]
            miss = base[out][kept] != want
            by = {}
            left = miss.copy()
            for site in ("exp2", "log2"):
                hit = np.zeros_like(miss)
                for run in variants[site]:
                    hit |= run[out][kept] == want
                by[site] = left & hit
                left &= ~hit
            cells.append(f"{int(miss.sum())} ({int(by['exp2'].sum())} / {int(by['log2'].sum())})")
        changed = np.mean(variants["exp2"][0]["dk"] != base["dk"])
        print(f"| {name} | " + " | ".join(cells) + f" | {100 * changed:.2f} |", flush=True)
        if len(recorded["o_rows"]) == sq:
            whole.append((name, backward_from_recording(simprec, spec, inputs, shape, recorded),
                          base, recorded))
    if whole:
        print("\nbackward pass from PyTorch's O and LSE, bit-identical % (the whole emulation's):\n")
        print("| shape | dQ % | dK % | dV % |\n|---|---|---|---|")
        for name, given, base, recorded in whole:
            cells = [f"{100 * np.mean(given[o][recorded[ROWS[o]]] == recorded[o]):.3f} "
                     f"({100 * np.mean(base[o][recorded[ROWS[o]]] == recorded[o]):.3f})"
                     for o in ("dq", "dk", "dv")]
            print(f"| {name} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
