"""simprec.torch.linear and simprec.torch.matmul: F.linear and torch.matmul with every GEMM, the
backward ones too, through simprec.gemm.gemm (settings and defaults: simprec._torch_gemm)."""

from typing import Optional

import numpy as np
import torch

from simprec import _checks
from simprec._torch_gemm import (as_tensor, check_tensor, gemm_values, refuse_double_backward,
                                 resolve, result_dtype, settings_argument, values,
                                 without_scales)


class _EmulatedLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, weight, bias, settings, grad_input, grad_weight):
        x = values(input, "input").reshape(rows(input), weight.shape[1])
        w = values(weight, "weight")
        b = None if bias is None else bias_values(bias, settings["out_format"])
        y = gemm_values(x, np.ascontiguousarray(w.T), settings, b)
        ctx.save_for_backward(input, weight, bias)
        ctx.grad_settings = grad_input, grad_weight
        return as_tensor(y.reshape(*input.shape[:-1], w.shape[0]),
                         result_dtype(input.dtype, settings["out_format"]))

    @staticmethod
    def backward(ctx, grad):
        refuse_double_backward("simprec.torch.linear")
        input, weight, bias = ctx.saved_tensors
        grad_input, grad_weight = ctx.grad_settings
        g = values(grad, "grad_output").reshape(rows(input), weight.shape[0])
        dx = dw = db = None
        if ctx.needs_input_grad[0]:
            dx = gemm_values(g, values(weight, "weight"), grad_input)
            dx = as_tensor(dx.reshape(input.shape), input.dtype)
        if ctx.needs_input_grad[1]:
            x = values(input, "input").reshape(rows(input), weight.shape[1])
            dw = as_tensor(gemm_values(np.ascontiguousarray(g.T), x, grad_weight), weight.dtype)
        if bias is not None and ctx.needs_input_grad[2]:
            db = bias_gradient(g, bias.dtype)
        return dx, dw, db, None, None, None


def rows(input):
    """The GEMM's rows: the input's leading dimensions flattened (0 for an empty batch)."""
    return int(np.prod(input.shape[:-1], dtype=np.int64))


def bias_values(bias, out_format):
    """The bias as float32 values of out_format (the dtype cuBLASLt's epilogue reads it in)."""
    import simprec
    b = values(bias, "bias")
    return (b if out_format == "fp32" and b.dtype == np.float32
            else simprec.round(b, out_format).astype(np.float32))


def bias_gradient(g, dtype):
    """dbias: torch's sum of dY's rows (float32; float64 for float64 gradients), in the bias's
    dtype. A GPU reduces in another order; this sum is not an emulation of it."""
    return torch.from_numpy(g).sum(0).to(dtype)


def _check_linear(input, weight, bias):
    check_tensor(input, "input")
    check_tensor(weight, "weight", 2)
    if weight.dim() != 2:
        raise ValueError(f"weight: expected shape (out_features, in_features), got "
                         f"{tuple(weight.shape)}")
    if input.shape[-1] != weight.shape[1]:
        raise ValueError(f"input {tuple(input.shape)} and weight {tuple(weight.shape)}: expected "
                         f"input's last dimension to equal weight's in_features "
                         f"({weight.shape[1]})")
    if bias is not None:
        check_tensor(bias, "bias")
        if tuple(bias.shape) != (weight.shape[0],):
            raise ValueError(f"bias: expected shape ({weight.shape[0]},) (out_features), got "
                             f"{tuple(bias.shape)}")


def _settings(input, numerics, model, out_format, split_k, promote_every, scale_a, scale_b,
              scale_order, threads, grad_a, grad_b, names):
    """The forward GEMM's settings and the two backward ones' (None: the forward's numerics,
    without its scales)."""
    given = dict(numerics=numerics, model=model, out_format=out_format, split_k=split_k,
                 promote_every=promote_every, scale_a=scale_a, scale_b=scale_b,
                 scale_order=scale_order, threads=threads)
    settings = resolve(settings_argument(given, names[0], where=names[0]), input, names[1],
                       where=names[0])
    grads = []
    for value, argument in ((grad_a, names[2]), (grad_b, names[3])):
        value = settings_argument(value, argument)
        grads.append(without_scales(settings) if value is None
                     else resolve(value, input, argument))
    return settings, grads[0], grads[1]


@_checks.named_keywords
def linear(input: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor] = None, *,
           numerics: Optional[str] = None, model: Optional[str] = None,
           out_format: Optional[str] = None, split_k: Optional[int] = None,
           promote_every: Optional[int] = None, scale_a=None, scale_b=None,
           scale_order: Optional[str] = None, threads: int = 0,
           grad_input: Optional[dict] = None, grad_weight: Optional[dict] = None) -> torch.Tensor:
    """torch.nn.functional.linear (y = x Wᵀ + b) with its GEMMs through simprec.gemm.gemm, CPU
    tensors, differentiable.

    input (..., in_features): its leading dimensions are flattened into the GEMM's rows, as
    PyTorch's addmm path does; weight (out_features, in_features); bias (out_features,) or None.
    The keywords are simprec.gemm.gemm's for the forward GEMM (a = the flattened input, b = Wᵀ;
    scale_a one per row or a scalar, scale_b one per output feature or a scalar): a GEMM
    numerics spec (numerics="cublas-bf16"; docs/gemm.md) or the keyword form. model=None:
    what cuBLAS runs for the input's dtype (bf16, fp16: the sm90 wgmma model, as the presets
    cublas-bf16 and cublas-fp16; fp32 has no default); out_format=None: the input's format (fp32
    for wider dtypes). Operands are rounded
    to nearest even into the model's input format first (a cast, as autocast makes it; nothing
    changes for values of the format). The bias, rounded to out_format, is added to the fp32
    sum in fp32 before the cast (cuBLASLt's bias epilogue, what PyTorch 2 calls for F.linear on
    CUDA). The result has the input's dtype where it holds out_format's values, else
    out_format's dtype.

    grad_input (dX = dY·W) and grad_weight (dW = dYᵀ·X): dicts of the same keywords for the
    backward GEMMs; None takes the forward's numerics (never its scales). threads: the engine's
    (0: all cores; the results do not depend on it). Gradients come back in their tensors' dtypes; the bias gradient is
    torch's fp32 sum of dY's rows (not an emulation of a GPU's reduction).
    """
    _check_linear(input, weight, bias)
    settings, gi, gw = _settings(input, numerics, model, out_format, split_k, promote_every,
                                 scale_a, scale_b, scale_order, threads, grad_input, grad_weight,
                                 ("linear", "input", "grad_input", "grad_weight"))
    return _EmulatedLinear.apply(input, weight, bias, settings, gi, gw)


class _EmulatedMatmul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b, settings, grad_a, grad_b):
        batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        av, bv = _batched(a, batch, "a"), _batched(b, batch, "b")
        d = _stacked([gemm_values(x, y, settings) for x, y in zip(av, bv)],
                     (a.shape[-2], b.shape[-1]))
        ctx.save_for_backward(a, b)
        ctx.batch, ctx.grad_settings = batch, (grad_a, grad_b)
        shape = (*batch, a.shape[-2], b.shape[-1])
        return as_tensor(d.reshape(shape), result_dtype(a.dtype, settings["out_format"]))

    @staticmethod
    def backward(ctx, grad):
        refuse_double_backward("simprec.torch.matmul")
        a, b = ctx.saved_tensors
        grad_a, grad_b = ctx.grad_settings
        g = values(grad, "grad_output").reshape(int(np.prod(ctx.batch, dtype=np.int64)),
                                                *grad.shape[-2:])
        av, bv = _batched(a, ctx.batch, "a"), _batched(b, ctx.batch, "b")
        da = db = None
        if ctx.needs_input_grad[0]:
            da = _summed(_stacked([gemm_values(x, np.ascontiguousarray(y.T), grad_a)
                                   for x, y in zip(g, bv)], a.shape[-2:]), ctx.batch, a)
        if ctx.needs_input_grad[1]:
            db = _summed(_stacked([gemm_values(np.ascontiguousarray(x.T), y, grad_b)
                                   for x, y in zip(av, g)], b.shape[-2:]), ctx.batch, b)
        return da, db, None, None, None


def _stacked(matrices, shape):
    """The GEMMs' results as one array, (0, *shape) where the batch is empty."""
    if not matrices:
        return np.zeros((0, *shape), dtype=np.float32)
    return np.stack(matrices)


def _batched(t, batch, argument):
    """The tensor's values broadcast to the batch, as (batch size, rows, columns) matrices."""
    v = np.broadcast_to(values(t, argument), (*batch, *t.shape[-2:]))
    return np.ascontiguousarray(v.reshape(int(np.prod(batch, dtype=np.int64)), *t.shape[-2:]))


def _summed(d, batch, t):
    """A gradient of the broadcast operand summed back to the operand's shape (torch's fp32 sum
    over the broadcast dimensions), in its dtype."""
    full = torch.from_numpy(d).reshape(*batch, *d.shape[-2:])
    return full.sum_to_size(t.shape).to(t.dtype)


@_checks.named_keywords
def matmul(a: torch.Tensor, b: torch.Tensor, *, numerics: Optional[str] = None,
           model: Optional[str] = None, out_format: Optional[str] = None,
           split_k: Optional[int] = None, promote_every: Optional[int] = None, scale_a=None,
           scale_b=None, scale_order: Optional[str] = None, threads: int = 0,
           grad_a: Optional[dict] = None, grad_b: Optional[dict] = None) -> torch.Tensor:
    """torch.matmul for a (..., M, K) and b (..., K, N), leading dimensions broadcast, with each
    matrix product through simprec.gemm.gemm; CPU tensors, differentiable.

    The keywords are simprec.gemm.gemm's (scale_a one per row of a's matrices or a scalar,
    scale_b one per column of b's), with the defaults of simprec.torch.linear: model and
    out_format from a's dtype, operands rounded into the model's input format. grad_a
    (dA = dC·Bᵀ) and grad_b (dB = Aᵀ·dC): the backward GEMMs' keywords, None for the forward's
    (without its scales); a gradient of a broadcast operand is torch's fp32 sum over the
    broadcast dimensions.
    """
    check_tensor(a, "a", 2)
    check_tensor(b, "b", 2)
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"a {tuple(a.shape)} and b {tuple(b.shape)}: expected (..., M, K) and "
                         f"(..., K, N) with the same K")
    try:
        torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except RuntimeError:
        raise ValueError(f"a {tuple(a.shape)} and b {tuple(b.shape)}: their leading dimensions "
                         "do not broadcast") from None
    settings, ga, gb = _settings(a, numerics, model, out_format, split_k, promote_every, scale_a,
                                 scale_b, scale_order, threads, grad_a, grad_b,
                                 ("matmul", "a", "grad_a", "grad_b"))
    return _EmulatedMatmul.apply(a, b, settings, ga, gb)
