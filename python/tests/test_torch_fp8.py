"""simprec.torch.DelayedScaling against Transformer Engine's delayed scaling as its CUDA kernel
(transformer_engine/common/recipe/delayed_scaling.cu) states it, transcribed here step by step
(the roll writes history[i] = old[i + 1], the last slot old[0], slot 0 zero; amax = the max of
the old history; scale = scaled_max / amax in fp32 when amax is finite and positive, else the
old scale; FLT_MAX for an infinite quotient), and the FP8 GEMMs on data whose e4m3 products and
fp32 sums are exact, where the result must be the exact product times the scales."""

import numpy as np
import pytest
import torch

import simprec
import simprec.gemm
import simprec.torch as storch
from simprec._torch_fp8 import ScalingState


def te_update(history, scale, fp8_max, margin, algorithm):
    """One amax-and-scale update, as the CUDA kernel writes it (float32 throughout)."""
    length = history.size
    updated = np.zeros_like(history)
    amax = np.float32(0)
    for i in range(length):
        a = history[i + 1] if i < length - 1 else history[0]
        amax = max(amax, a)
        updated[i] = a if i > 0 else 0
    if algorithm == "most_recent":
        amax = history[0]
    scaled_max = np.float32(fp8_max) * np.float32(2.0) ** np.float32(-margin)
    with np.errstate(over="ignore"):
        new = np.float32(scaled_max / amax) if np.isfinite(amax) and amax > 0 else scale
    if np.isinf(new):
        new = np.float32(np.finfo(np.float32).max)
    return updated, new


@pytest.mark.parametrize("algorithm", ["max", "most_recent"])
@pytest.mark.parametrize("length", [1, 3, 5])
def test_scaling_state_follows_transformer_engines_update(algorithm, length):
    rng = np.random.default_rng(length)
    amaxes = np.exp(rng.normal(0, 3, 40)).astype(np.float32)
    amaxes[[7, 19]] = 0  # an all-zero tensor keeps the scale
    amaxes[25] = np.float32(1e-38)  # 448 / amax overflows fp32: FLT_MAX
    state = ScalingState(length)
    history, scale = np.zeros(length, np.float32), np.float32(1)
    for amax in amaxes:
        x = np.array([amax, -amax / 2, 0], dtype=np.float32)
        q, scale_inv = state.quantize(x, "e4m3fn", 1, algorithm)
        assert scale_inv == np.float32(np.float32(1) / scale)
        with np.errstate(over="ignore"):
            scaled = (x * scale).astype(np.float32)
        assert np.array_equal(q, simprec.round(scaled, "e4m3fn", overflow="saturate"))
        history[0] = amax
        history, scale = te_update(history, scale, 448.0, 1, algorithm)
        assert state.scale == scale and np.array_equal(state.history, history)


def test_quantization_saturates():
    state = ScalingState(1)
    q, _ = state.quantize(np.array([1000.0, -1e9, 3.0], np.float32), "e4m3fn", 0, "max")
    assert q.tolist() == [448.0, -448.0, 3.0]
    q, _ = state.quantize(np.array([1e6], np.float32), "e4m3fn", 0, "max")  # scale 448/1e9 now
    assert state.scale == np.float32(np.float32(448.0) / np.float32(1e6))


def exact_operands():
    """x with amax 3.5 and w with amax 7: scales 448/3.5 = 128 and 448/7 = 64, powers of two;
    the other entries k/2048 and k/1024 (|k| <= 7) scale to k/16, e4m3 values, while unscaled
    they fall below e4m3's smallest subnormal step (2^-9) and lose bits."""
    g = torch.Generator().manual_seed(0)
    x = torch.randint(-7, 8, (64, 160), generator=g).float() / 2048
    x[0, 0] = 3.5
    w = torch.randint(-7, 8, (24, 160), generator=g).float() / 1024
    w[0, 0] = 7.0
    return x, w


def test_fp8_linear_on_exact_data_is_the_exact_product_from_the_second_step():
    x, w = exact_operands()
    b = torch.full((24,), 0.5)
    recipe = storch.DelayedScaling(fp8_format="e4m3", amax_history_len=4)
    for step in range(3):
        y = recipe.linear(x, w, b)
        scales = recipe.state(w)
        exact = (x.double() @ w.double().T + 0.5).to(torch.bfloat16).float()
        if step == 0:  # scale 1: the small entries lose bits
            assert not torch.equal(y, exact)
        else:
            assert torch.equal(y, exact)
        assert scales["input"].scale == 128 and scales["weight"].scale == 64


@pytest.mark.parametrize("fp8_format, grad_format, backward_model", [
    ("hybrid", "e5m2", "tc:sm90-wgmma-e5m2-e4m3"),
    ("e4m3", "e4m3fn", "tc:sm90-wgmma-e4m3"),
])
def test_fp8_gemms_are_simprec_gemm_with_the_recipes_settings(fp8_format, grad_format,
                                                             backward_model):
    torch.manual_seed(1)
    x = torch.randn(48, 256, requires_grad=True)
    w = torch.randn(32, 256, requires_grad=True)

    def fp8(t, scale, fmt):
        return simprec.round((t.detach().numpy() * scale).astype(np.float32), fmt,
                             overflow="saturate")

    for promote in (128, None):
        recipe = storch.DelayedScaling(fp8_format=fp8_format, promote_every=promote)
        s = recipe.state(w)
        sx, sw = s["input"].scale, s["weight"].scale
        xq, wq = fp8(x, sx, "e4m3fn"), fp8(w, sw, "e4m3fn")
        y = recipe.linear(x, w)
        d = simprec.gemm.gemm(xq, np.ascontiguousarray(wq.T), model="tc:sm90-wgmma-e4m3",
                              out_format="bf16", promote_every=promote,
                              scale_a=np.float32(1) / sx, scale_b=np.float32(1) / sw)
        assert np.array_equal(y.detach().numpy(), d)
        g = torch.randn(48, 32) * 1e-3
        y.backward(g)
        gq = fp8(g, np.float32(1), grad_format)  # the gradient's scale is 1 at first
        dx = simprec.gemm.gemm(gq, wq, model=backward_model, out_format="bf16",
                               promote_every=promote, scale_a=np.float32(1),
                               scale_b=np.float32(1) / sw)
        dw = simprec.gemm.gemm(np.ascontiguousarray(gq.T), xq, model=backward_model,
                               out_format="bf16", promote_every=promote, scale_a=np.float32(1),
                               scale_b=np.float32(1) / sx)
        assert np.array_equal(x.grad.numpy(), dx)
        assert np.array_equal(w.grad.numpy(), dw)
        x.grad = w.grad = None


def test_state_dict_round_trip():
    x, w = exact_operands()
    model = torch.nn.Linear(160, 24)
    with torch.no_grad():
        model.weight.copy_(w)
    recipe = storch.DelayedScaling(amax_history_len=3, fp8_format="e4m3")
    with storch.emulate(model, linear=recipe):
        model(x).sum().backward()
    saved = recipe.state_dict(model)
    other = storch.DelayedScaling(amax_history_len=3, fp8_format="e4m3")
    other.load_state_dict(model, saved)
    assert other.state_dict(model) == saved
    assert saved["weight"]["weight"]["scale"] == 64.0
    with pytest.raises(ValueError, match="an amax history of 3; expected 4"):
        storch.DelayedScaling(amax_history_len=4).load_state_dict(model, saved)


@pytest.mark.parametrize("keywords, error, message", [
    (dict(fp8_format="e5m2"), ValueError, "fp8_format='e5m2': expected one of hybrid, e4m3"),
    (dict(amax_history_len=0), ValueError, "amax_history_len=0: expected a positive integer"),
    (dict(amax_compute_algo="mean"), ValueError, "expected 'max' or 'most_recent'"),
    (dict(promote_every={"fprp": 128}), TypeError, "did you mean 'fprop'"),
    (dict(promote_every=0), ValueError, "promote_every=0: expected a positive number"),
    (dict(out_format="e4m3"), ValueError, "out_format='e4m3': expected one of fp32, bf16"),
    (dict(margin="1"), TypeError, "margin='1': expected a margin"),
])
def test_bad_recipe_arguments_are_named(keywords, error, message):
    with pytest.raises(error, match=message):
        storch.DelayedScaling(**keywords)
