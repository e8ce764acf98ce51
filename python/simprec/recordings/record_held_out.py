"""Records FlexAttention (torch.compile) and PyTorch's SDPA flash backend on a GPU, forward and
backward, on the inputs examples/python/validate_on_gpu.py generates (simprec.recordings.held_out:
shapes, inputs and a generator none of the presets was described from, the held-out check of
docs/torch_kernels.md).

    PYTHONPATH=build/python:examples/python python3 scripts/record_held_out_attention.py OUT_DIR

writes OUT_DIR/capture_flex.npz and OUT_DIR/capture_sdpa.npz (every output of every run, keys
KERNEL.KIND.causalC.runR.OUTPUT; bf16 outputs as their bit patterns). SDPA's public call gives
no LSE, so it is recorded for FlexAttention only; SDPA is recorded on repeated-max inputs.
scripts/extract_held_out_attention.py keeps one head of these for tests/data/torch_held_out.
The inputs come from simprec's generator: this recorder needs the built C++ extension.
"""

import argparse
import os

import numpy as np

import simprec
from simprec._extension import missing
from simprec.recordings.examples import import_example
from simprec.recordings.held_out import SCALE, SEED, SHAPE, capture_file
from simprec.validation import _as_kernel_inputs, _kernel_output_arrays


def record(name, fn, kinds, out_dir):
    """Runs fn (a validate_on_gpu kernel) twice per input kind, plain and causal, and writes
    OUT_DIR/capture_NAME.npz."""
    import torch
    out = {}
    for kind in kinds:
        for causal in (False, True):
            g = simprec.generate(kind, SHAPE, seed=SEED, backward=True)
            encoded = [simprec.round(g[n], "bf16", encode=True) for n in ("q", "k", "v", "do")]
            q, k, v, do = _as_kernel_inputs(encoded, "bf16", "cuda", True)
            for run in range(2):
                qq, kk, vv = (t.detach().clone().requires_grad_(True) for t in (q, k, v))
                kwargs = {"scale": SCALE, **({"is_causal": True} if causal else {})}
                result = fn(qq, kk, vv, **kwargs)
                o = result if torch.is_tensor(result) else result["O"]
                dq, dk, dv = torch.autograd.grad(o, (qq, kk, vv), do)
                arrays = _kernel_output_arrays(result, {"dQ": dq, "dK": dk, "dV": dv})
                for key, array in arrays.items():
                    out[f"{name}.{kind}.causal{int(causal)}.run{run}.{key}"] = array
            print(name, kind, "causal" if causal else "plain", "recorded", flush=True)
    np.savez_compressed(os.path.join(out_dir, capture_file(name)), **out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", nargs="?", default="held_out")
    args = parser.parse_args(argv)
    if missing():
        raise SystemExit(f"record_held_out_attention: the inputs come from simprec's generator, "
                         f"which needs the C++ extension; it did not import ({missing()}): run "
                         "with PYTHONPATH=build/python:examples/python, a build for this Python")
    kernels = import_example("validate_on_gpu", "record_held_out_attention")
    os.makedirs(args.out, exist_ok=True)
    record("flex", kernels.flex, ("repeated-max", "normal"), args.out)
    record("sdpa", kernels.sdpa_flash, ("repeated-max",), args.out)
    return 0
