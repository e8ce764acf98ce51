"""simprec.validate on Python kernels: the report of `simprec validate`, PASS when the kernel
computes the numerics bit for bit, FAIL when a bit differs."""

import numpy as np
import pytest
import torch

import simprec
import simprec.torch as storch


def emulated_kernel(q, k, v, is_causal=False, scale=None):
    return storch.attention(q, k, v, is_causal=is_causal, scale=scale, numerics="fa2")


def test_a_kernel_that_computes_the_numerics_passes_forward_and_backward():
    report = simprec.validate(emulated_kernel, numerics="fa2", generate="repeated-max",
                              shape=(2, 2, 64, 32), seed=3, backward=True, causal=True,
                              verbose=False)
    assert report.passed and report.bit_exact
    lines = report.text.splitlines()
    assert lines[0].startswith("validate plugin=python kernel=emulated_kernel "
                               "kind=attention_backward model=fa2,format=bf16")
    assert lines[1] == "numerics fa2,format=bf16"
    assert "input Q format=bf16 shape=[2,2,64,32]" in lines
    names = [o["name"] for o in report.outputs]
    assert names == ["O", "dQ", "dK", "dV"]
    for o in report.outputs:
        assert o["bitwise_equal"] == o["values"]
        assert o["kernel_mean_signed_error"] == o["emulation_mean_signed_error"]
    assert lines[-1] == "result PASS bit-exact as claimed"


def test_one_ulp_off_fails_with_its_histogram():
    def off_by_one_ulp(q, k, v):
        o = emulated_kernel(q, k, v)
        bits = o.view(torch.int16).clone()
        bits.view(-1)[5] += 1
        return bits.view(torch.bfloat16)

    report = simprec.validate(off_by_one_ulp, generate="normal", shape=(1, 2, 32, 16),
                              verbose=False)
    assert not report.passed
    o = report.outputs[0]
    assert o["values"] - o["bitwise_equal"] == 1
    assert o["ulp_histogram"] == [(0, 0, o["values"] - 1), (1, 1, 1)]
    assert report.text.splitlines()[-1].startswith("result FAIL")


def test_numpy_kernels_and_given_inputs():
    g = simprec.generate("normal", (1, 1, 32, 8), seed=2)

    def numpy_attention(q, k, v):
        s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
        p = np.exp(s - s.max(axis=-1, keepdims=True))
        return (p / p.sum(axis=-1, keepdims=True)) @ v

    report = simprec.validate(numpy_attention, numerics="fp64", format="fp64",
                              inputs=(g["q"], g["k"], g["v"]), require_bit_exact=False,
                              verbose=False)
    o = report.outputs[0]
    assert report.passed  # no bit-exact claim
    # Plain double attention is close to the exact reference: within 2^12 ulps of fp64 (1e-12
    # relative) at N = 32.
    assert 0 < o["max_abs_ulps"] < 2**12
    assert "reference kernel-mean-signed-error" in report.text


def test_validate_errors():
    with pytest.raises(ValueError, match="give inputs=.* or generate=KIND"):
        simprec.validate(emulated_kernel)
    with pytest.raises(TypeError, match="kernel output O: dtype float32, expected uint16"):
        simprec.validate(lambda q, k, v: emulated_kernel(q, k, v).float(), generate="normal",
                         shape=(1, 1, 16, 8), verbose=False)
    with pytest.raises(ValueError, match="kernel output O: shape"):
        simprec.validate(lambda q, k, v: emulated_kernel(q, k, v)[..., :4], generate="normal",
                         shape=(1, 1, 16, 8), verbose=False)


def test_a_device_exp2_replaces_the_correctly_rounded_one():
    calls = []

    def exp2_one_percent_high(x):
        calls.append(len(x))
        return (np.exp2(x.astype(np.float64)) * 1.01).astype(np.float32)

    plain = simprec.validate(emulated_kernel, generate="normal", shape=(1, 1, 64, 16),
                             verbose=False)
    shifted = simprec.validate(emulated_kernel, generate="normal", shape=(1, 1, 64, 16),
                               exp2=exp2_one_percent_high, verbose=False)
    assert plain.bit_exact and calls and not shifted.bit_exact


def test_given_torch_inputs_with_do_are_used_as_given():
    g = simprec.generate("low-rank", (1, 2, 32, 16), seed=5, backward=True)
    q, k, v, do = (torch.from_numpy(g[n]).to(torch.bfloat16) for n in ("q", "k", "v", "do"))
    report = simprec.validate(emulated_kernel, inputs=(q, k, v, do), verbose=False)
    assert report.passed and [o["name"] for o in report.outputs] == ["O", "dQ", "dK", "dV"]
    with pytest.raises(ValueError, match=r"inputs: expected \(q, k, v\) or \(q, k, v, do\)"):
        simprec.validate(emulated_kernel, inputs=(q, k), verbose=False)
