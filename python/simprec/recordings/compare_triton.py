"""Compare an emulation with the Triton example kernel's outputs recorded on an H100
(tests/data/triton_example, made by scripts/record_triton_example.py).

    PYTHONPATH=build/python /usr/bin/python3 scripts/compare_triton_example.py \\
        [--numerics SPEC] [--cases NAME,...] [--data tests/data/triton_example] [--threads 0]

For every recorded case it regenerates the bf16 inputs of all heads exactly as the recording
did (head_inputs, PCG64; float64 -> float32 -> bf16 as PyTorch's CPU conversion), checks them
against the recorded digest_inputs (a mismatch stops the script), runs the emulation through
the Python package with scale 1/sqrt(d) and prints per case the share of bit-identical O
elements (bf16 encodings) and LSE values (float32 bit patterns). SPEC defaults to
TRITON_FLASH_FORWARD_SPEC (simprec.recordings.triton_example), the numerics spec that
describes the kernel.
"""

import argparse
import math
import os

import numpy as np

import simprec
from simprec.recordings.bits import bits_of_bf16_values, float32_bits, sha256, share_equal
from simprec.recordings.layout import RecordingError
from simprec.recordings.triton_example import CASES, TRITON_FLASH_FORWARD_SPEC, case_inputs

DEFAULT_DATA = os.path.join("tests", "data", "triton_example")


def compare_case(name, data, numerics=TRITON_FLASH_FORWARD_SPEC, threads=0):
    """{"o": share, "lse": share} of bit-identical outputs of case `name` against the recording
    in folder `data`. Raises RecordingError where the recording is missing or the regenerated
    inputs are not the recorded ones."""
    _, _, _, d, causal, _ = CASES[name]
    path = os.path.join(data, name + ".npz")
    if not os.path.exists(path):
        raise RecordingError(f"{path}: no recording of case {name} (expected a folder that "
                             "scripts/record_triton_example.py wrote)")
    recorded = np.load(path)
    q, k, v = case_inputs(name)
    if sha256(q, k, v) != str(recorded["digest_inputs"]):
        raise RecordingError(f"{name}: the regenerated inputs' digest {sha256(q, k, v)} differs "
                             f"from the recording's {recorded['digest_inputs']}: nothing to "
                             "compare")
    r = simprec.attention(q, k, v, numerics=numerics, input_format="bf16", causal=causal,
                          scale=1.0 / math.sqrt(d), threads=threads, reference=False,
                          baseline=False)
    return {"o": share_equal(bits_of_bf16_values(r.o), recorded["o"], "bf16"),
            "lse": share_equal(float32_bits(r.lse), recorded["lse"].view(np.uint32), "fp32")}


def main(argv=None, repository="."):
    """The command line (scripts/compare_triton_example.py); --data defaults to
    tests/data/triton_example under `repository`."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--numerics", default=TRITON_FLASH_FORWARD_SPEC)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--data", default=os.path.join(repository, DEFAULT_DATA))
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args(argv)
    print(f"numerics: {args.numerics}")
    for name in args.cases.split(","):
        if name not in CASES:
            raise SystemExit(f"unknown case '{name}' (recorded: {', '.join(CASES)})")
        try:
            r = compare_case(name, args.data, args.numerics, args.threads)
        except RecordingError as error:
            raise SystemExit(str(error)) from None
        print(f"{name:24s} O {100 * r['o']:7.3f}%  LSE {100 * r['lse']:7.3f}%", flush=True)
    return 0
