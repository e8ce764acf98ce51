#!/usr/bin/env python3
"""FP8 training emulated end to end on the CPU: the tiny GPT of paper_a_training.py with its
linear layers through simprec.torch.DelayedScaling (Transformer Engine's delayed scaling:
tensor-wise scales from an amax history, e4m3 forward operands, e5m2 gradients, every GEMM on
the H200's FP8 wgmma model, outputs in bf16) with the accumulator promoted to fp32 every 128
elements of K or not at all (fast accumulation), beside bf16 (autocast's GEMMs emulated) and
fp32, from the same seed and batches. Attention: bf16 FlashAttention-2 numerics (fp32 for the
fp32 run). Layer norms, GELU, embeddings and the loss stay PyTorch's fp32.

Resumable as paper_a_training.py (checkpoints in OUT/runs/NAME, the FP8 scaling state included).
Writes OUT/report.md, OUT/loss.png, OUT/results.json.

Run: PYTHONPATH=build/python /usr/bin/python3 examples/python/fp8_training.py
     [--out out/fp8_training] [--steps 200] [--only NAME,...] [--fp8-format hybrid|e4m3]
     [--quick] [--stop-after N]
"""

import argparse
import json
import shlex
import sys
import time
from pathlib import Path


from paper_a_training import TILE, preset_and_schedule, results_json
from paper_training.fp8_report import write_report
from paper_training.model import FP8_HISTORY, Numerics, text_digest
from paper_training.runs import Run, only_runs, train_on_text


def runs_for(fp8_format):
    """The runs: fp32, bf16 and FP8 with promotion on and off (fp8_format "hybrid", TE's
    default, or "e4m3" for both passes)."""
    bf16 = Numerics(f"fa2,{TILE}", "bf16")
    fp8 = "fp8" if fp8_format == "hybrid" else "fp8-e4m3"
    return [Run("fp32", Numerics(f"fp32,{TILE}", "fp32"), 0, False),
            Run("bf16", bf16, 0, False, linear="bf16"),
            Run(f"{fp8}-promoted", bf16, 0, False, linear=f"{fp8}-promoted"),
            Run(f"{fp8}-fast", bf16, 0, False, linear=f"{fp8}-fast")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="out/fp8_training")
    parser.add_argument("--steps", type=int, help="training steps per run (200; quick: 8)")
    parser.add_argument("--only", help="comma-separated run names (fp32 is always run)")
    parser.add_argument("--fp8-format", choices=("hybrid", "e4m3"), default="hybrid",
                        help="hybrid: e4m3 forward, e5m2 gradients (TE's default); e4m3: both")
    parser.add_argument("--quick", action="store_true", help="the tiny model, 8 steps")
    parser.add_argument("--stop-after", type=int,
                        help="stop each run after this many steps, checkpoint written, as a "
                             "kill would (for testing resumption)")
    args = parser.parse_args()
    if args.stop_after is not None and args.stop_after < 0:
        parser.error(f"--stop-after {args.stop_after}: expected an integer >= 0")
    preset, schedule = preset_and_schedule(parser, args)
    runs = runs_for(args.fp8_format)
    if args.only:
        runs = only_runs(parser, runs, set(args.only.split(",")) | {"fp32"})
    out = Path(args.out)
    started = time.perf_counter()
    states, data = train_on_text(runs, preset["shape"], schedule, out, args.stop_after)
    if states is None:
        return 0
    shape = preset["shape"]
    setup = [f"model: byte-level GPT, {shape.layers} layers, {shape.heads} heads of "
             f"{shape.head_dim}, width {shape.width}, context {shape.seq}, batch {shape.batch} "
             f"({shape.seq * shape.batch} tokens: the K of the weight-gradient GEMMs); AdamW, "
             f"peak lr {schedule.peak_lr}, {schedule.warmup} warm-up steps, cosine decay, clip "
             f"{schedule.clip}; {schedule.steps} steps, seed 0",
             f"text: {data.size} bytes of /usr/share/common-licenses (SHA-256 "
             f"{text_digest(data)}...)",
             f"attention: simprec.torch.attention, causal, fa2,{TILE} in bf16 (fp32 run: "
             "fp32 numerics)",
             "linear layers (simprec.torch.emulate(model, linear=...)): bf16 = autocast's GEMMs "
             "(tc:sm90-wgmma-bf16, fp32 accumulation, bf16 out, backward alike); fp8-* = "
             f"simprec.torch.DelayedScaling(fp8_format={args.fp8_format!r}, amax_history_len="
             f"{FP8_HISTORY}, margin 0, amax 'max'), out bf16, promote_every 128 (promoted) or "
             "None (fast) in fprop, dgrad and wgrad",
             f"wall time of this invocation: {time.perf_counter() - started:.0f} s"]
    (out / "results.json").write_text(json.dumps(results_json(runs, states)))
    command = "PYTHONPATH=build/python /usr/bin/python3 " + " ".join(
        shlex.quote(a) for a in [str(Path(sys.argv[0]))] + sys.argv[1:])
    fp8 = [r.name for r in runs if r.linear and r.linear.startswith("fp8")]
    pairs = [(fp8[1], fp8[0])] if len(fp8) == 2 else []
    write_report(out, setup, runs, states, "fp32", command, pairs)
    print(f"report: {out / 'report.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
