#!/usr/bin/env python3
"""The kernels of docs/discover.md's table, each discovered by simprec.discover and its spec then
checked on inputs the search did not see. Run with PYTHONPATH=build/python:examples/discover.

    discover_targets.py TARGET [--time-limit S] [--threads N]

TARGET is one of TARGETS: recorded kernels (the Triton stranger's two variants, PyTorch's flash,
memory-efficient and FlexAttention kernels' forward, the Triton example) searched on some
recordings with no preset named (families fa2, fp32, torch-math) and checked bit for bit on the
held-out ones; numpy strangers (examples/discover/numpy_kernels.py) called on the search's own
probes and checked on fresh inputs (seed 7). Prints the search's report, then
`held-out CASE: O e/n LSE e/n` per unseen case and a last line
`row TARGET | how | seconds | spec | search bit-exact | held-out agreement`.
"""

import argparse
import sys
import time

import numpy as np

import simprec
from simprec.discovery import agreement
from simprec.recordings import discover_cases as dc

TRITON_STRANGER = "tests/data/triton_stranger"
TORCH = "tests/data/torch_kernels"
TRITON_EXAMPLE = "tests/data/triton_example"

# name: (how given, loader of named cases, search cases, held-out cases). The Triton stranger is
# two kernels per variant: Triton compiles the causal one (tl.where on the scores) apart from
# the other, and LLVM contracts the exponent's argument into an fma only in the other.
_S = ["n128_d64", "n320_d64_repmax"]
_H = ["n256_d128", "n640_d32_lowrank"]
_S_CAUSAL = ["n192_d64_causal"]
_H_CAUSAL = ["n512_d64_causal_repmax"]
_TORCH_S = ["b1h1_n128_d64", "b1h1_n512_d64_causal", "b1h1_q200_k600_d128"]
_TORCH_H = ["b1h1_n512_d96", "b1h1_n1000_d128", "b1h1_n777_d96_causal", "b1h4_n1024_d64_repmax",
            "b2h2_n512_d96_lowrank"]


def _stranger(variant):
    return lambda names: [dc.stranger_triton_case(TRITON_STRANGER, n, variant) for n in names]


def _torch(kernel):
    return lambda names: [dc.torch_case(TORCH, kernel, n, gradients=False) for n in names]


_TRITON = "Triton, H200 recording"
RECORDED = {
    "triton-stranger-exp2": (_TRITON, _stranger("exp2"), _S, _H),
    "triton-stranger-exp2-causal": (_TRITON, _stranger("exp2"), _S_CAUSAL, _H_CAUSAL),
    "triton-stranger-exp": (_TRITON, _stranger("exp"), _S, _H),
    "triton-stranger-exp-causal": (_TRITON, _stranger("exp"), _S_CAUSAL, _H_CAUSAL),
    "torch-flash": ("H100 recordings, forward", _torch("flash"), _TORCH_S, _TORCH_H),
    "torch-efficient": ("H100 recordings, forward", _torch("efficient"), _TORCH_S, _TORCH_H),
    "torch-flex": ("H100 recordings, forward", _torch("flex"), _TORCH_S, _TORCH_H),
    "triton-example": ("H100 recordings",
                       lambda names: [dc.triton_case(TRITON_EXAMPLE, n) for n in names],
                       ["n256_d64", "n256_d64_causal"],
                       ["n512_d128", "n512_d64_repmax", "n512_d64_repmax_causal", "n1024_d64"]),
}
VARIANTS = "tests/data/torch_variants"
_CUDNN_S = ["cudnn_plain_b1h2_n512_d64", "cudnn_plain_b1h2_n1024_d128",
            "cudnn_causal_b1h2_n1024_d128"]
_CUDNN_H = ["cudnn_causal_b1h2_n768_d64_heldout", "cudnn_plain_b2h4_n1000_d128_heldout"]
RECORDED["torch-cudnn"] = ("H200 recordings, forward",
                           lambda names: [dc.variant_case(VARIANTS, n, gradients=False)
                                          for n in names], _CUDNN_S, _CUDNN_H)
RECORDED["torch-cudnn-backward"] = ("H200 recordings, forward and backward",
                                    lambda names: [dc.variant_case(VARIANTS, n) for n in names],
                                    _CUDNN_S, _CUDNN_H)
# numpy strangers: (function name, input format)
NUMPY = {
    "numpy-flash-fp16": ("flash_fp16", "fp16"),
    "numpy-prescaled-q": ("prescaled_q", "bf16"),
    "numpy-standard-np-exp": ("standard_numpy_exp", "bf16"),
}
TARGETS = tuple(RECORDED) + tuple(NUMPY)


def _fresh_cases(fn, input_format):
    """Inputs the search never saw (seed 7), the kernel run on them, as recorded cases."""
    rng = np.random.default_rng(7)
    out = []
    for (b, h, s, d, causal) in ((1, 2, 200, 64, False), (1, 1, 333, 32, True)):
        x = [rng.standard_normal((b, h, s, d)) for _ in range(3)]
        if input_format == "fp16":
            arrays = [a.astype(np.float16) for a in x]
            encoded = [a.view(np.uint16) for a in arrays]
        else:
            encoded = [simprec.round(a.astype(np.float32), "bf16").astype(np.float32)
                       for a in x]
            arrays = encoded
        o, lse = fn(*arrays, is_causal=causal)
        o = o.view(np.uint16) if o.dtype == np.float16 else o
        out.append(dict(label=f"fresh S={s} D={d}{' causal' if causal else ''}", q=encoded[0],
                        k=encoded[1], v=encoded[2], input_format=input_format,
                        output_format=input_format, causal=causal, outputs={"O": o, "LSE": lse}))
    return out


def _agreement_text(a):
    return " ".join(f"{name} {e}/{n}" for name, (e, n) in a["agreement"].items())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("target", choices=TARGETS)
    parser.add_argument("--time-limit", type=float, default=600)
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args(argv)
    began = time.monotonic()
    if args.target in RECORDED:
        how, load, searched, held = RECORDED[args.target]
        result = simprec.discover(cases=load(searched), time_limit=args.time_limit,
                                  threads=args.threads)
        unseen = load(held)
    else:
        import numpy_kernels
        name, input_format = NUMPY[args.target]
        fn = getattr(numpy_kernels, name)
        how = "numpy callable"
        result = simprec.discover(fn, input_format=input_format, causal=True,
                                  output_format=input_format, time_limit=args.time_limit,
                                  threads=args.threads, name=name)
        unseen = _fresh_cases(fn, input_format)
    seconds = time.monotonic() - began
    total = [0, 0]
    for a in agreement(result.spec, unseen):
        print(f"held-out {a['label']}: {_agreement_text(a)}")
        for e, n in a["agreement"].values():
            total[0] += e
            total[1] += n
    print(f"row {args.target} | {how} | {seconds:.0f} s | {result.spec} | "
          f"{'yes' if result.bit_exact else 'no'} | {total[0]}/{total[1]}")
    return 0 if result.bit_exact and total[0] == total[1] else 1


if __name__ == "__main__":
    sys.exit(main())
