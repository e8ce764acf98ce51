#!/usr/bin/env python3
"""Record ground truth of PyTorch's attention kernels over a sweep of shapes (GPU machine).

    python3 scripts/record_torch_attention.py OUT_DIR [--kernels flash,efficient,flex]
                                               [--shapes NAME,...] [--repeats 3]
                                               [--shape-set main|held-out] [--seed N]
                                               [--flex-compile auto|static]

For every shape of SHAPES (below) and every kernel (SDPA's flash and memory-efficient backends,
FlexAttention through torch.compile) it runs the forward and the backward pass in bf16 and keeps,
for ONE head of the batch (the last: b = B-1, h = H-1), what a CPU emulation needs to be checked
against it, without storing whole tensors:

    OUT_DIR/KERNEL/SHAPE.npz
        o_rows, dq_rows     int64 indices of the query rows kept (at most ROWS_KEPT, drawn from a
                            seeded generator so that every position inside a tile is covered)
        k_rows              the key rows kept for dK and dV
        o, dq               uint16 bf16 bit patterns of those rows of O and dQ  [rows, d]
        dk, dv              uint16 bf16 bit patterns of the kept rows of dK, dV [rows, d]
        lse                 float32 LSE of every query row of the head, as the kernel returns it
                            (natural log; FlexAttention's own scale too, see lse_base)
        digest_*            SHA-256 (hex) of the head's whole O, dQ, dK, dV (bf16 bits, C order)
        digest_inputs       SHA-256 of the head's bf16 inputs q, k, v, dO: the CPU side checks
                            that it regenerated the same inputs
and OUT_DIR/summary.json: versions, the device, every shape with the kernels the profiler saw
launched for it (the dispatch), the forward's and backward's run-to-run agreement over --repeats
runs on the whole batch (share of bit-identical elements per output), and errors.

--shape-set held-out --seed 20261126 --flex-compile static records HELD_OUT_SHAPES (below): shapes,
a seed and a FlexAttention compiled for each shape (torch.compile(..., dynamic=False)) that no
preset was described from (tests/data/torch_held_out_sweep). The default, auto, is plain
torch.compile, which after the second shape compiles for symbolic lengths (the main recordings).

Inputs: each head draws q, k, v, dO in float64 from numpy's PCG64 seeded by
[seed, b, h, kind_id] (so the CPU regenerates one head without the others), rounded to bf16 by
PyTorch (round to nearest even). The kinds are those of scripts/torch_sdpa_dump.py.
"""
import argparse
import hashlib
import json
import math
import os
import sys
import time
import traceback

import numpy as np

# name: (B, H, Sq, Sk, d, causal, kind). Chosen to cover the dispatch: one key block against
# many, head dimensions 64/96/128, N not a multiple of any tile, Sq != Sk both ways, causal,
# few heads (the split-KV heuristic compares batch x heads x query tiles with the SM count)
# against many, and the three input kinds.
SHAPES = {
    "b1h1_n128_d64": (1, 1, 128, 128, 64, False, "normal"),
    "b2h2_n128_d64": (2, 2, 128, 128, 64, False, "normal"),
    "b1h1_n512_d64": (1, 1, 512, 512, 64, False, "normal"),
    "b1h2_n1024_d64": (1, 2, 1024, 1024, 64, False, "normal"),
    "b1h1_n2048_d64": (1, 1, 2048, 2048, 64, False, "normal"),
    "b2h4_n1000_d64": (2, 4, 1000, 1000, 64, False, "normal"),
    "b1h1_n512_d96": (1, 1, 512, 512, 96, False, "normal"),
    "b1h2_n1024_d96": (1, 2, 1024, 1024, 96, False, "normal"),
    "b1h1_n512_d128": (1, 1, 512, 512, 128, False, "normal"),
    "b1h2_n1024_d128": (1, 2, 1024, 1024, 128, False, "normal"),
    "b1h1_n2048_d128": (1, 1, 2048, 2048, 128, False, "normal"),
    "b1h1_n1000_d128": (1, 1, 1000, 1000, 128, False, "normal"),
    "b1h1_n512_d64_causal": (1, 1, 512, 512, 64, True, "normal"),
    "b1h2_n1024_d64_causal": (1, 2, 1024, 1024, 64, True, "normal"),
    "b1h1_n1024_d128_causal": (1, 1, 1024, 1024, 128, True, "normal"),
    "b1h1_n777_d96_causal": (1, 1, 777, 777, 96, True, "normal"),
    "b1h1_q256_k1024_d64": (1, 1, 256, 1024, 64, False, "normal"),
    "b1h1_q1024_k256_d64": (1, 1, 1024, 256, 64, False, "normal"),
    "b1h1_q256_k1024_d128_causal": (1, 1, 256, 1024, 128, True, "normal"),
    "b1h1_q200_k600_d128": (1, 1, 200, 600, 128, False, "normal"),
    "b1h1_q64_k2048_d128": (1, 1, 64, 2048, 128, False, "normal"),
    "b1h1_q16_k4096_d64": (1, 1, 16, 4096, 64, False, "normal"),
    "b4h16_n1024_d64": (4, 16, 1024, 1024, 64, False, "normal"),
    "b8h16_n512_d128": (8, 16, 512, 512, 128, False, "normal"),
    "b4h8_n2048_d128_causal": (4, 8, 2048, 2048, 128, True, "normal"),
    "b2h8_n4096_d64": (2, 8, 4096, 4096, 64, False, "normal"),
    "b1h1_n4096_d128_causal": (1, 1, 4096, 4096, 128, True, "normal"),
    "b1h4_n1024_d64_repmax": (1, 4, 1024, 1024, 64, False, "repeated-max"),
    "b1h2_n1024_d128_repmax": (1, 2, 1024, 1024, 128, False, "repeated-max"),
    "b1h1_n2048_d128_causal_repmax": (1, 1, 2048, 2048, 128, True, "repeated-max"),
    "b2h2_n512_d96_lowrank": (2, 2, 512, 512, 96, False, "low-rank"),
    "b1h1_n1536_d64_lowrank": (1, 1, 1536, 1536, 64, False, "low-rank"),
}
# Shapes none of the presets was described from: many key blocks without a split (the row sum's
# rescale), lengths no tile divides under a statically compiled FlexAttention, split-KV with
# uneven splits, Sq != Sk, and the three input kinds.
HELD_OUT_SHAPES = {
    "b4h8_n1536_d128": (4, 8, 1536, 1536, 128, False, "normal"),
    "b2h16_n1200_d64": (2, 16, 1200, 1200, 64, False, "normal"),
    "b1h2_n1111_d64_causal": (1, 2, 1111, 1111, 64, True, "normal"),
    "b1h3_n900_d96": (1, 3, 900, 900, 96, False, "normal"),
    "b1h1_q333_k2222_d128": (1, 1, 333, 2222, 128, False, "normal"),
    "b3h5_n700_d128_causal_repmax": (3, 5, 700, 700, 128, True, "repeated-max"),
    "b2h4_n1280_d64_lowrank": (2, 4, 1280, 1280, 64, False, "low-rank"),
    "b1h1_q48_k3000_d64": (1, 1, 48, 3000, 64, False, "normal"),
}
SHAPE_SETS = {"main": SHAPES, "held-out": HELD_OUT_SHAPES}
KIND_IDS = {"normal": 0, "repeated-max": 1, "low-rank": 2}
ROWS_KEPT = 128
SEED = 20261125


def head_inputs(kind, sq, sk, d, seed, b, h):
    """q, k, v, dO of one head in float64 (numpy only, so the CPU side can do the same)."""
    rng = np.random.Generator(np.random.PCG64([seed, b, h, KIND_IDS[kind]]))
    normal = rng.standard_normal
    if kind == "normal":
        return normal((sq, d)), normal((sk, d)), normal((sk, d)), normal((sq, d))
    if kind == "repeated-max":
        # Keys are copies of 4 prototypes, so score rows repeat their maximum; queries point at a
        # prototype; values share a sign.
        prototypes = normal((4, d))
        k = prototypes[rng.integers(0, 4, sk)]
        q = 3.0 * prototypes[rng.integers(0, 4, sq)] / d**0.25 + 0.01 * normal((sq, d))
        v = -1.0 + 0.5 * normal((sk, d))
        do = 1.0 + 0.7 * normal((sq, d))
        return q, k, v, do
    if kind == "low-rank":
        u = normal((1, d))
        q = 2.0 * u + 0.7 * normal((sq, d))
        k = 2.0 * u + 0.7 * normal((sk, d))
        v = 1.0 + 0.5 * normal((sk, d))
        return q, k, v, normal((sq, d))
    raise ValueError(kind)


def batch_inputs(shape, seed):
    """q, k, v, dO of every head of a shape, [B, H, N, d] bf16 torch tensors on the GPU (PyTorch
    rounds the float64 draws to nearest even)."""
    import torch
    b_, h_, sq, sk, d, _, kind = shape
    heads = [head_inputs(kind, sq, sk, d, seed, b, h) for b in range(b_) for h in range(h_)]

    def stack(i, n):
        t = torch.from_numpy(np.stack([head[i] for head in heads]).reshape(b_, h_, n, d))
        return t.to(torch.bfloat16).cuda()
    return stack(0, sq), stack(1, sk), stack(2, sk), stack(3, sq)


def kept_rows(n, salt):
    """At most ROWS_KEPT sorted row indices out of n, from a fixed generator."""
    if n <= ROWS_KEPT:
        return np.arange(n, dtype=np.int64)
    rng = np.random.Generator(np.random.PCG64([SEED, n, salt]))
    return np.sort(rng.choice(n, ROWS_KEPT, replace=False)).astype(np.int64)


def sha256(*arrays):
    digest = hashlib.sha256()
    for a in arrays:
        digest.update(np.ascontiguousarray(a).tobytes())
    return digest.hexdigest()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--kernels", default="flash,efficient,flex")
    parser.add_argument("--shapes", default="", help="names from the shape set (default all)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--shape-set", choices=sorted(SHAPE_SETS), default="main")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--flex-compile", choices=("auto", "static"), default="auto",
                        help="auto: torch.compile as is (symbolic lengths from the second "
                             "shape on); static: compiled for each shape (dynamic=False)")
    args = parser.parse_args()
    shapes = SHAPE_SETS[args.shape_set]
    names = [s for s in args.shapes.split(",") if s] or list(shapes)
    unknown = [n for n in names if n not in shapes]
    if unknown:
        parser.error(f"unknown shapes {unknown} in set {args.shape_set}: {', '.join(shapes)}")

    import torch
    import torch.nn.functional as F
    import torch._dynamo
    # Past its default of 8 recompilations torch.compile falls back to running flex_attention
    # eagerly (a reference implementation, not the Triton kernel): allow one per shape.
    torch._dynamo.config.cache_size_limit = 1024
    torch._dynamo.config.accumulated_cache_size_limit = 4096
    from torch.nn.attention import SDPBackend, sdpa_kernel

    def bits(t):
        return t.detach().to("cpu").contiguous().view(torch.int16).numpy().view(np.uint16)

    flex_compiled = {}

    def run_kernel(kernel, q, k, v, do, causal):
        """O, LSE (natural log, [B, H, Sq], float32) and the gradients."""
        q, k, v = (t.detach().clone().requires_grad_(True) for t in (q, k, v))
        sq, sk = q.shape[2], k.shape[2]
        if kernel in ("flash", "efficient"):
            backend = SDPBackend.FLASH_ATTENTION if kernel == "flash" else SDPBackend.EFFICIENT_ATTENTION
            with sdpa_kernel(backend):
                o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            with torch.no_grad():
                if kernel == "flash":
                    lse = torch.ops.aten._scaled_dot_product_flash_attention(
                        q, k, v, 0.0, causal)[1]
                else:
                    lse = torch.ops.aten._scaled_dot_product_efficient_attention(
                        q, k, v, None, True, 0.0, causal)[1][..., :sq]
        else:
            from torch.nn.attention.flex_attention import create_block_mask, flex_attention
            if "fn" not in flex_compiled:
                flex_compiled["fn"] = torch.compile(
                    flex_attention, **({"dynamic": False} if args.flex_compile == "static" else {}))
            mask = None
            if causal:
                mask = create_block_mask(lambda b, h, qi, ki: qi >= ki, None, None, sq, sk)
            o, lse = flex_compiled["fn"](q, k, v, block_mask=mask, return_lse=True)
        o.backward(do)
        return o.detach(), lse.detach().float(), q.grad, k.grad, v.grad

    def profiled_kernels(kernel, inputs, causal):
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            run_kernel(kernel, *inputs, causal)
            torch.cuda.synchronize()
        names = sorted({e.key for e in prof.key_averages() if e.device_type.name == "CUDA"})
        return [n for n in names if not n.startswith(("Memcpy", "Memset"))]

    os.makedirs(args.out, exist_ok=True)
    summary = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "device": torch.cuda.get_device_name(0),
        "multiprocessors": torch.cuda.get_device_properties(0).multi_processor_count,
        "seed": args.seed,
        "shape_set": args.shape_set,
        "flex_compile": args.flex_compile,
        "rows_kept": ROWS_KEPT,
        "recorded_head": "b = B-1, h = H-1",
        "shapes": {},
    }
    try:
        import triton
        summary["triton"] = triton.__version__
    except ImportError:
        pass
    for name in names:
        shape = shapes[name]
        b_, h_, sq, sk, d, causal, kind = shape
        entry = {"B": b_, "H": h_, "Sq": sq, "Sk": sk, "d": d, "causal": causal, "kind": kind,
                 "kernels": {}}
        summary["shapes"][name] = entry
        inputs = batch_inputs(shape, args.seed)
        hb, hh = b_ - 1, h_ - 1
        digest_inputs = sha256(*(bits(t[hb, hh]) for t in inputs))
        for kernel in [k for k in args.kernels.split(",") if k]:
            record = {}
            entry["kernels"][kernel] = record
            started = time.time()
            try:
                first = run_kernel(kernel, *inputs, causal)
                torch.cuda.synchronize()
                agreement = {n: 1.0 for n in ("o", "lse", "dq", "dk", "dv")}
                for _ in range(args.repeats - 1):
                    again = run_kernel(kernel, *inputs, causal)
                    for n, a, b in zip(("o", "lse", "dq", "dk", "dv"), first, again):
                        same = (a.view(torch.int32 if a.dtype == torch.float32 else torch.int16)
                                == b.view(torch.int32 if b.dtype == torch.float32 else torch.int16))
                        agreement[n] = min(agreement[n], same.float().mean().item())
                record["run_to_run_agreement"] = agreement
                record["dispatch"] = profiled_kernels(kernel, inputs, causal)
                o, lse, dq, dk, dv = (t[hb, hh] for t in first)
                o_rows, k_rows = kept_rows(sq, 1), kept_rows(sk, 2)
                os.makedirs(os.path.join(args.out, kernel), exist_ok=True)
                np.savez_compressed(
                    os.path.join(args.out, kernel, name + ".npz"),
                    o_rows=o_rows, dq_rows=o_rows, k_rows=k_rows,
                    o=bits(o)[o_rows], dq=bits(dq)[o_rows], dk=bits(dk)[k_rows],
                    dv=bits(dv)[k_rows], lse=lse.cpu().numpy().astype(np.float32),
                    digest_o=sha256(bits(o)), digest_dq=sha256(bits(dq)),
                    digest_dk=sha256(bits(dk)), digest_dv=sha256(bits(dv)),
                    digest_inputs=digest_inputs)
                record["seconds"] = round(time.time() - started, 2)
                print(f"{name} {kernel}: ok {record['seconds']} s, agreement "
                      + " ".join(f"{n}={a:.6f}" for n, a in agreement.items()), flush=True)
            except Exception as error:  # recorded, the sweep goes on
                record["error"] = f"{type(error).__name__}: {error}"
                traceback.print_exc()
                print(f"{name} {kernel}: ERROR {record['error'][:200]}", flush=True)
        with open(os.path.join(args.out, "summary.json"), "w") as f:
            json.dump(summary, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
