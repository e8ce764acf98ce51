"""simprec.torch.linear and simprec.torch.matmul: the forward GEMM and the two backward GEMMs go
through simprec.gemm.gemm with their own settings, the bias as cuBLASLt's epilogue adds it, and
the defaults follow the tensors' dtype. Two kinds of expected values: simprec.gemm.gemm called
by hand on the operands the test rounds itself (the wiring), and, on small dyadic numbers whose
products and sums every arithmetic here computes exactly, torch's own float64 results (an oracle
independent of simprec)."""

import numpy as np
import pytest
import torch

import simprec
import simprec.gemm
import simprec.torch as storch

BF16 = "tc:sm90-wgmma-bf16"


def dyadic(shape, seed, bound=8, denominator=8):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(-bound, bound + 1, shape, generator=g).float() / denominator


def rounded(t, fmt):
    return simprec.round(t.detach().float().numpy().copy(), fmt)


def test_linear_on_exact_data_is_the_exact_product_with_its_gradients():
    x = dyadic((2, 3, 48), 0).bfloat16().requires_grad_(True)
    w = dyadic((16, 48), 1).bfloat16().requires_grad_(True)
    b = dyadic((16,), 2).bfloat16().requires_grad_(True)
    y = storch.linear(x, w, b)
    assert y.dtype == torch.bfloat16 and y.shape == (2, 3, 16)
    x64, w64, b64 = (t.detach().double().requires_grad_(True) for t in (x, w, b))
    y64 = torch.nn.functional.linear(x64, w64, b64)
    # The fp32 sums are exact, so each output is the exact value rounded once to bf16.
    assert torch.equal(y, y64.to(torch.bfloat16))
    g = dyadic((2, 3, 16), 3)
    y.backward(g.bfloat16())
    y64.backward(g.double())
    for t, t64 in ((x, x64), (w, w64), (b, b64)):
        assert t.grad.dtype == torch.bfloat16
        assert torch.equal(t.grad, t64.grad.to(torch.bfloat16))


def test_linear_is_gemm_with_the_bias_added_in_fp32_before_the_cast():
    torch.manual_seed(0)
    x, w, b = torch.randn(40, 64), torch.randn(24, 64), torch.randn(24)
    y = storch.linear(x, w, b, model=BF16, out_format="bf16")
    assert y.dtype == torch.float32  # float32 holds bf16's values
    d = simprec.gemm.gemm(rounded(x, "bf16"), np.ascontiguousarray(rounded(w, "bf16").T),
                          model=BF16, out_format="fp32")
    expected = simprec.round((d + rounded(b, "bf16")).astype(np.float32), "bf16")
    assert np.array_equal(y.detach().numpy(), expected)
    assert not np.array_equal(expected, simprec.round((x @ w.T + b).numpy(), "bf16"))


def test_a_gemm_numerics_spec_is_the_same_engine():
    torch.manual_seed(4)
    x, w = torch.randn(32, 512).bfloat16(), torch.randn(16, 512).bfloat16()
    b = torch.randn(16).bfloat16()
    assert torch.equal(storch.linear(x, w, b), storch.linear(x, w, b, numerics="cublas-bf16"))
    split = storch.linear(x, w, b, numerics="cublas-bf16,split_k=length:128")
    expected = simprec.gemm.gemm(rounded(x, "bf16"), np.ascontiguousarray(rounded(w, "bf16").T),
                                 model=BF16, out_format="fp32", split_k=128)
    expected = simprec.round((expected + rounded(b, "bf16")).astype(np.float32), "bf16")
    assert np.array_equal(split.float().numpy(), expected)
    # A spec's output format sets the result's dtype; the backward takes the same spec.
    xr = x.float().requires_grad_(True)
    y = storch.linear(xr, w.float(), numerics="cublas-bf16,out=fp32")
    assert y.dtype == torch.float32
    y.backward(torch.ones_like(y))
    assert torch.equal(xr.grad, storch.linear(torch.ones(32, 16), w.float().T.contiguous(),
                                              numerics="cublas-bf16,out=fp32"))


def test_backward_gemms_take_their_own_settings():
    torch.manual_seed(1)
    x = torch.randn(32, 48, requires_grad=True)
    w = torch.randn(16, 48, requires_grad=True)
    fp16 = dict(model="tc:sm90-wgmma-fp16", out_format="fp16")
    y = storch.linear(x, w, model=BF16, out_format="bf16", grad_input=fp16,
                      grad_weight=dict(model=BF16, out_format="fp32", promote_every=16))
    g = torch.randn(32, 16)
    y.backward(g)
    dx = simprec.gemm.gemm(rounded(g, "fp16"), rounded(w, "fp16"), **fp16)
    dw = simprec.gemm.gemm(np.ascontiguousarray(rounded(g, "bf16").T), rounded(x, "bf16"),
                           model=BF16, out_format="fp32", promote_every=16)
    assert np.array_equal(x.grad.numpy(), dx)
    assert np.array_equal(w.grad.numpy(), dw)
    # None: the forward's model and out_format.
    x.grad = None
    storch.linear(x, w, model=BF16, out_format="bf16").backward(g)
    assert np.array_equal(x.grad.numpy(), simprec.gemm.gemm(rounded(g, "bf16"), rounded(w, "bf16"),
                                                            model=BF16, out_format="bf16"))


def test_float64_operands_are_rounded_once():
    # 1 + 2^-8 + 2^-30: in bf16 directly 1 + 2^-7; through fp32 first 1 + 2^-8, a tie, then 1.
    x = torch.tensor([[1 + 2.0 ** -8 + 2.0 ** -30]], dtype=torch.float64)
    y = storch.linear(x, torch.ones(1, 1, dtype=torch.float64), model=BF16)
    assert y.dtype == torch.float64 and y.item() == 1 + 2.0 ** -7


def test_leading_dimensions_are_rows_of_one_gemm():
    torch.manual_seed(2)
    x, w = torch.randn(2, 5, 3, 32).bfloat16(), torch.randn(8, 32).bfloat16()
    assert torch.equal(storch.linear(x, w).reshape(-1, 8), storch.linear(x.reshape(-1, 32), w))


def test_empty_shapes_give_what_pytorch_gives():
    w = torch.ones(4, 16, dtype=torch.bfloat16)
    assert storch.linear(torch.ones(0, 16, dtype=torch.bfloat16), w).shape == (0, 4)
    assert storch.linear(torch.ones(3, 16, dtype=torch.bfloat16), w[:0]).shape == (3, 0)
    x0 = torch.ones(3, 0, dtype=torch.bfloat16, requires_grad=True)
    b = torch.full((4,), 2.0, dtype=torch.bfloat16, requires_grad=True)
    y = storch.linear(x0, w[:, :0], b)  # K = 0: sums of nothing, the bias alone
    assert torch.equal(y, torch.full((3, 4), 2.0, dtype=torch.bfloat16))
    y.float().sum().backward()
    assert x0.grad.shape == (3, 0) and torch.equal(b.grad, torch.full((4,), 3.0).bfloat16())
    assert storch.matmul(torch.ones(0, 3, 16, dtype=torch.bfloat16), w.T).shape == (0, 3, 4)


def test_output_dtypes():
    x16, w16 = torch.ones(4, 32, dtype=torch.bfloat16), torch.ones(8, 32, dtype=torch.bfloat16)
    assert storch.linear(x16, w16, out_format="fp32").dtype == torch.float32
    assert storch.linear(x16.half(), w16.half()).dtype == torch.float16
    assert storch.linear(x16.half(), w16.half(), out_format="bf16").dtype == torch.bfloat16


def test_matmul_broadcasts_and_sums_the_gradient_of_a_broadcast_operand():
    torch.manual_seed(3)
    a = torch.randn(3, 1, 16, 32).bfloat16().requires_grad_(True)
    b = torch.randn(4, 32, 8).bfloat16().requires_grad_(True)
    c = storch.matmul(a, b)
    assert c.shape == (3, 4, 16, 8) and c.dtype == torch.bfloat16
    for i in range(3):
        for j in range(4):
            expected = simprec.gemm.gemm(rounded(a[i, 0], "bf16"), rounded(b[j], "bf16"),
                                         model=BF16, out_format="bf16")
            assert np.array_equal(c[i, j].float().detach().numpy(), expected)
    g = torch.randn(3, 4, 16, 8).bfloat16()
    c.backward(g)
    da = sum(torch.from_numpy(simprec.gemm.gemm(rounded(g[0, j], "bf16"),
                                                np.ascontiguousarray(rounded(b[j], "bf16").T),
                                                model=BF16, out_format="bf16"))
             for j in range(4))
    assert torch.equal(a.grad[0, 0], da.bfloat16())


def test_matmul_on_exact_data_is_torchs():
    a = dyadic((2, 8, 32), 4).half().requires_grad_(True)
    b = dyadic((32, 8), 5).half().requires_grad_(True)
    c = storch.matmul(a, b)
    a64, b64 = a.detach().double().requires_grad_(True), b.detach().double().requires_grad_(True)
    c64 = a64 @ b64
    assert torch.equal(c, c64.half())
    g = dyadic((2, 8, 8), 6)
    c.backward(g.half())
    c64.backward(g.double())
    assert torch.equal(a.grad, a64.grad.half()) and torch.equal(b.grad, b64.grad.half())


@pytest.mark.parametrize("call, error, message", [
    (lambda: storch.linear(torch.ones(2, 4), torch.ones(3, 4)), ValueError,
     r"input: no default GEMM model for torch.float32 tensors .* pass model="),
    (lambda: storch.linear(torch.ones(2, 4).bfloat16(), torch.ones(3, 5).bfloat16()), ValueError,
     r"input \(2, 4\) and weight \(3, 5\): expected input's last dimension to equal weight's "
     r"in_features \(5\)"),
    (lambda: storch.linear(torch.ones(2, 4).bfloat16(), torch.ones(3, 4).bfloat16(),
                           torch.ones(4).bfloat16()), ValueError,
     r"bias: expected shape \(3,\) \(out_features\), got \(4,\)"),
    (lambda: storch.linear(np.ones((2, 4)), torch.ones(3, 4)), TypeError,
     "input: expected a torch.Tensor, got ndarray"),
    (lambda: storch.linear(torch.ones(2, 4).bfloat16(), torch.ones(3, 4).bfloat16(),
                           modle=BF16), TypeError, "did you mean 'model'"),
    (lambda: storch.linear(torch.ones(2, 4).bfloat16(), torch.ones(3, 4).bfloat16(),
                           model="tc:sm90-wgmma-bf61"), ValueError,
     "model='tc:sm90-wgmma-bf61': not a tensor-core model \\(did you mean 'tc:sm90-wgmma-bf16'"),
    (lambda: storch.linear(torch.ones(2, 4).half(), torch.ones(3, 4).half(),
                           model="tc:sm90-wgmma-fp16acc"), ValueError,
     "its accumulator is fp16; a GEMM takes a model with an fp32 accumulator"),
    (lambda: storch.linear(torch.ones(2, 4).bfloat16(), torch.ones(3, 4).bfloat16(),
                           out_format="fp8"), ValueError,
     r"out_format='fp8': expected one of fp32, bf16, fp16 or None"),
    (lambda: storch.linear(torch.ones(2, 4).bfloat16(), torch.ones(3, 4).bfloat16(),
                           grad_input="bf16"), TypeError,
     r"grad_input='bf16': expected None or a dict of simprec.gemm.gemm's keywords"),
    (lambda: storch.linear(torch.ones(2, 4).bfloat16(), torch.ones(3, 4).bfloat16(),
                           grad_weight={"promote": 128}), TypeError,
     r"grad_weight: unexpected keyword argument 'promote' \(did you mean 'promote_every'\?\)"),
    (lambda: storch.linear(torch.ones(2, 4).bfloat16(), torch.ones(3, 4).bfloat16(),
                           numerics="cublas-bf61"), ValueError,
     "unknown GEMM preset 'cublas-bf61'; did you mean 'cublas-bf16'"),
    (lambda: storch.linear(torch.ones(2, 4).bfloat16(), torch.ones(3, 4).bfloat16(),
                           numerics="cublas-bf16", promote_every=128), TypeError,
     "linear: numerics= and promote_every= both given"),
    (lambda: storch.matmul(torch.ones(4).bfloat16(), torch.ones(4, 2).bfloat16()), ValueError,
     r"a: expected at least 2 dimensions, got shape \(4,\)"),
    (lambda: storch.matmul(torch.ones(2, 3, 4).bfloat16(), torch.ones(5, 4, 2).bfloat16()),
     ValueError, "their leading dimensions do not broadcast"),
    (lambda: storch.matmul(torch.ones(3, 4).bfloat16(), torch.ones(3, 2).bfloat16()),
     ValueError, r"expected \(..., M, K\) and \(..., K, N\) with the same K"),
])
def test_bad_arguments_are_named(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_double_backward_is_refused_by_name():
    x = torch.ones(2, 16, dtype=torch.bfloat16, requires_grad=True)
    w = torch.ones(4, 16, dtype=torch.bfloat16, requires_grad=True)
    y = storch.linear(x, w)
    with pytest.raises(NotImplementedError, match="simprec.torch.linear: double backward"):
        torch.autograd.grad(y.float().square().sum(), x, create_graph=True)
