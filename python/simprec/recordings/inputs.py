"""The inputs the PyTorch and Triton recordings ran on, drawn so that the CPU can draw one head
again without the others: each head's q, k, v, dO in float64 from numpy's PCG64 seeded by
[seed, b, h, kind_id], rounded to bf16 (PyTorch on the GPU side, bits.bf16_bits on the CPU)."""

import numpy as np

from simprec.recordings.bits import bf16_bits

SEED = 20261125  # the main recordings' (tests/data/torch_kernels, tests/data/triton_example)
KIND_IDS = {"normal": 0, "repeated-max": 1, "low-rank": 2}


def head_inputs(kind, sq, sk, d, seed, b, h):
    """q, k, v, dO of one head in float64 (numpy only, so the CPU side can do the same)."""
    if kind not in KIND_IDS:
        raise ValueError(f"input kind {kind!r}: expected one of {', '.join(KIND_IDS)}")
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
    u = normal((1, d))  # low-rank: q and k share a direction
    q = 2.0 * u + 0.7 * normal((sq, d))
    k = 2.0 * u + 0.7 * normal((sk, d))
    v = 1.0 + 0.5 * normal((sk, d))
    return q, k, v, normal((sq, d))


def heads_bf16_bits(kind, sq, sk, d, seed, heads):
    """The bf16 encodings of q, k, v, dO of the heads (b, h) in `heads`, stacked in that order:
    each [len(heads), S, d] uint16."""
    drawn = [head_inputs(kind, sq, sk, d, seed, b, h) for b, h in heads]
    return tuple(bf16_bits(np.stack([x[i] for x in drawn])) for i in range(4))


def batch_inputs(shape, seed):
    """q, k, v, dO of every head of a shape (B, H, Sq, Sk, d, causal, kind), [B, H, S, d] bf16
    torch tensors on the GPU (PyTorch rounds the float64 draws to nearest even)."""
    import torch
    b_, h_, sq, sk, d, _, kind = shape
    heads = [head_inputs(kind, sq, sk, d, seed, b, h) for b in range(b_) for h in range(h_)]

    def stack(i, n):
        t = torch.from_numpy(np.stack([head[i] for head in heads]).reshape(b_, h_, n, d))
        return t.to(torch.bfloat16).cuda()
    return stack(0, sq), stack(1, sk), stack(2, sk), stack(3, sq)
