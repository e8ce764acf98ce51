"""simprec for PyTorch: emulated attention as a drop-in for
torch.nn.functional.scaled_dot_product_attention, differentiable through the emulated backward
pass, so that a model trains with emulated numerics on the CPU; emulate_attention routes
PyTorch's own attention modules through it. linear and matmul run a model's GEMMs (and their
backward GEMMs) through simprec.gemm.gemm; emulate runs a whole module's linear layers and
attention through simprec; DelayedScaling is an FP8 training recipe for its linear layers."""

from __future__ import annotations

import warnings
from typing import Callable, Optional, Sequence

import torch

import simprec
from simprec._arrays import dtype_format, tensor_to_numpy
from simprec._checks import named_keywords, string_list, tile_argument
from simprec._types import Numerics, Tile

__all__ = ["attention", "BackwardCall", "emulate_attention", "NonFiniteInputWarning", "linear",
           "matmul", "emulate", "DelayedScaling"]


class NonFiniteInputWarning(RuntimeWarning):
    """Emulated attention received NaN or infinite inputs: they go through as the emulated
    arithmetic takes them (as SDPA lets them through), and the warning counts them."""


class BackwardCall:
    """One emulated backward pass, as `on_backward` receives it: the tensors it differentiated
    (query, key, value, and grad_out, the dO that reached the output) and the AttentionResult
    of the emulation (o, lse, dq, dk, dv and delta = rowsum(dO o O), each a float64 array of
    its site's values)."""

    def __init__(self, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                 grad_out: torch.Tensor, result: simprec.AttentionResult) -> None:
        self.query, self.key, self.value, self.grad_out = query, key, value, grad_out
        self.result = result


def _check_tensor(tensor, argument):
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"{argument}: expected a torch.Tensor, got {type(tensor).__name__}")
    if not tensor.is_floating_point():
        raise TypeError(f"{argument}: expected a floating-point tensor, got {tensor.dtype}")


def _emulation_input(tensor, argument):
    """The tensor for the emulation: CPU only; a non-contiguous one is copied, as SDPA takes
    any strides."""
    _check_tensor(tensor, argument)
    return tensor_to_numpy(tensor, argument, allow_copy=True)


_ARGUMENT_NAMES = {"q": "query", "k": "key", "v": "value", "do": "grad_output"}


def _warn_nonfinite(result, pass_name):
    counts = {name: c for name, c in result.nonfinite_inputs.items() if c["nan"] or c["inf"]}
    if counts:
        listed = ", ".join(f"{_ARGUMENT_NAMES[name]} {c['nan']} NaN and {c['inf']} infinite"
                           for name, c in counts.items())
        warnings.warn(f"simprec.torch.attention ({pass_name}): non-finite inputs ({listed}) go "
                      "through as the emulated arithmetic takes them", NonFiniteInputWarning,
                      stacklevel=3)


def _as_torch(values, dtype):
    """Emulated values (float64, each a value of its site's format) in the caller's dtype: exact
    whenever that dtype holds the site's format."""
    return torch.from_numpy(values).to(dtype)


def _values(array, fmt):
    return array if fmt is None else simprec.decode(array, fmt)


def _emulation_inputs(tensors, names):
    """numpy views of the tensors and the one format whose encodings they hold (bf16, fp16,
    fp8 tensors), or float values and None when they are float tensors or differ in format."""
    converted = [_emulation_input(t, n) for t, n in zip(tensors, names)]
    formats = {fmt for _, fmt in converted}
    if len(formats) == 1:
        return [a for a, _ in converted], formats.pop()
    return [_values(a, fmt) for a, fmt in converted], None


class _EmulatedAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, query, key, value, options, on_backward):
        arrays, fmt = _emulation_inputs((query, key, value), ("query", "key", "value"))
        result = simprec.attention(*arrays, input_format=fmt, reference=False, baseline=False,
                                   **options)
        _warn_nonfinite(result, "forward")
        ctx.save_for_backward(query, key, value)
        ctx.options = options
        ctx.on_backward = on_backward
        ctx.o, ctx.lse = result.o, result.lse
        return _as_torch(result.o, query.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        if torch.is_grad_enabled():
            # create_graph=True: the gradients would need a graph of their own, and the emulated
            # backward pass is not differentiable. Without this, torch would get gradients that
            # silently count as constants.
            raise NotImplementedError(
                "simprec.torch.attention: double backward (create_graph=True, gradients of "
                "gradients) is not supported: the emulated backward pass is not itself "
                "differentiable; call backward() or torch.autograd.grad() without create_graph")
        query, key, value = ctx.saved_tensors
        arrays, fmt = _emulation_inputs((query, key, value, grad_out),
                                        ("query", "key", "value", "grad_output"))
        result = simprec.attention(*arrays, input_format=fmt, reference=False, baseline=False,
                                   o=ctx.o, lse=ctx.lse, **ctx.options)
        _warn_nonfinite(result, "backward")
        if ctx.on_backward is not None:
            ctx.on_backward(BackwardCall(query, key, value, grad_out, result))
        return (_as_torch(result.dq, query.dtype), _as_torch(result.dk, key.dtype),
                _as_torch(result.dv, value.dtype), None, None)


def _default_format(query, format):
    """`format`, or when it is None the format of query's dtype (bf16, fp16, fp8, fp32, fp64)."""
    if format is not None:
        return format
    fmt = dtype_format(query.dtype)
    if fmt is None:
        raise TypeError(f"query: no simprec format for dtype {query.dtype}; pass format=")
    return fmt


@named_keywords
def attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
              attn_mask: Optional[torch.Tensor] = None, dropout_p: float = 0.0,
              is_causal: bool = False, scale: Optional[float] = None, enable_gqa: bool = False,
              *, numerics: Numerics = "fa2", format: Optional[str] = None, set: Sequence[str] = (),
              mitigations: Sequence[str] = (), tile: Optional[Tile] = None, seed: int = 0,
              threads: int = 0,
              on_backward: Optional[Callable[[BackwardCall], None]] = None) -> torch.Tensor:
    """torch.nn.functional.scaled_dot_product_attention with emulated numerics (CPU tensors).

    query (..., L, E), key (..., S, E), value (..., S, Ev); the result has query's dtype and its
    values are those of the numerics' output format. Its gradient is the emulated backward
    pass; double backward (create_graph=True) raises NotImplementedError. on_backward, when
    given, is called with a BackwardCall after each emulated backward pass (what an analysis
    of the gradients needs: dO, the emulated delta). attn_mask, dropout and grouped-query
    attention are not emulated: anything but their defaults raises ValueError. numerics is a
    numerics spec, as for simprec.attention; format, the low-precision format where the spec
    names none, is by default query's dtype's (fp16 tensors emulate fp16, float32 fp32).
    NaN and infinite inputs go through as the emulated arithmetic takes them, with a
    NonFiniteInputWarning that counts them.
    """
    for tensor, argument in ((query, "query"), (key, "key"), (value, "value")):
        _check_tensor(tensor, argument)
    if attn_mask is not None:
        raise ValueError("attn_mask: not emulated; use is_causal=True for a causal mask")
    if dropout_p != 0.0:
        raise ValueError(f"dropout_p={dropout_p}: dropout is not emulated; expected 0.0")
    if enable_gqa:
        raise ValueError("enable_gqa=True: grouped-query attention is not emulated")
    if query.dim() < 2:
        raise ValueError(f"query: expected shape (..., L, E), got {tuple(query.shape)}")
    options = dict(numerics=numerics, format=_default_format(query, format),
                   set=string_list(set, "set", "s=fp32:rne"),
                   mitigations=string_list(mitigations, "mitigations", "beta-rowmax:2"),
                   tile=tile_argument(tile), causal=bool(is_causal), scale=scale, seed=seed,
                   threads=threads)
    if on_backward is not None and not callable(on_backward):
        raise TypeError(f"on_backward: expected a callable, got {type(on_backward).__name__}")
    return _EmulatedAttention.apply(query, key, value, options, on_backward)


attention.__doc__ = (attention.__doc__ or "") + simprec.numerics_help()

from simprec._torch_modules import emulate_attention  # noqa: E402 (uses attention above)
from simprec._torch_linear import linear, matmul  # noqa: E402
from simprec._torch_fp8 import DelayedScaling  # noqa: E402
from simprec._torch_emulate import emulate  # noqa: E402 (uses emulate_attention)
