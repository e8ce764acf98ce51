#!/usr/bin/env python3
"""A small GPT with today's attention, trained a few steps on the CPU through simprec.torch:
grouped-query attention (4 query heads share 2 key/value heads), a causal sliding window and
Gemma 2's tanh soft-cap of the attention scores, through simprec.torch.flex_attention with
FlexAttention's numerics on an H200 (torch-flex, bf16: the preset the H200 recordings of
docs/attention_variants.md check), beside the same model with fp64 attention, from the same
initial weights and batches. The rest of the model is PyTorch's fp32.

Writes OUT/report.md and OUT/results.json: per step the loss of each run, and at the first step
the relative error of each attention gradient of the emulated run against the fp64 one.

Run: PYTHONPATH=build/python:examples/python /usr/bin/python3 examples/python/gqa_training.py
     [--out out/gqa_training] [--steps 20] [--window 32] [--softcap 20]
"""

import argparse
import json
import time
from pathlib import Path

import torch

import simprec.torch as storch
from paper_training.model import ModelShape, batch, load_text, text_digest

SHAPE = ModelShape(layers=2, heads=4, head_dim=16, seq=64, batch=8)
KV_HEADS = 2


class Block(torch.nn.Module):
    """A pre-norm block whose attention has KV_HEADS key/value heads; `attend(q, k, v)` is the
    attention."""

    def __init__(self, shape):
        super().__init__()
        width, kv = shape.width, KV_HEADS * shape.head_dim
        self.shape = shape
        self.norm1 = torch.nn.LayerNorm(width)
        self.q = torch.nn.Linear(width, width)
        self.kv = torch.nn.Linear(width, 2 * kv)
        self.proj = torch.nn.Linear(width, width)
        self.norm2 = torch.nn.LayerNorm(width)
        self.up = torch.nn.Linear(width, 4 * width)
        self.down = torch.nn.Linear(4 * width, width)

    def forward(self, x, attend):
        b, n, width = x.shape
        h = self.norm1(x)
        q = self.q(h).reshape(b, n, self.shape.heads, -1).transpose(1, 2)
        k, v = (t.reshape(b, n, KV_HEADS, -1).transpose(1, 2) for t in self.kv(h).chunk(2, -1))
        o = attend(q, k, v)
        x = x + self.proj(o.transpose(1, 2).reshape(b, n, width))
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm2(x))))


class Model(torch.nn.Module):
    def __init__(self, shape):
        super().__init__()
        self.embed = torch.nn.Embedding(shape.vocab, shape.width)
        self.position = torch.nn.Embedding(shape.seq, shape.width)
        self.blocks = torch.nn.ModuleList(Block(shape) for _ in range(shape.layers))
        self.norm = torch.nn.LayerNorm(shape.width)
        self.head = torch.nn.Linear(shape.width, shape.vocab)

    def forward(self, tokens, attend):
        x = self.embed(tokens) + self.position(torch.arange(tokens.shape[1]))
        for block in self.blocks:
            x = block(x, attend)
        return self.head(self.norm(x))


def attention(numerics, fmt, window, softcap):
    """attend(q, k, v): FlexAttention's signature through simprec, the window as a mask_mod."""
    dtype = {"bf16": torch.bfloat16}.get(fmt, torch.float64)

    def attend(q, k, v):
        o = storch.flex_attention(q.to(dtype), k.to(dtype), v.to(dtype),
                                  score_mod=storch.SoftCap(softcap), enable_gqa=True,
                                  mask_mod=lambda b, h, i, j: (i >= j) & (i - j < window),
                                  numerics=numerics, format=fmt)
        return o.to(torch.float32)
    return attend


RUNS = {"torch-flex bf16": ("torch-flex", "bf16"), "fp64": ("fp64", "fp64")}


def train(name, data, steps, window, softcap, seed=0):
    """Losses per step, and the first step's attention-weight gradients."""
    torch.manual_seed(seed)
    model = Model(SHAPE)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    attend = attention(*RUNS[name], window, softcap)
    losses, first_grads = [], None
    for step in range(steps):
        tokens, targets = batch(data, SHAPE, seed, step)
        logits = model(tokens, attend)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, SHAPE.vocab),
                                                 targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        if step == 0:
            first_grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()
                           if ".q." in n or ".kv." in n}
        optimizer.step()
        losses.append(loss.item())
        print(f"{name}: step {step} loss {loss.item():.5f}", flush=True)
    return losses, first_grads


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="out/gqa_training")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--window", type=int, default=32)
    parser.add_argument("--softcap", type=float, default=20.0)
    args = parser.parse_args()
    if args.steps < 1 or args.window < 1 or not args.softcap > 0:
        parser.error("--steps and --window must be positive, --softcap a positive number")
    data = load_text()
    began = time.time()
    results = {name: train(name, data, args.steps, args.window, args.softcap) for name in RUNS}
    seconds = time.time() - began
    emulated, exact = results["torch-flex bf16"], results["fp64"]
    grad_error = {n: ((g - exact[1][n]).norm() / exact[1][n].norm()).item()
                  for n, g in emulated[1].items()}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    record = {"shape": SHAPE.__dict__, "kv_heads": KV_HEADS, "window": args.window,
              "softcap": args.softcap, "steps": args.steps, "text": text_digest(data),
              "loss": {name: r[0] for name, r in results.items()},
              "first_step_relative_grad_error": grad_error, "seconds": round(seconds, 1)}
    (out / "results.json").write_text(json.dumps(record, indent=1) + "\n")
    lines = ["# A small GPT with grouped-query attention, a sliding window and a soft-cap",
             "", f"{SHAPE.layers} layers, {SHAPE.heads} query heads sharing {KV_HEADS} key/value "
             f"heads of {SHAPE.head_dim}, sequence {SHAPE.seq}, batch {SHAPE.batch}; causal "
             f"window of {args.window} keys; soft-cap {args.softcap:g}; AdamW 3e-3; text "
             f"{text_digest(data)}; {args.steps} steps per run, {seconds:.0f} s in all.", "",
             "| step | loss, torch-flex bf16 | loss, fp64 attention |", "| --- | --- | --- |"]
    lines += [f"| {s} | {a:.5f} | {b:.5f} |" for s, (a, b) in
              enumerate(zip(emulated[0], exact[0]))]
    lines += ["", "First step: relative error of each attention weight's gradient, emulated "
              "against fp64 attention:", ""]
    lines += [f"- `{n}`: {e:.3e}" for n, e in grad_error.items()]
    (out / "report.md").write_text("\n".join(lines) + "\n")
    print(f"report: {out / 'report.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
