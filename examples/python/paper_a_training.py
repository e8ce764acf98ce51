#!/usr/bin/env python3
"""Paper A (Qiu & Yao, arXiv 2510.04212) and paper B's Sec. V (Golden et al., arXiv 2405.02803)
at the level of training: a small byte-level GPT trained on the CPU with its attention through
simprec's emulation, once per numerics, from a fixed seed and batch order.

Paper A: per step, layer and head, the delta error sum_T(delta_lp - delta_hp) against the same
step's fp64 attention, its cumulative sum, the share of score rows with a repeated maximum, the
W_Q gradient error along the paper's rank-1 direction, and the loss, for paper-a, fa2, fp32 and
paper-a with each mitigation. Paper B: max |dw| and the Wasserstein-1 distance between the
weights of flash and baseline attention runs against fp16 and fp32 training, two seeds.

Resumable: each run checkpoints into OUT/runs/NAME; killed and started again, the command
continues and gives bit-identical results. Writes OUT/report.md, OUT/*.png, OUT/results.json.

Run: PYTHONPATH=build/python /usr/bin/python3 examples/python/paper_a_training.py
     [--out out/paper_a_training] [--quick] [--steps N] [--only NAME,...]
"""

import argparse
import hashlib
import json
import shlex
import sys
import time
from pathlib import Path


from paper_training.model import ModelShape, Numerics, text_digest
from paper_training.report import write_report
from paper_training.runs import Run, Schedule, only_runs, train_on_text

FULL = dict(shape=ModelShape(layers=2, heads=4, head_dim=16, seq=64, batch=8),
            schedule=Schedule(steps=200, checkpoint_every=25, snapshot_every=10))
QUICK = dict(shape=ModelShape(layers=2, heads=4, head_dim=8, seq=32, batch=2),
             schedule=Schedule(steps=8, checkpoint_every=3, snapshot_every=2, warmup=2))
KEY_BLOCK = 16  # several key blocks per row, so that the flash numerics rescale
TILE = f"tile={KEY_BLOCK}x{KEY_BLOCK}"


def runs_and_pairs(quick):
    """The runs, the fp32 run of each seed, and paper B's pairs of runs per seed."""
    def bf16(spec):
        return Numerics(spec, "bf16")

    paper_a = [
        Run("paper-a", bf16(f"paper-a,{TILE}"), 0, True),
        Run("paper-a+beta-rowmax:2", bf16(f"paper-a,{TILE},beta-rowmax:2"), 0, True),
        Run("paper-a+sr-pv", bf16(f"paper-a,{TILE},pv_acc=bf16:sr:exact,o_update=bf16:sr"), 0,
            True),
        Run("paper-a+fp32-pv", bf16(f"paper-a,{TILE},hp:pv_acc"), 0, True),
        Run("fa2", bf16(f"fa2,{TILE}"), 0, True),
        Run("fp32", Numerics(f"fp32,{TILE}", "fp32"), 0, True),
    ]
    seeds = (0,) if quick else (0, 1)
    paper_b, pairs = [], {}
    for seed in seeds:
        flash, base = f"flash-lp-fp16-s{seed}", f"baseline-lp-fp16-s{seed}"
        fp32 = "fp32" if seed == 0 else f"fp32-s{seed}"
        paper_b += [Run(flash, Numerics(f"flash-lp,{TILE}", "fp16", "fp16"), seed, False),
                    Run(base, Numerics("baseline-lp", "fp16", "fp16"), seed, False)]
        if seed:
            paper_b.append(Run(fp32, Numerics(f"fp32,{TILE}", "fp32"), seed, False))
        pairs[str(seed)] = {"flash vs baseline": (flash, base), "fp16 vs fp32": (base, fp32)}
    if len(seeds) > 1:
        pairs["0, 1"] = {"seed 0 vs seed 1, fp32": ("fp32", "fp32-s1")}
    if quick:
        paper_a = [r for r in paper_a if r.name in ("paper-a", "paper-a+beta-rowmax:2", "fp32")]
    references = {seed: "fp32" if seed == 0 else f"fp32-s{seed}" for seed in seeds}
    return paper_a + paper_b, references, pairs


def results_json(runs, states):
    """Everything the runs computed except their timings: what a resumed run must reproduce
    bit for bit (floats as Python writes them, which read back exactly)."""
    out = {}
    for r in runs:
        st = states[r.name]
        out[r.name] = {
            "config": st["config"],
            "records": st["records"],
            "snapshots": {str(s): hashlib.sha256(w.tobytes()).hexdigest()
                          for s, w in sorted(st["snapshots"].items())},
        }
    return out


def preset_and_schedule(parser, args):
    """The model preset (--quick or not) and its schedule with --steps applied."""
    preset = QUICK if args.quick else FULL
    schedule = preset["schedule"]
    if args.steps is not None:
        if not 1 <= args.steps <= 100000:
            parser.error(f"--steps {args.steps}: expected an integer in [1, 100000]")
        schedule = Schedule(**{**schedule.__dict__, "steps": args.steps})
    return preset, schedule


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="out/paper_a_training",
                        help="results folder (default: out/paper_a_training in the current folder)")
    parser.add_argument("--quick", action="store_true",
                        help="a tiny model, 8 steps, 5 runs: the test's variant (seconds)")
    parser.add_argument("--steps", type=int, help="training steps per run (200; quick: 8)")
    parser.add_argument("--only", help="comma-separated run names (default: all)")
    parser.add_argument("--stop-after", type=int,
                        help="stop each run after this many steps, checkpoint written, as a "
                             "kill would (for testing resumption)")
    args = parser.parse_args()
    preset, schedule = preset_and_schedule(parser, args)
    if args.stop_after is not None and args.stop_after < 0:
        parser.error(f"--stop-after {args.stop_after}: expected an integer >= 0")
    runs, references, pairs = runs_and_pairs(args.quick)
    if args.only:
        names = args.only.split(",")
        names += [references[r.seed] for r in runs if r.name in names]  # the loss's reference
        runs = only_runs(parser, runs, names)
        pairs = {seed: {label: pair for label, pair in p.items() if set(pair) <= set(names)}
                 for seed, p in pairs.items()}
        pairs = {seed: p for seed, p in pairs.items() if p}

    out = Path(args.out)
    started = time.perf_counter()
    states, data = train_on_text(runs, preset["shape"], schedule, out, args.stop_after)
    if states is None:
        return 0
    shape = preset["shape"]
    setup = [f"model: byte-level GPT, {shape.layers} layers, {shape.heads} heads of "
             f"{shape.head_dim}, width {shape.width}, context {shape.seq}, batch {shape.batch}; "
             f"AdamW (0.9, 0.95), weight decay 0.1, peak lr {schedule.peak_lr}, "
             f"{schedule.warmup} warm-up steps, cosine decay to a tenth, gradient clip "
             f"{schedule.clip}; {schedule.steps} steps",
             f"text: the {data.size} bytes of /usr/share/common-licenses (SHA-256 "
             f"{text_digest(data)}...); batches from (seed, step)",
             "attention: simprec.torch.attention, causal, its inputs cast to the format "
             f"(bf16/fp16 tensors) first; flash numerics with {TILE}",
             "fp16 model: every linear layer's operands and results rounded to fp16, fp32 "
             "accumulation (autocast's fp16 products); layer norms, softmax loss in fp32",
             f"wall time of this invocation: {time.perf_counter() - started:.0f} s"]
    (out / "results.json").write_text(json.dumps(results_json(runs, states)))
    command = "PYTHONPATH=build/python /usr/bin/python3 " + " ".join(
        shlex.quote(a) for a in [str(Path(sys.argv[0]))] + sys.argv[1:])
    write_report(out, setup, runs, states, references, pairs, command)
    print(f"report: {out / 'report.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
