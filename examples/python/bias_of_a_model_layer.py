#!/usr/bin/env python3
"""Where does the rounding bias of one attention layer of a PyTorch model come from?

Trains nothing: builds a small transformer block, runs a batch through it, captures the Q, K, V
that its attention layer receives and the gradient dO that flows back into that layer's output,
then asks simprec how the layer's numerics (a numerics preset, bf16 by default) bias O and the
gradients against an exact fp64 reference on those same inputs, and which rounding sites
explain the bias (each site made exact, and made unbiased with stochastic rounding, one at a
time). The batch dimension supplies independent draws for the z-scores.

Run: PYTHONPATH=build/python /usr/bin/python3 examples/python/bias_of_a_model_layer.py
     [--numerics fa2] [--format bf16] [--target o|dq|dk|dv|delta] [--seq 128] [--batch 8]
"""

import argparse

import torch
import torch.nn.functional as F

import simprec


def causal_attention(q, k, v):
    """F.scaled_dot_product_attention(q, k, v, is_causal=True), also where PyTorch predates it."""
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    n = q.shape[-2]
    scores = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    mask = torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1)
    return torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1) @ v


class Block(torch.nn.Module):
    """A pre-norm transformer block whose attention goes through `attend`."""

    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.norm = torch.nn.LayerNorm(width)
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.proj = torch.nn.Linear(width, width)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(width, 4 * width), torch.nn.GELU(),
                                       torch.nn.Linear(4 * width, width))
        self.captured = {}

    def forward(self, x):
        b, n, width = x.shape
        q, k, v = self.qkv(self.norm(x)).chunk(3, dim=-1)
        q, k, v = (t.view(b, n, self.heads, width // self.heads).transpose(1, 2) for t in (q, k, v))
        o = causal_attention(q, k, v)
        # What the layer's kernel sees: its inputs, and later the gradient of its output.
        self.captured.update(q=q.detach(), k=k.detach(), v=v.detach())
        o.register_hook(lambda grad: self.captured.__setitem__("do", grad.detach()))
        x = x + self.proj(o.transpose(1, 2).reshape(b, n, width))
        return x + self.mlp(self.norm(x))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--numerics", default="fa2", help="preset (simprec attention --preset)")
    parser.add_argument("--format", default="bf16")
    parser.add_argument("--target", default="o", help="o, dq, dk, dv or delta")
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--batch", type=int, default=8, help="independent draws")
    parser.add_argument("--width", type=int, default=128)
    parser.add_argument("--heads", type=int, default=2)
    args = parser.parse_args()

    torch.manual_seed(0)
    block = Block(args.width, args.heads).double()
    tokens = torch.randn(args.batch, args.seq, args.width, dtype=torch.float64)
    loss = block(tokens).pow(2).mean()
    loss.backward()
    q, k, v, do = (block.captured[n].contiguous().numpy() for n in ("q", "k", "v", "do"))
    # The gradients of a mean are tiny; scale dO to order one (bias is reported relative too).
    do = do / abs(do).mean()

    r = simprec.attention(q, k, v, do, numerics=args.numerics, format=args.format, causal=True,
                          trace=True, attribute=True, attribute_target=args.target)
    print(f"layer inputs: Q, K, V {q.shape}, dO {do.shape}; numerics {args.numerics} "
          f"at {args.format}, causal")
    print("error against the fp64 reference (z across the batch's draws):")
    for name in ("o", "dq", "dk", "dv", "delta"):
        m = r.metrics[name]
        z = "n/a" if m["bias_z"] is None else f"{m['bias_z']:+.1f}"
        print(f"  {name:5} rms {m['rms']:.3e}  bias {m['bias']:+.3e}  z {z}")
    print("rounding sites (mean signed error of each rounding, in ulps):")
    for site, t in sorted(r.trace.items(), key=lambda kv: -abs(kv[1]["mean_error_ulp"])):
        print(f"  {site:11} {t['count']:>10} roundings  mean {t['mean_error_ulp']:+.4f} ulp")
    z = r.attribution["bias_full"] / r.attribution["bias_full_se"] if r.attribution.get(
        "bias_full_se") else None
    if z is not None and abs(z) < 3:
        print(f"note: the bias of {args.target} is within 3 standard errors of zero (z {z:+.1f}):"
              " the ranking below explains noise; more draws (--batch) or other numerics may "
              "show a real bias")
    print(r.attribution_table, end="")


if __name__ == "__main__":
    main()
