#!/usr/bin/env python3
"""simprec.torch.flex_attention beside PyTorch's own FlexAttention (PyTorch 2.5 or later, CPU
tensors): the score_mod objects (SoftCap, Alibi) are score_mods torch's flex_attention takes, a
plain callable traced by simprec computes in fp64 what torch's flex_attention computes with it,
a real BlockMask from create_block_mask gives the emulation the mask its mask_mod gives, and
simprec.torch.attention takes SDPA's CausalBias. Prints one line per check and exits 1 if any
fails. Run where PyTorch has torch.nn.attention.flex_attention (the GPU machine):

    PYTHONPATH=build-python-gpu/python python3 scripts/check_flex_api.py
"""
import sys

import torch
from torch.nn.attention.bias import causal_lower_right
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

import simprec.torch as st


def main():
    failures = 0

    def check(name, ok):
        nonlocal failures
        print(f"{'ok  ' if ok else 'FAIL'} {name}", flush=True)
        failures += not ok

    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 4, 256, 32, generator=g, dtype=torch.float64) for _ in range(3))
    window = lambda b, h, i, j: (i >= j) & (i - j < 64)  # noqa: E731
    block_mask = create_block_mask(window, None, None, 256, 256, device="cpu")
    spec = dict(numerics="fp64", format="fp64")
    table = torch.randn(4, 511, generator=g, dtype=torch.float32)

    def rel_bias(score, b, h, q_idx, kv_idx):
        return torch.where(q_idx - kv_idx < 32, score + table[h, q_idx - kv_idx + 255],
                           score * torch.sigmoid(score))

    for mod in (st.SoftCap(5.0), st.Alibi.default(4), rel_bias):
        exact = flex_attention(q, k, v, score_mod=mod, block_mask=block_mask)
        emulated = st.flex_attention(q, k, v, score_mod=mod, block_mask=block_mask, **spec)
        by_mask_mod = st.flex_attention(q, k, v, score_mod=mod, mask_mod=window, **spec)
        check(f"{mod!r}: torch's flex_attention takes it, the emulation agrees in fp64",
              torch.allclose(exact, emulated, atol=1e-12, rtol=0))
        check(f"{mod!r}: a BlockMask and its mask_mod give the same bits",
              torch.equal(emulated, by_mask_mod))
    bias = causal_lower_right(128, 256)
    qs, ks, vs = q[..., :128, :], k, v
    exact = torch.nn.functional.scaled_dot_product_attention(qs, ks, vs, attn_mask=bias)
    emulated = st.attention(qs, ks, vs, attn_mask=bias, **spec)
    check("CausalBias (lower right) as SDPA's attn_mask",
          torch.allclose(exact, emulated, atol=1e-12, rtol=0))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
