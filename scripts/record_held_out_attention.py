#!/usr/bin/env python3
"""Records FlexAttention (torch.compile) and PyTorch's SDPA flash backend on a GPU, forward and
backward, on the inputs examples/python/validate_on_gpu.py generates: simprec's own generator
(normal and repeated-max, B = 2, H = 4, N = 512, d = 64, seed 1, rounded to bf16), scale 1/8,
plain and causal, each run twice (the second run gives the run-to-run agreement). These are
shapes, inputs and a generator none of the presets was described from: the held-out check of
docs/torch_kernels.md.

    PYTHONPATH=BUILD/python python3 scripts/record_held_out_attention.py OUT_DIR

writes OUT_DIR/capture_flex.npz and OUT_DIR/capture_sdpa.npz (every output of every run, keys
KERNEL.KIND.causalC.runR.OUTPUT; bf16 outputs as their bit patterns). SDPA's public call gives
no LSE, so it is recorded for FlexAttention only; SDPA is recorded on repeated-max inputs.
scripts/extract_held_out_attention.py keeps one head of these for tests/data/torch_held_out.
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples", "python"))
from simprec import _core  # noqa: E402
from simprec.validation import _as_kernel_inputs, _kernel_output_arrays  # noqa: E402
import validate_on_gpu  # noqa: E402

SHAPE = [2, 4, 512, 64]
SEED = 1
SCALE = 0.125


def record(name, fn, kinds, out_dir):
    out = {}
    for kind in kinds:
        for causal in (False, True):
            g = _core.generate(kind, SHAPE, seed=SEED, backward=True)
            encoded = [_core.round(g[n], "bf16", encode=True) for n in ("q", "k", "v", "do")]
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
    np.savez_compressed(os.path.join(out_dir, f"capture_{name}.npz"), **out)


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "held_out"
    os.makedirs(out_dir, exist_ok=True)
    record("flex", validate_on_gpu.flex, ("repeated-max", "normal"), out_dir)
    record("sdpa", validate_on_gpu.sdpa_flash, ("repeated-max",), out_dir)


if __name__ == "__main__":
    main()
