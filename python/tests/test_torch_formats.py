"""Formats follow the tensors' dtypes unless told otherwise: fp16 tensors emulate fp16, float32
fp32, bf16 bf16, in simprec.torch.attention, simprec.attention and simprec.validate; an explicit
format= still wins."""

import numpy as np
import torch

import simprec
import simprec.torch as storch

SHAPE = (1, 2, 40, 16)


def tensors(dtype, seed=11):
    g = simprec.generate("normal", SHAPE, seed=seed, backward=True)
    return {n: torch.from_numpy(g[n]).to(dtype) for n in g}


def bits(t):
    """fp16/bf16 tensor -> its uint16 encodings."""
    return t.view(torch.int16).numpy().view(np.uint16)


def emulated(t, fmt, input_format):
    """simprec.attention on the same inputs with an explicit format (the expected bits)."""
    args = [bits(t[n]) if input_format else t[n].double().numpy() for n in ("q", "k", "v", "do")]
    return simprec.attention(*args, numerics="fa2", format=fmt, input_format=input_format,
                             reference=False, baseline=False)


def forward_backward(t, **options):
    q, k, v = (t[n].clone().requires_grad_(True) for n in "qkv")
    o = storch.attention(q, k, v, numerics="fa2", **options)
    o.backward(t["do"])
    return o.detach(), q.grad


def test_fp16_tensors_emulate_fp16_by_default():
    t = tensors(torch.float16)
    o, dq = forward_backward(t)
    fp16 = emulated(t, "fp16", "fp16")
    assert fp16.o_format == "fp16"
    assert np.array_equal(o.double().numpy(), fp16.o)
    assert np.array_equal(dq.double().numpy(), fp16.dq)
    # bf16 (the former default) gives other values: the test tells the two apart.
    bf16 = emulated(t, "bf16", "fp16")
    assert not np.array_equal(o.double().numpy(), bf16.o)


def test_float32_tensors_emulate_fp32_and_bf16_tensors_bf16():
    t = tensors(torch.float32)
    o, _ = forward_backward(t)
    assert np.array_equal(o.double().numpy(), emulated(t, "fp32", None).o)
    assert not np.array_equal(o.double().numpy(), emulated(t, "bf16", None).o)
    t = tensors(torch.bfloat16)
    o, _ = forward_backward(t)
    assert np.array_equal(o.double().numpy(), emulated(t, "bf16", "bf16").o)


def test_an_explicit_format_wins():
    t = tensors(torch.float16)
    o, dq = forward_backward(t, format="bf16")
    bf16 = emulated(t, "bf16", "fp16")
    assert np.array_equal(o.double().numpy(), bf16.o)
    assert np.array_equal(dq.double().numpy(), bf16.dq)


def test_simprec_attention_follows_the_encodings_format():
    t = tensors(torch.float16)
    from_tensors = simprec.attention(t["q"], t["k"], t["v"], reference=False, baseline=False)
    from_bits = simprec.attention(bits(t["q"]), bits(t["k"]), bits(t["v"]), input_format="fp16",
                                  reference=False, baseline=False)
    assert from_tensors.o_format == from_bits.o_format == "fp16"
    assert np.array_equal(from_tensors.o, emulated(t, "fp16", "fp16").o)
    assert np.array_equal(from_bits.o, from_tensors.o)
    # Float values carry no format: bf16, as documented.
    g = simprec.generate("normal", SHAPE, seed=11)
    assert simprec.attention(g["q"], g["k"], g["v"], reference=False).o_format == "bf16"


def test_validate_follows_the_given_inputs_format():
    t = tensors(torch.float16)

    def fp16_kernel(q, k, v):
        return storch.attention(q, k, v, numerics="fa2", format="fp16")

    report = simprec.validate(fp16_kernel, inputs=(t["q"], t["k"], t["v"]), verbose=False)
    assert report.bit_exact and "model=fa2,format=fp16" in report.text
