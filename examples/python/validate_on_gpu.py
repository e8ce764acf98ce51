#!/usr/bin/env python3
"""Validates Python attention kernels on the GPU against simprec's emulation, through
simprec.validate, each against the numerics spec that describes it: PyTorch's SDPA flash
backend (preset torch-flash, forward and backward), FlexAttention through torch.compile (preset
torch-flex, forward and backward) and the Triton kernel of triton_flash_forward.py (its spec
TRITON_FLASH_FORWARD_SPEC of simprec.recordings.triton_example, which states the H100's
ex2.approx, div.full and libdevice log2f itself and must be bit-exact), FlexAttention with the
GPU's exp2 (tl.exp2, the same ex2.approx instruction), each on normal and repeated-maximum
inputs, plain and causal.
Writes every report to OUT_DIR and a
summary line per validation to OUT_DIR/summary.txt. Needs a CUDA GPU, PyTorch 2.x (FlexAttention
from 2.5) and Triton; what is missing is reported as not run, never as passed.

Run through scripts/gpu_python_check.sh, or:
  PYTHONPATH=build/python:examples/python python3 examples/python/validate_on_gpu.py OUT_DIR
"""

import sys
import traceback
from pathlib import Path

import torch
import torch.nn.functional as F

import simprec
from simprec.recordings.triton_example import TRITON_FLASH_FORWARD_SPEC


def sdpa_flash(q, k, v, is_causal=False, scale=None):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        return F.scaled_dot_product_attention(q, k, v, is_causal=is_causal, scale=scale)


_compiled_flex = []


def flex(q, k, v, is_causal=False, scale=None):
    # FlexAttention is a Triton kernel only under torch.compile: called directly it runs an
    # eager reference implementation, which is not what anyone trains with.
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    if not _compiled_flex:
        _compiled_flex.append(torch.compile(flex_attention))
    mask = None
    if is_causal:
        n = q.shape[-2]
        mask = create_block_mask(lambda b, h, qi, ki: qi >= ki, None, None, n, n,
                                 device=q.device)
    o, lse = _compiled_flex[0](q, k, v, block_mask=mask, scale=scale, return_lse=True)
    return {"O": o, "LSE": lse}


def triton_kernel(q, k, v, is_causal=False, scale=None):
    from triton_flash_forward import flash_forward
    o, lse = flash_forward(q, k, v, is_causal=is_causal, scale=scale)
    return {"O": o, "LSE": lse}


def triton_exp2(x):
    from triton_flash_forward import device_exp2
    return device_exp2(x)


CASES = [
    # name, function, numerics, site overrides, backward, the device's exp2, bit-exact required
    ("sdpa_flash", sdpa_flash, "torch-flash", [], True, None, False),
    # The backward pass from the kernel's O and natural-log LSE: torch-flex's backward reads the
    # base-2 LSE, recovered from the natural one (where two fp32 values report the same natural
    # LSE, the nearer to lse / ln 2: docs/torch_kernels.md).
    ("flex_attention", flex, "torch-flex", [], True, triton_exp2, False),
    # Its spec states the device's ex2.approx, rcp.approx and log2f itself (device_math=sm90):
    # bit-identical on every recorded case (python/tests/test_triton_example.py), so required.
    ("triton_flash_forward", triton_kernel, TRITON_FLASH_FORWARD_SPEC, [], False, None, True),
]


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "gpu_python_out")
    out.mkdir(parents=True, exist_ok=True)
    summary = []
    for name, fn, numerics, sets, backward, exp2, bit_exact in CASES:
        for kind in ("normal", "repeated-max"):
            for causal in (False, True):
                label = " ".join([name, numerics, *sets, kind] + (["causal"] if causal else []))
                try:
                    report = simprec.validate(
                        fn, numerics=numerics, format="bf16", generate=kind,
                        shape=(2, 4, 512, 64), seed=1, backward=backward, causal=causal,
                        set=sets, exp2=exp2, device="cuda", name=name,
                        require_bit_exact=bit_exact, verbose=False)
                except Exception:  # a kernel that cannot run here: say so, never count a pass
                    detail = traceback.format_exc()
                    (out / f"{label.replace(' ', '_').replace('=', '-')}.txt").write_text(detail)
                    summary.append(f"NOT RUN {label}: {detail.strip().splitlines()[-1]}")
                    continue
                (out / f"{label.replace(' ', '_').replace('=', '-')}.txt").write_text(report.text)
                agreement = ", ".join(
                    f"{o['name']} {100.0 * o['bitwise_equal'] / max(o['values'], 1):.4g}%"
                    for o in report.outputs)
                verdict = "BIT-EXACT" if report.bit_exact else "FAIL" if bit_exact else "DIFFERENT"
                summary.append(f"{verdict} {label}: bitwise-equal {agreement}")
    text = "\n".join(summary) + "\n"
    (out / "summary.txt").write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
