"""Runs FlexAttention (torch.compile) forward and backward once on a recorded shape and keeps the
Triton code inductor generated for it, with the configurations its autotuner chose, so that the
arithmetic of a recording can be read rather than guessed (GPU machine).

    TORCHINDUCTOR_CACHE_DIR=OUT/cache PYTHONPATH=python python3 scripts/dump_flex_kernels.py \\
        SHAPE [--shape-set main|held-out] [--seed N] [--flex-compile auto|static]

The kernels land in TORCHINDUCTOR_CACHE_DIR (set it to a fresh folder: a warm cache compiles
nothing): the generated `*.py` sources (the flex forward and backward templates with their
constants, and the reduction that forms D = rowsum(dO o O)) and, beside each autotuned kernel, a
`*.best_config` with the launch configuration chosen for it.
"""

import argparse
import os

from simprec.recordings.inputs import SEED, batch_inputs
from simprec.recordings.shapes import SHAPE_SETS


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("shape")
    parser.add_argument("--shape-set", choices=sorted(SHAPE_SETS), default="main")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--flex-compile", choices=("auto", "static"), default="static")
    args = parser.parse_args(argv)
    if "TORCHINDUCTOR_CACHE_DIR" not in os.environ:
        parser.error("set TORCHINDUCTOR_CACHE_DIR to an empty folder (the kernels go there)")
    shapes = SHAPE_SETS[args.shape_set]
    if args.shape not in shapes:
        parser.error(f"unknown shape {args.shape} in set {args.shape_set}: {', '.join(shapes)}")
    import torch
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention

    _, _, sq, sk, _, causal, _ = shapes[args.shape]
    q, k, v, do = batch_inputs(shapes[args.shape], args.seed)
    q, k, v = (t.requires_grad_(True) for t in (q, k, v))
    fn = torch.compile(flex_attention,
                       **({"dynamic": False} if args.flex_compile == "static" else {}))
    mask = (create_block_mask(lambda b, h, qi, ki: qi >= ki, None, None, sq, sk)
            if causal else None)
    o = fn(q, k, v, block_mask=mask)
    o.backward(do)
    torch.cuda.synchronize()
    print(f"{args.shape}: compiled and ran; kernels in {os.environ['TORCHINDUCTOR_CACHE_DIR']}")
    return 0
