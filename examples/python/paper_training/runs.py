"""One training run per numerics, resumable: the state is checkpointed every few steps into the
run's folder, and a run killed and started again continues from its last checkpoint with the
same batches, random streams and arithmetic, so its results are bit-identical to an
uninterrupted run's."""

import hashlib
import json
import math
import os
import time
from contextlib import nullcontext
from dataclasses import asdict, dataclass
from typing import Optional

import torch

from paper_training.measures import delta_analysis, repeated_maxima
import simprec.torch as storch
from paper_training.model import GPT, batch, emulated_attention, linear_numerics, load_text


@dataclass(frozen=True)
class Schedule:
    steps: int
    checkpoint_every: int = 25
    snapshot_every: int = 10
    peak_lr: float = 3e-3
    warmup: int = 20
    clip: float = 1.0


@dataclass(frozen=True)
class Run:
    name: str
    numerics: object  # model.Numerics
    seed: int
    analyse: bool  # paper A's per-step measures (costs an fp64 attention per layer)
    key_block: int = 16  # the flash numerics' key block, for the repeated maxima per block
    linear: Optional[str] = None  # the linear layers' emulated numerics (model.LINEAR_NUMERICS)


def lr_at(step, schedule):
    """Linear warm-up, then cosine decay to a tenth of the peak (paper A's shape of schedule)."""
    if step < schedule.warmup:
        return schedule.peak_lr * (step + 1) / schedule.warmup
    progress = (step - schedule.warmup) / max(1, schedule.steps - schedule.warmup)
    return schedule.peak_lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def _save_atomically(obj, path):
    tmp = path.with_suffix(".tmp")
    torch.save(obj, tmp)
    os.replace(tmp, path)


def train(run, shape, schedule, data, folder, stop_after=None, log=print):
    """Trains (or resumes) `run`; returns its per-step records and weight snapshots. Stops
    early, with its checkpoint written, once `stop_after` steps are done (what a kill at that
    point leaves behind)."""
    folder.mkdir(parents=True, exist_ok=True)
    checkpoint = folder / "checkpoint.pt"
    config = {"run": run.name, "numerics": asdict(run.numerics), "seed": run.seed,
              "text_sha256": hashlib.sha256(data.tobytes()).hexdigest(),
              "shape": asdict(shape), "schedule": asdict(schedule)}
    linear = linear_numerics(run.linear)
    if linear is not None:
        config["linear"] = repr(linear)
    torch.manual_seed(run.seed)
    model = GPT(shape, run.numerics.model_precision)
    optimiser = torch.optim.AdamW(model.parameters(), lr=schedule.peak_lr, betas=(0.9, 0.95),
                                  weight_decay=0.1)
    state = {"config": config, "step": 0, "records": [], "snapshots": {}, "seconds": 0.0}
    if checkpoint.exists():
        # This run's own file, which holds numpy arrays: PyTorch 2.6+ loads only tensors by default.
        saved = torch.load(checkpoint, weights_only=False)
        if saved["config"] != config:
            raise SystemExit(f"{checkpoint}: written for another configuration "
                             f"({json.dumps(saved['config'])}); expected {json.dumps(config)}; "
                             "remove the folder or pass another --out")
        model.load_state_dict(saved["model"])
        optimiser.load_state_dict(saved["optimiser"])
        state = saved["state"]
        if hasattr(linear, "load_state_dict"):
            linear.load_state_dict(model, saved["linear"])
    else:
        state["snapshots"][0] = _flat_weights(model)
    if state["step"] < schedule.steps:
        log(f"{run.name}: step {state['step']} of {schedule.steps}")

    scale = 1.0 / math.sqrt(shape.head_dim)
    while state["step"] < schedule.steps:
        if stop_after is not None and state["step"] >= stop_after:
            return None
        step = state["step"]
        started = time.perf_counter()
        inputs, targets = batch(data, shape, run.seed, step)
        measured = {}

        def on_backward(layer, layer_input):
            if not run.analyse:
                return None

            def record(call):
                q, k, v, do = (t.detach().to(torch.float64).numpy() for t in
                               (call.query, call.key, call.value, call.grad_out))
                m = delta_analysis(q, k, v, do, call.result, layer_input, scale)
                m.update(repeated_maxima(q, k, inputs.numpy(), "bf16", run.key_block))
                measured[layer] = {name: values.tolist() for name, values in m.items()}

            return record

        for group in optimiser.param_groups:
            group["lr"] = lr_at(step, schedule)
        optimiser.zero_grad()
        attend = emulated_attention(run.numerics, (run.seed << 20) + step, on_backward)
        with nullcontext() if linear is None else storch.emulate(model, linear=linear):
            logits = model(inputs, attend)
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, shape.vocab),
                                                     targets.reshape(-1))
            loss.backward()
        grad_norm = float(torch.nn.utils.clip_grad_norm_(model.parameters(), schedule.clip))
        optimiser.step()
        state["records"].append({"step": step, "loss": float(loss), "grad_norm": grad_norm,
                                 "layers": [measured.get(i) for i in range(shape.layers)]})
        state["step"] = step + 1
        state["seconds"] += time.perf_counter() - started
        if state["step"] % schedule.snapshot_every == 0 or state["step"] == schedule.steps:
            state["snapshots"][state["step"]] = _flat_weights(model)
        if state["step"] % schedule.checkpoint_every == 0 or state["step"] == schedule.steps:
            saved = {"config": config, "model": model.state_dict(),
                     "optimiser": optimiser.state_dict(), "state": state}
            if hasattr(linear, "state_dict"):
                saved["linear"] = linear.state_dict(model)  # the FP8 scaling state
            _save_atomically(saved, checkpoint)
            log(f"{run.name}: step {state['step']} loss {float(loss):.4f} "
                f"({state['seconds'] / state['step']:.2f} s/step)")
    return state


def only_runs(parser, runs, names):
    """The runs named in `names` (--only), in their order; an unknown name is the command line's
    error (parser.error), listing the known ones."""
    unknown = sorted(set(names) - {r.name for r in runs})
    if unknown:
        parser.error(f"--only: unknown runs {unknown}; expected names among "
                     f"{[r.name for r in runs]}")
    return [r for r in runs if r.name in names]


def train_all(runs, shape, schedule, data, out, stop_after=None):
    """Trains (or resumes) each run into out/runs/NAME; their states by name, or None when
    stop_after stopped one (after saying so)."""
    states = {}
    for r in runs:
        state = train(r, shape, schedule, data, out / "runs" / r.name, stop_after=stop_after)
        if state is None:
            print(f"{r.name}: stopped after {stop_after} steps (--stop-after)")
            return None
        states[r.name] = state
    return states


def train_on_text(runs, shape, schedule, out, stop_after=None):
    """Every run trained (or resumed, train_all) on the licence texts (load_text), PyTorch on one
    thread so that the model's own arithmetic gives the same bits anywhere: (the states by name,
    or None where stop_after stopped a run; the text)."""
    torch.set_num_threads(1)
    data = load_text()
    return train_all(runs, shape, schedule, data, out, stop_after), data


def _flat_weights(model):
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()]).numpy().copy()
