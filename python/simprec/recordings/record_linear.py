"""Record linear layers on a GPU: torch.nn.functional.linear forward and backward in bf16 and fp16
(cuBLAS through PyTorch's addmm/mm), with and without a bias.

    PYTHONPATH=python python3 scripts/record_linear.py OUT_DIR [--only SUBSTRING]

For every case of simprec.recordings.linear_cases it draws x, W, the bias and dY on the CPU
from the seed and the shape, runs y = F.linear(x, W, b) and y.backward(dY) twice on the GPU and
keeps:

    OUT_DIR/linear.npz     per case, NAME.y, NAME.dx, NAME.dw (bit patterns of the rows
                           linear_cases.kept_rows names) and NAME.db (all of it)
    OUT_DIR/summary.json   versions, the device, and per case its settings, the launches of the
                           forward and of the backward (kernel, grid, block, in launch order),
                           the run-to-run agreement of each output, SHA-256 digests of the whole
                           outputs and of the inputs, or the error
"""

import json
import os
import time
import traceback

import numpy as np

from simprec.recordings import linear_cases
from simprec.recordings.bits import sha256
from simprec.recordings.record_gemm import (_device_tensor, arguments, environment, launches,
                                            output_bits)

OUTPUTS = ("y", "dx", "dw", "db")


def runner(case, seed):
    """(forward, backward, input bits): forward() returns y; backward() runs y.backward(dY) on a
    fresh graph and returns (dX, dW, db or None)."""
    import torch
    x_bits, w_bits, b_bits, dy_bits = linear_cases.operands(seed, case)
    fmt = case["dtype"]
    x, w, dy = (_device_tensor(bits, fmt) for bits in (x_bits, w_bits, dy_bits))
    b = None if b_bits is None else _device_tensor(b_bits, fmt)

    def forward():
        return torch.nn.functional.linear(x, w, b)

    def leaves():
        return (x.clone().requires_grad_(), w.clone().requires_grad_(),
                None if b is None else b.clone().requires_grad_())

    state = {}

    def prepare():
        xl, wl, bl = leaves()
        state["leaves"] = (xl, wl, bl)
        state["y"] = torch.nn.functional.linear(xl, wl, bl)

    def backward():
        state["y"].backward(dy)
        xl, wl, bl = state["leaves"]
        return xl.grad, wl.grad, None if bl is None else bl.grad

    inputs = [x_bits, w_bits, dy_bits] + ([] if b_bits is None else [b_bits])
    return forward, prepare, backward, inputs


def record_case(case, seed, arrays):
    import torch
    entry = {k: v for k, v in case.items() if k != "name"}
    started = time.time()
    try:
        forward, prepare, backward, inputs = runner(case, seed)
        runs = []
        for _ in range(2):
            y = output_bits(forward())
            prepare()
            dx, dw, db = backward()
            torch.cuda.synchronize()
            runs.append({"y": y, "dx": output_bits(dx), "dw": output_bits(dw),
                         "db": None if db is None else output_bits(db)})
        entry["launches_forward"] = launches(forward)
        prepare()
        torch.cuda.synchronize()
        entry["launches_backward"] = launches(backward)
        m, k, n = case["shape"]
        rows = {"y": linear_cases.kept_rows(m, n), "dx": linear_cases.kept_rows(m, k),
                "dw": linear_cases.kept_rows(n, k)}
        entry["run_to_run"], entry["digests"] = {}, {}
        for name in OUTPUTS:
            first, second = runs[0][name], runs[1][name]
            if first is None:
                continue
            entry["run_to_run"][name] = float(np.mean(first == second))
            entry["digests"][name] = sha256(first)
            arrays[f"{case['name']}.{name}"] = first if name == "db" else first[rows[name]]
        entry["digest_inputs"] = sha256(*inputs)
        entry["seconds"] = round(time.time() - started, 3)
        kernels = [name[:50] for name, _, _ in entry["launches_forward"] +
                   entry["launches_backward"]]
        print(f"{case['name']}: ok, run-to-run {entry['run_to_run']}, {'; '.join(kernels)}",
              flush=True)
    except Exception as error:  # recorded, the sweep goes on
        entry["error"] = f"{type(error).__name__}: {error}"[:2000]
        traceback.print_exc()
        print(f"{case['name']}: ERROR {entry['error'][:200]}", flush=True)
    return entry


def main(argv=None):
    args = arguments(argv, __doc__, "record_linear")
    os.makedirs(args.out, exist_ok=True)
    summary = environment(linear_cases.SEED)
    summary["outputs_kept"] = linear_cases.OUTPUTS_KEPT
    summary["cases"] = {}
    arrays = {}
    for case in linear_cases.cases():
        if args.only in case["name"]:
            summary["cases"][case["name"]] = record_case(case, linear_cases.SEED, arrays)
    np.savez_compressed(os.path.join(args.out, "linear.npz"), **arrays)
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    errors = sum("error" in e for e in summary["cases"].values())
    print(f"recorded {len(summary['cases']) - errors} cases, {errors} errors", flush=True)
    return 0
