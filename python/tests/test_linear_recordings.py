"""F.linear forward and backward recorded on an H200 (tests/data/linear: cuBLAS through PyTorch
2.11, bf16 and fp16, with and without a bias) against simprec.gemm: the expected bits are the
GPU's. Each of the three GEMMs runs cuBLAS's preset for the dtype with the piece length its
launch ran; the controls show what the bits rest on."""

import os

import numpy as np
import pytest

import simprec
from simprec.gemm import gemm
from simprec.recordings import compare_linear, linear_cases
from simprec.recordings.bits import format_bits, format_values

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "linear")
SUMMARY, ARRAYS = compare_linear.load(DATA)


@pytest.mark.parametrize("name", [
    "linear.bf16.bias.256x256x256",      # fitting set
    "linear.fp16.bias.64x768x3072",      # held out; dX split K
    "linear.bf16.nobias.4096x512x128",   # held out; dW split K
    "linear.fp16.nobias.96x2048x160",    # held out
])
def test_forward_and_backward_gemms_reproduce_the_recording(name):
    entry = SUMMARY["cases"][name]
    got = compare_linear.emulate(entry, SUMMARY["seed"])
    for output in ("y", "dx", "dw"):
        want = ARRAYS[f"{name}.{output}"]
        np.testing.assert_array_equal(got[output].reshape(want.shape), want, err_msg=output)


def test_the_backward_split_k_is_what_the_weight_gradient_rests_on():
    # dW = dY^T x sums over 4096 tokens; cuBLAS cut them into the pieces its grid shows. One
    # chain over all of them misses.
    name = "linear.bf16.nobias.4096x512x128"
    entry = SUMMARY["cases"][name]
    launch = compare_linear._gemm_launch(entry["launches_backward"], "NT")
    assert "splitK" in launch[0]
    assert compare_linear.split_length(launch, 128, 512, 4096) is not None
    x_bits, _, _, dy_bits = linear_cases.operands(SUMMARY["seed"], entry)
    x, dy = format_values(x_bits, "bf16"), format_values(dy_bits, "bf16")
    rows = linear_cases.kept_rows(128, 512)
    one_chain = format_bits(
        gemm(np.ascontiguousarray(dy.T[rows]), x, numerics="cublas-bf16"), "bf16")
    want = ARRAYS[f"{name}.dw"]
    assert not np.array_equal(one_chain.reshape(want.shape), want)


def test_the_bias_is_added_in_fp32_before_the_cast():
    # Rounding x W^T to bf16 first and adding the bias after (two roundings) misses outputs the
    # epilogue's one rounding gets right.
    name = "linear.bf16.bias.256x256x256"
    entry = SUMMARY["cases"][name]
    x_bits, w_bits, b_bits, _ = linear_cases.operands(SUMMARY["seed"], entry)
    x, w, b = (format_values(bits, "bf16") for bits in (x_bits, w_bits, b_bits))
    rows = linear_cases.kept_rows(256, 256)
    rounded = gemm(np.ascontiguousarray(x[rows]), np.ascontiguousarray(w.T), numerics="cublas-bf16")
    twice = format_bits(simprec.round(rounded + b, "bf16"), "bf16")
    want = ARRAYS[f"{name}.y"]
    assert np.mean(twice.reshape(want.shape) == want) < 0.999


def test_every_case_agreed_with_itself_run_to_run():
    assert len(SUMMARY["cases"]) == len(linear_cases.cases()) == 28
    for entry in SUMMARY["cases"].values():
        assert set(entry["run_to_run"].values()) == {1.0}
