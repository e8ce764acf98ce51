"""Record the outputs of the Triton kernel of examples/python/triton_flash_forward.py on a GPU,
for checking its numerics description without one (tests/data/triton_example/).

    PYTHONPATH=build/python:examples/python python3 scripts/record_triton_example.py OUT_DIR

For each case of triton_example.CASES it draws the inputs of every head as
scripts/record_torch_attention.py does (numpy PCG64 seeded by [seed, b, h, kind], rounded to
bf16), runs the kernel and writes OUT_DIR/CASE.npz with o (uint16 bf16 bit patterns,
[B, H, N, d]), lse (float32, [B, H, N]) and digest_inputs (SHA-256 of the bf16 inputs q, k, v of
all heads, C order).
"""

import argparse
import os

import numpy as np

from simprec.recordings.bits import sha256, tensor_bits
from simprec.recordings.examples import import_example
from simprec.recordings.inputs import SEED, batch_inputs
from simprec.recordings.triton_example import CASES


def record(out, flash_forward):
    """Runs flash_forward(q, k, v, is_causal=...) -> (O, LSE) on every case and writes
    OUT/CASE.npz."""
    import torch
    os.makedirs(out, exist_ok=True)
    for name, (b_, h_, n, d, causal, kind) in CASES.items():
        q, k, v, _ = batch_inputs((b_, h_, n, n, d, causal, kind), SEED)
        o, lse = flash_forward(q, k, v, is_causal=causal)
        torch.cuda.synchronize()
        np.savez_compressed(os.path.join(out, name + ".npz"), o=tensor_bits(o),
                            lse=lse.cpu().numpy(),
                            digest_inputs=sha256(tensor_bits(q), tensor_bits(k), tensor_bits(v)))
        print(name, "ok", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out")
    args = parser.parse_args(argv)
    kernel = import_example("triton_flash_forward", "record_triton_example")
    record(args.out, kernel.flash_forward)
    return 0
