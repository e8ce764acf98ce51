#!/usr/bin/env python3
"""Compare an emulation with the Triton example kernel's outputs recorded on an H100
(tests/data/triton_example, made by scripts/record_triton_example.py).

    PYTHONPATH=build/python /usr/bin/python3 scripts/compare_triton_example.py \\
        [--numerics SPEC] [--cases NAME,...] [--data tests/data/triton_example] [--threads 0]

For every recorded case it regenerates the bf16 inputs of all heads exactly as the recording
did (head_inputs, PCG64; float64 -> float32 -> bf16 as PyTorch's CPU conversion), checks them
against the recorded digest_inputs (a mismatch stops the script), runs the emulation through
the Python package with scale 1/sqrt(d) and prints per case the share of bit-identical O
elements (bf16 encodings) and LSE values (float32 bit patterns). SPEC defaults to
TRITON_FLASH_FORWARD_SPEC (examples/python/triton_flash_forward_numerics.py), the numerics
spec that describes the kernel.
"""
import argparse
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from compare_torch_recordings import bf16_bits, bits_of_bf16_values, sha256, share_equal  # noqa: E402
from record_torch_attention import SEED, head_inputs  # noqa: E402
from record_triton_example import CASES  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "..", "examples", "python"))
from triton_flash_forward_numerics import TRITON_FLASH_FORWARD_SPEC  # noqa: E402

DATA = os.path.join(HERE, "..", "tests", "data", "triton_example")


def case_inputs(name):
    """The bf16 encodings of q, k, v, each (B, H, N, d), as the recording made them."""
    b_, h_, n, d, _, kind = CASES[name]
    heads = [head_inputs(kind, n, n, d, SEED, b, h) for b in range(b_) for h in range(h_)]
    return tuple(bf16_bits(np.stack([x[i] for x in heads])).reshape(b_, h_, n, d)
                 for i in range(3))


def compare_case(name, simprec, numerics=TRITON_FLASH_FORWARD_SPEC, data=DATA, threads=0):
    """{"o": share, "lse": share} of bit-identical outputs of case `name`."""
    _, _, _, d, causal, _ = CASES[name]
    recorded = np.load(os.path.join(data, name + ".npz"))
    q, k, v = case_inputs(name)
    if sha256(q, k, v) != str(recorded["digest_inputs"]):
        raise SystemExit(f"{name}: the regenerated inputs' digest {sha256(q, k, v)} differs "
                         f"from the recording's {recorded['digest_inputs']}: nothing to compare")
    r = simprec.attention(q, k, v, numerics=numerics, input_format="bf16", causal=causal,
                          scale=1.0 / math.sqrt(d), threads=threads, reference=False,
                          baseline=False)
    lse = np.asarray(r.lse, dtype=np.float64).astype(np.float32)
    return {"o": share_equal(bits_of_bf16_values(r.o), recorded["o"]),
            "lse": share_equal(lse.view(np.uint32), recorded["lse"].view(np.uint32))}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--numerics", default=TRITON_FLASH_FORWARD_SPEC)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--data", default=DATA)
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args()
    import simprec
    print(f"numerics: {args.numerics}")
    for name in args.cases.split(","):
        if name not in CASES:
            raise SystemExit(f"unknown case '{name}' (recorded: {', '.join(CASES)})")
        r = compare_case(name, simprec, args.numerics, args.data, args.threads)
        print(f"{name:24s} O {100 * r['o']:7.3f}%  LSE {100 * r['lse']:7.3f}%", flush=True)


if __name__ == "__main__":
    main()
