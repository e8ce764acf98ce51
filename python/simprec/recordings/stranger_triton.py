"""The stranger's Triton kernel (examples/python/triton_stranger.py) recorded on a GPU for
simprec discover: the cases, their fp16 inputs and the recording's layout.

    PYTHONPATH=build/python:examples/python python3 scripts/record_stranger_triton.py OUT_DIR

For each case of CASES it draws every head's inputs as the other recordings do (numpy PCG64
seeded by [SEED, b, h, kind], inputs.head_inputs) and rounds them to fp16 with numpy (nearest
even, from float64 in one step), runs the kernel in both its variants (tl.exp, and tl.exp2 of
the score times scale * log2 e) and writes OUT_DIR/VARIANT-CASE.npz (VARIANT exp or exp2) with o
(uint16 fp16 encodings, [B, H, N, d]), lse (float32, [B, H, N]) and digest_inputs (SHA-256 of
the fp16 inputs q, k, v of all heads, C order); and OUT_DIR/VARIANT.ptx, the PTX Triton made for
the first case (what tl.exp and tl.exp2 lower to). discover_cases.stranger_triton_case reads the
recordings back.
"""

import argparse
import os

import numpy as np

from simprec.recordings.bits import sha256, tensor_bits
from simprec.recordings.examples import import_example
from simprec.recordings.inputs import SEED, head_inputs

CASES = {  # name: (B, H, N, d, causal, kind)
    "n128_d64": (1, 2, 128, 64, False, "normal"),
    "n192_d64_causal": (1, 2, 192, 64, True, "normal"),
    "n256_d128": (1, 2, 256, 128, False, "normal"),
    "n320_d64_repmax": (1, 2, 320, 64, False, "repeated-max"),
    "n512_d64_causal_repmax": (1, 1, 512, 64, True, "repeated-max"),
    "n640_d32_lowrank": (1, 1, 640, 32, False, "low-rank"),
}


def case_inputs(name):
    """The fp16 encodings (uint16) of q, k, v of case `name`, each (B, H, N, d)."""
    b_, h_, n, d, _, kind = CASES[name]
    heads = [head_inputs(kind, n, n, d, SEED, b, h) for b in range(b_) for h in range(h_)]
    return tuple(np.stack([x[i] for x in heads]).astype(np.float16).view(np.uint16)
                 .reshape(b_, h_, n, d) for i in range(3))


VARIANTS = {"exp": False, "exp2": True}  # file prefix: forward's base2


def record(out, forward):
    """Runs forward(q, k, v, is_causal=..., base2=...) -> (O, LSE, compiled) on every case and
    variant, writes OUT/VARIANT-CASE.npz and OUT/VARIANT.ptx."""
    import torch
    os.makedirs(out, exist_ok=True)
    for variant, base2 in VARIANTS.items():
        for name, (_, _, _, _, causal, _) in CASES.items():
            bits = case_inputs(name)
            q, k, v = (torch.from_numpy(x.view(np.float16)).cuda() for x in bits)
            o, lse, compiled = forward(q, k, v, is_causal=causal, base2=base2)
            torch.cuda.synchronize()
            np.savez_compressed(os.path.join(out, f"{variant}-{name}.npz"), o=tensor_bits(o),
                                lse=lse.cpu().numpy(), digest_inputs=sha256(*bits))
            if name == next(iter(CASES)):
                with open(os.path.join(out, variant + ".ptx"), "w") as f:
                    f.write(compiled.asm["ptx"])
            print(variant, name, "ok", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out")
    args = parser.parse_args(argv)
    kernel = import_example("triton_stranger", "record_stranger_triton")
    record(args.out, kernel.stranger_forward)
    return 0
