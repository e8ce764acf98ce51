"""Dump PyTorch SDPA backends' inputs and outputs as .npy, for comparison with simprec presets.

On a CUDA machine with PyTorch:
    PYTHONPATH=python python3 scripts/torch_sdpa_dump.py OUT_DIR [--shape B,H,N,D] [--seed S]
        [--dtype bf16|fp16]

For each input kind (normal, repeated-max, low-rank) it draws Q, K, V, dO on the CPU from a
seeded generator, rounds them to the dtype, and runs forward and backward through each SDPA
backend (flash, efficient, cudnn, math) that accepts them. It writes, under OUT_DIR/KIND/:
    q.npy k.npy v.npy do.npy                  inputs as uint16 bit patterns of the dtype
    BACKEND_o.npy BACKEND_dq.npy ...          outputs as uint16 bit patterns
    flash_lse.npy efficient_lse.npy           the forward passes' LSE (float32, B x H x N)
and OUT_DIR/summary.json (versions, device, which backends ran, errors). Compare with
    simprec attention --q q.npy --k k.npy --v v.npy --do do.npy --input-format bf16 --preset P ...
(tests/data/torch_sdpa holds a dump: torch's generator, not the PCG64 draws of
simprec.recordings.inputs).
"""

import argparse
import json
import os

import numpy as np

from simprec.recordings import sdpa
from simprec.recordings.bits import tensor_bits

BACKENDS = ("flash", "efficient", "cudnn", "math")
KINDS = ("normal", "repeated-max", "low-rank")


def generate(kind, shape, seed):
    """Inputs in float64 on the CPU; the batch dimension holds independent draws."""
    import torch
    b, h, n, d = shape
    g = torch.Generator().manual_seed(seed)
    normal = lambda *s: torch.randn(*s, generator=g, dtype=torch.float64)  # noqa: E731
    if kind == "normal":
        return normal(b, h, n, d), normal(b, h, n, d), normal(b, h, n, d), normal(b, h, n, d)
    if kind == "repeated-max":
        # Keys are copies of a few prototypes, so score rows hold their maximum several times;
        # queries point at a prototype; values share a sign (as simprec's generator does).
        prototypes = normal(b, h, 4, d)
        choice = torch.randint(0, 4, (b, h, n), generator=g)
        k = torch.gather(prototypes, 2, choice.unsqueeze(-1).expand(b, h, n, d))
        q_choice = torch.randint(0, 4, (b, h, n), generator=g)
        q = 3.0 * torch.gather(prototypes, 2, q_choice.unsqueeze(-1).expand(b, h, n, d))
        q = q / d**0.25 + 0.01 * normal(b, h, n, d)
        v = -1.0 + 0.5 * normal(b, h, n, d)
        do = 1.0 + 0.7 * normal(b, h, n, d)
        return q, k, v, do
    if kind == "low-rank":
        u = normal(b, h, 1, d)
        q = 2.0 * u + 0.7 * normal(b, h, n, d)
        k = 2.0 * u + 0.7 * normal(b, h, n, d)
        v = 1.0 + 0.5 * normal(b, h, n, d)
        return q, k, v, normal(b, h, n, d)
    raise ValueError(f"input kind {kind!r}: expected one of {', '.join(KINDS)}")


def dump_kind(folder, q, k, v, do, sequence):
    """Runs every backend on one kind's inputs and writes their outputs and LSEs to `folder`;
    returns per backend "ok" or its error."""
    import torch
    from torch.nn.attention import sdpa_kernel
    results = {}
    for backend in BACKENDS:
        try:
            qc, kc, vc = (t.cuda().requires_grad_(True) for t in (q, k, v))
            with sdpa_kernel([sdpa.backend(backend)]):
                o = torch.nn.functional.scaled_dot_product_attention(qc, kc, vc)
                o.backward(do.cuda())
            torch.cuda.synchronize()
            for name, t in [("o", o), ("dq", qc.grad), ("dk", kc.grad), ("dv", vc.grad)]:
                np.save(os.path.join(folder, f"{backend}_{name}.npy"), tensor_bits(t))
            results[backend] = "ok"
        except Exception as e:  # a backend that refuses these inputs is recorded, not fatal
            results[backend] = f"{type(e).__name__}: {e}"
    # The LSE each forward pass saves for its backward pass (the same kernels as above).
    qc, kc, vc = (t.cuda() for t in (q, k, v))
    for backend, forward in [
        ("flash", lambda: torch.ops.aten._scaled_dot_product_flash_attention(
            qc, kc, vc, 0.0, False, False)[1]),
        ("efficient", lambda: torch.ops.aten._scaled_dot_product_efficient_attention(
            qc, kc, vc, None, True, 0.0, False)[1]),
    ]:
        try:
            lse = forward().float()[..., :sequence]
            np.save(os.path.join(folder, f"{backend}_lse.npy"), lse.cpu().numpy())
        except Exception as e:
            results[backend + "_lse"] = f"{type(e).__name__}: {e}"
    return results


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--shape", default="2,2,128,64")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dtype", default="bf16", choices=["bf16", "fp16"])
    args = parser.parse_args(argv)
    try:
        shape = tuple(int(x) for x in args.shape.split(","))
    except ValueError:
        shape = ()
    if len(shape) != 4 or min(shape) < 1:
        parser.error(f"--shape {args.shape}: expected four positive sizes B,H,N,D")
    import torch
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float16
    os.makedirs(args.out, exist_ok=True)
    summary = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "device": torch.cuda.get_device_name(0),
        "shape": shape,
        "dtype": args.dtype,
        "seed": args.seed,
        "kinds": {},
    }
    for kind in KINDS:
        folder = os.path.join(args.out, kind)
        os.makedirs(folder, exist_ok=True)
        q, k, v, do = (t.to(dtype) for t in generate(kind, shape, args.seed))
        for name, t in zip(["q", "k", "v", "do"], [q, k, v, do]):
            np.save(os.path.join(folder, name + ".npy"), tensor_bits(t))
        results = dump_kind(folder, q, k, v, do, shape[2])
        summary["kinds"][kind] = results
        print(kind, results, flush=True)
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    return 0
