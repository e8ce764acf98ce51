#!/usr/bin/env python3
"""What emulating a model's linear layers costs beside emulating its attention alone: one training
step (forward, backward, optimiser) of the tiny GPT of examples/python/fp8_training.py, timed in
the same run with only the attention emulated (bf16 FlashAttention-2 numerics, linear layers in
PyTorch's fp32) and with the linear layers emulated as well (bf16 GEMMs, FP8 delayed scaling with
and without promotion). The settings are interleaved round by round, so a machine that slows down
slows all of them; the ratio of medians is the figure (the issue's target: at most 3).

Where the time goes, per setting (one step, the last round): the calls to simprec.gemm.gemm (the
C++ GEMM engine: the tensor-core model chained along K, promotion, split-K, epilogue), their time
and their time per product (M·K·N), simprec.attention's time (forward and backward), and the
rest (PyTorch's own work, the linear layers' Python: rounding operands, FP8 quantization).

--threads N runs every simprec.gemm.gemm and simprec.attention call on N threads (default:
their own default, 0 = all cores; the results do not depend on it): on a small, busy machine
starting the threads of each call can cost more than the call's arithmetic.

Run: PYTHONPATH=build/python:examples/python /usr/bin/python3 bench/emulated_model_bench.py
     [--rounds 3] [--quick] [--fp8-format e4m3|hybrid] [--threads N]
"""

import argparse
import statistics
import sys
import time
from collections import defaultdict

import torch

import simprec
import simprec.gemm
from paper_a_training import FULL, QUICK, TILE
from paper_training.model import GPT, Numerics, batch, emulated_attention, linear_numerics, \
    load_text
import simprec.torch as storch


class Timers:
    """Wall time and call counts of the wrapped functions, while installed."""

    def __init__(self):
        self.seconds, self.calls = defaultdict(float), defaultdict(int)
        self.products = 0
        self._saved = []

    def wrap(self, owner, name, label, threads=None):
        original = getattr(owner, name)

        def timed(*args, **kwargs):
            if threads is not None:
                kwargs.setdefault("threads", threads)
            if label == "simprec.gemm.gemm":  # products of the GEMM: M·K·N
                a, b = args[0], args[1]
                self.products += a.shape[-2] * a.shape[-1] * b.shape[-1]
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.seconds[label] += time.perf_counter() - started
                self.calls[label] += 1
        self._saved.append((owner, name, original))
        setattr(owner, name, timed)

    def restore(self):
        for owner, name, original in reversed(self._saved):
            setattr(owner, name, original)
        self._saved.clear()


def step(model, optimiser, data, shape, linear, attention_numerics, index):
    inputs, targets = batch(data, shape, 0, index)
    attend = emulated_attention(attention_numerics, index)
    optimiser.zero_grad()
    context = storch.emulate(model, linear=linear) if linear is not None else None
    started = time.perf_counter()
    if context is not None:
        context.__enter__()
    try:
        logits = model(inputs, attend)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, shape.vocab),
                                                 targets.reshape(-1))
        loss.backward()
    finally:
        if context is not None:
            context.__exit__(None, None, None)
    optimiser.step()
    return time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="the tiny model (seconds)")
    parser.add_argument("--fp8-format", choices=("e4m3", "hybrid"), default="hybrid")
    parser.add_argument("--threads", type=int, help="threads of each simprec call (default: theirs)")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error(f"--rounds {args.rounds}: expected at least 1")
    if args.threads is not None and args.threads < 0:
        parser.error(f"--threads {args.threads}: expected 0 (all cores) or more")
    shape = (QUICK if args.quick else FULL)["shape"]
    torch.set_num_threads(1)
    data = load_text()
    attention = Numerics(f"fa2,{TILE}", "bf16")
    fp8 = "fp8" if args.fp8_format == "hybrid" else "fp8-e4m3"
    settings = {"attention only": None, "+ linear bf16": "bf16",
                f"+ linear {fp8}-promoted": f"{fp8}-promoted", f"+ linear {fp8}-fast": f"{fp8}-fast"}
    models = {}
    for name, linear in settings.items():
        torch.manual_seed(0)
        model = GPT(shape)
        models[name] = (model, torch.optim.AdamW(model.parameters(), lr=1e-3),
                        linear_numerics(linear))
    times = defaultdict(list)
    profile = {}
    for r in range(args.rounds):
        for name, (model, optimiser, linear) in models.items():
            timers = Timers()
            timers.wrap(simprec.gemm, "gemm", "simprec.gemm.gemm", args.threads)
            timers.wrap(simprec, "attention", "simprec.attention", args.threads)
            try:
                times[name].append(step(model, optimiser, data, shape, linear, attention, r))
            finally:
                timers.restore()
            profile[name] = timers
    base = statistics.median(times["attention only"])
    print(f"model: {shape.layers} layers, width {shape.width}, {shape.batch * shape.seq} tokens; "
          f"{args.rounds} rounds, interleaved; median seconds per training step; threads "
          f"{'default' if args.threads is None else args.threads}")
    print(f"{'setting':34} {'s/step':>8} {'ratio':>6} | {'last step':>9} {'GEMM calls':>10} "
          f"{'in GEMMs':>9} {'ns/product':>10} {'attention':>10} {'rest':>8}")
    for name in settings:
        median = statistics.median(times[name])
        t = profile[name]
        in_gemm = t.seconds["simprec.gemm.gemm"]
        attention_s = t.seconds["simprec.attention"]
        last = times[name][-1]
        rest = last - attention_s - in_gemm
        per_product = 1e9 * in_gemm / t.products if t.products else 0.0
        print(f"{name:34} {median:8.3f} {median / base:6.2f} | {last:9.3f} "
              f"{t.calls['simprec.gemm.gemm']:10d} {in_gemm:9.3f} {per_product:10.2f} "
              f"{attention_s:10.3f} {rest:8.3f}")
    print("after |: the last round's step and where its seconds went: simprec.gemm.gemm (the C++ "
          "GEMM engine; its time per product M*K*N), simprec.attention (forward and backward), "
          "and the rest (PyTorch's own work, the linear layers' rounding and FP8 quantization)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
