"""Recordings as simprec.discover's cases: one recorded head of PyTorch's flash, memory-efficient
or FlexAttention kernels (tests/data/torch_kernels, tests/data/torch_held_out_sweep; layout.py)
or one case of the Triton example (tests/data/triton_example), its inputs regenerated and checked
against the recording's digest exactly as compare_torch and compare_triton do, its outputs on the
rows the recording kept. The facts of the call that a one-head emulation needs (the batch x heads
the dispatch weighs, the SM count, the lengths a FlexAttention graph was first compiled for) are
the case's `given` items, which the search never moves."""

import json
import math
import os

import numpy as np

from simprec.recordings import layout
from simprec.recordings.bits import sha256
from simprec.recordings.compare_torch import kernel_scale
from simprec.recordings.flex_compile import compiled_for_of
from simprec.recordings.inputs import SEED, heads_bf16_bits
from simprec.recordings.layout import RecordingError
from simprec.recordings.triton_example import CASES, case_inputs


def torch_case(data, kernel, name, gradients=True, summary=None):
    """The case of shape `name` of `kernel` (flash, efficient, flex) in recording folder `data`:
    Q, K, V (and dO with gradients) as bf16 encodings [1, 1, S, d], the kept rows of O (and dQ,
    dK, dV), the whole LSE. Raises RecordingError where the regenerated inputs are not the
    recorded ones."""
    summary = summary or layout.load_summary(data, kernel)
    b_, h_, sq, sk, d, causal, kind = layout.shape_of(summary, name)
    recorded = layout.load_head(data, kernel, name)
    inputs = heads_bf16_bits(kind, sq, sk, d, summary.get("seed", SEED), [(b_ - 1, h_ - 1)])
    if sha256(*inputs) != str(recorded["digest_inputs"]):
        raise RecordingError(f"{name}: the regenerated inputs differ from the recording's")
    q, k, v, do = (t.reshape(1, 1, -1, d) for t in inputs)
    given = [f"batch_heads={b_ * h_}", f"sms={summary['multiprocessors']}"]
    if kernel == "flex":
        given.append(f"compiled_for={compiled_for_of(summary, name)}")
    outputs = {"O": recorded["o"], "LSE": recorded["lse"].astype(np.float32)}
    case = dict(label=f"{kernel}/{name}", q=q, k=k, v=v, input_format="bf16",
                output_format="bf16", causal=bool(causal), scale=kernel_scale(d), given=given,
                rows=recorded["o_rows"], key_rows=recorded["k_rows"], outputs=outputs)
    if gradients:
        case["do"] = do
        outputs.update(dQ=recorded["dq"], dK=recorded["dk"], dV=recorded["dv"])
    return case


def triton_case(data, name):
    """The case `name` of the Triton example's recording in folder `data`: every head, every row
    of O and the LSE (the kernel is forward only; scale 1/sqrt(d) as the recording passed it)."""
    _, _, _, d, causal, _ = CASES[name]
    path = os.path.join(data, name + ".npz")
    if not os.path.exists(path):
        raise RecordingError(f"{path}: no recording of case {name}")
    recorded = np.load(path)
    q, k, v = case_inputs(name)
    if sha256(q, k, v) != str(recorded["digest_inputs"]):
        raise RecordingError(f"{name}: the regenerated inputs differ from the recording's")
    return dict(label=f"triton/{name}", q=q, k=k, v=v, input_format="bf16", output_format="bf16",
                causal=causal, scale=1.0 / math.sqrt(d),
                outputs={"O": recorded["o"], "LSE": recorded["lse"].astype(np.float32)})


def stranger_triton_case(data, name, variant="exp"):
    """The case `name` of the stranger's Triton kernel in its variant `variant` (exp: tl.exp,
    exp2: tl.exp2 of the score times scale log2 e) as scripts/record_stranger_triton.py recorded
    it in folder `data` (stranger_triton.py): fp16 inputs, every row of O and the LSE, the scale
    1/sqrt(d) (the kernel multiplies by its float32 rounding, times log2 e in exp2)."""
    from simprec.recordings import stranger_triton
    _, _, _, d, causal, _ = stranger_triton.CASES[name]
    if variant not in stranger_triton.VARIANTS:
        raise ValueError(f"variant {variant!r}: expected one of {', '.join(stranger_triton.VARIANTS)}")
    path = os.path.join(data, f"{variant}-{name}.npz")
    if not os.path.exists(path):
        raise RecordingError(f"{path}: no recording of case {name}")
    recorded = np.load(path)
    q, k, v = stranger_triton.case_inputs(name)
    if sha256(q, k, v) != str(recorded["digest_inputs"]):
        raise RecordingError(f"{name}: the regenerated inputs differ from the recording's")
    scale = 1 / math.sqrt(d) if variant == "exp2" else float(np.float32(1 / math.sqrt(d)))
    return dict(label=f"triton-stranger-{variant}/{name}", q=q, k=k, v=v, input_format="fp16",
                output_format="fp16", causal=causal, scale=scale,
                outputs={"O": recorded["o"], "LSE": recorded["lse"].astype(np.float32)})


def variant_case(data, name, gradients=True):
    """Case `name` of the attention-variant recordings in folder `data` (tests/data/torch_variants,
    variants.py) as a discovery case: the recorded head (batch B-1, query head H-1; K, V of its
    key/value head) as bf16 or fp16 encodings [1, 1, S, d], its kept rows, its LSE. Only for
    cases without a mask or score modification beyond is_causal and without grouped heads (one
    head then is the whole computation of that head)."""
    from simprec.recordings import variants
    case = variants.CASES[name]
    if case.mask not in (None, "causal") or case.score_mod or case.heads_kv != case.heads:
        raise RecordingError(f"{name}: a discovery case needs a plain or causal recording")
    recorded = np.load(os.path.join(data, "cases", name + ".npz"))
    with open(os.path.join(data, layout.SUMMARY)) as f:
        summary = json.load(f)
    b, h = case.batch - 1, case.heads - 1
    q, do = variants.head_draw(case, b, h, 0)
    k, v = variants.head_draw(case, b, h, 1)
    import torch

    from simprec.recordings.bits import tensor_bits
    dtype = variants.torch_dtype(case)
    bits = [tensor_bits(torch.from_numpy(x).to(dtype)).reshape(1, 1, -1, case.d)
            for x in (q, k, v, do)]
    scale = case.scale if case.scale is not None else variants.default_scale(case.d)
    outputs = {"O": recorded["o"], "LSE": recorded["lse"].astype(np.float32)}
    result = dict(label=name, q=bits[0], k=bits[1], v=bits[2], input_format=case.dtype,
                  output_format=case.dtype, causal=case.mask == "causal",
                  scale=float(np.float32(scale)), rows=recorded["o_rows"],
                  key_rows=recorded["k_rows"], outputs=outputs,
                  given=[f"batch_heads={case.batch * case.heads}",
                         f"sms={summary['multiprocessors']}"])
    if gradients:
        result["do"] = bits[3]
        outputs.update(dQ=recorded["dq"], dK=recorded["dk"], dV=recorded["dv"])
    return result
