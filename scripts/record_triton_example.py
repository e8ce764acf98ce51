#!/usr/bin/env python3
"""Record the outputs of the Triton kernel of examples/python/triton_flash_forward.py on a GPU,
for checking its numerics description without one (tests/data/triton_example/).

    python3 scripts/record_triton_example.py OUT_DIR

For each case below it draws the inputs of every head as scripts/record_torch_attention.py does
(numpy PCG64 seeded by [seed, b, h, kind], rounded to bf16), runs the kernel and writes
OUT_DIR/CASE.npz with o (uint16 bf16 bit patterns, [B, H, N, d]), lse (float32, [B, H, N]) and
digest_inputs (SHA-256 of the bf16 inputs q, k, v of all heads, C order).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples", "python"))
sys.path.insert(0, os.path.dirname(__file__))
from record_torch_attention import SEED, head_inputs, sha256  # noqa: E402

CASES = {  # name: (B, H, N, d, causal, kind)
    "n256_d64": (1, 2, 256, 64, False, "normal"),
    "n256_d64_causal": (1, 2, 256, 64, True, "normal"),
    "n512_d128": (1, 2, 512, 128, False, "normal"),
    "n512_d64_repmax": (1, 2, 512, 64, False, "repeated-max"),
    "n512_d64_repmax_causal": (1, 2, 512, 64, True, "repeated-max"),
    "n1024_d64": (1, 1, 1024, 64, False, "low-rank"),
}


def main():
    import torch
    from triton_flash_forward import flash_forward

    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, (b_, h_, n, d, causal, kind) in CASES.items():
        heads = [head_inputs(kind, n, n, d, SEED, b, h) for b in range(b_) for h in range(h_)]
        q, k, v = (torch.from_numpy(np.stack([x[i] for x in heads]).reshape(b_, h_, n, d))
                   .to(torch.bfloat16).cuda() for i in range(3))
        o, lse = flash_forward(q, k, v, is_causal=causal)
        torch.cuda.synchronize()
        bits = lambda t: t.cpu().contiguous().view(torch.int16).numpy().view(np.uint16)
        np.savez_compressed(os.path.join(out, name + ".npz"), o=bits(o), lse=lse.cpu().numpy(),
                            digest_inputs=sha256(bits(q), bits(k), bits(v)))
        print(name, "ok", flush=True)


if __name__ == "__main__":
    main()
