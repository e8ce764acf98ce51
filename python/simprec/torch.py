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
           "matmul", "emulate", "DelayedScaling", "flex_attention", "SoftCap", "Alibi",
           "causal_lower_right", "CausalMask"]


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
    """O and the LSE (float32, natural log) of the emulated forward pass; the gradients of the
    emulated backward pass (the LSE's own gradient is not modelled)."""

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
        return _as_torch(result.o, query.dtype), torch.from_numpy(result.lse).float()

    @staticmethod
    def backward(ctx, grad_out, grad_lse=None):
        if grad_lse is not None and bool(torch.any(grad_lse != 0)):
            raise NotImplementedError(
                "simprec.torch: a gradient through the returned LSE is not emulated; use the "
                "LSE for analysis only (detach it)")
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


class _CausalVariant:
    def __init__(self, name):
        self.name = name


class CausalMask:
    """A causal attn_mask for simprec.torch.attention where PyTorch has no
    torch.nn.attention.bias.CausalBias (before 2.3); it reads the same as one."""

    def __init__(self, variant: str, seq_len_q: int, seq_len_kv: int) -> None:
        self.variant = _CausalVariant(variant)
        self.seq_len_q, self.seq_len_kv = seq_len_q, seq_len_kv


def causal_lower_right(seq_len_q: int, seq_len_kv: int):
    """PyTorch's causal_lower_right(seq_len_q, seq_len_kv) (the diagonal aligned at the bottom
    right: query i sees keys j <= i + Sk - Sq), or its stand-in CausalMask where PyTorch has
    none; either is an attn_mask for simprec.torch.attention, the first for SDPA too."""
    try:
        from torch.nn.attention.bias import causal_lower_right as torch_lower_right
    except ImportError:
        return CausalMask("LOWER_RIGHT", seq_len_q, seq_len_kv)
    return torch_lower_right(seq_len_q, seq_len_kv)


def _check_heads(query, key, value, enable_gqa):
    """SDPA's rule for key/value heads: equal to query's, or with enable_gqa a divisor of it."""
    if query.dim() < 2:
        raise ValueError(f"query: expected shape (..., L, E), got {tuple(query.shape)}")
    if query.dim() < 3 or key.shape[-3] == query.shape[-3]:
        return
    if not enable_gqa:
        raise ValueError(f"key has {key.shape[-3]} heads and query {query.shape[-3]}: pass "
                         "enable_gqa=True for grouped-query attention")
    if key.shape[-3] < 1 or query.shape[-3] % key.shape[-3] or value.shape[-3] != key.shape[-3]:
        raise ValueError(f"enable_gqa=True: query's {query.shape[-3]} heads must be a multiple "
                         f"of key's and value's ({key.shape[-3]}, {value.shape[-3]})")


def _mask_options(attn_mask, is_causal, query, key):
    """simprec.attention's masking arguments for SDPA's attn_mask and is_causal."""
    if attn_mask is None:
        return dict(causal=bool(is_causal))
    if is_causal:
        raise ValueError("attn_mask and is_causal=True together: SDPA refuses them; give one")
    variant = getattr(getattr(attn_mask, "variant", None), "name", None)
    if variant in ("LOWER_RIGHT", "UPPER_LEFT"):  # torch.nn.attention.bias.CausalBias
        for length, name, tensor in ((attn_mask.seq_len_q, "queries", query),
                                     (attn_mask.seq_len_kv, "keys", key)):
            if length != tensor.shape[-2]:
                raise ValueError(f"attn_mask: a causal mask for {length} {name}, the "
                                 f"tensors have {tensor.shape[-2]}")
        return dict(causal=True,
                    causal_align="bottom-right" if variant == "LOWER_RIGHT" else "top-left")
    if not isinstance(attn_mask, torch.Tensor):
        raise TypeError(f"attn_mask: expected a boolean or floating-point tensor (or a "
                        f"CausalBias), got {type(attn_mask).__name__}")
    if attn_mask.dtype != torch.bool and not attn_mask.is_floating_point():
        raise TypeError(f"attn_mask: expected a boolean or floating-point tensor, got "
                        f"{attn_mask.dtype}")
    lengths = (query.shape[-2], key.shape[-2])
    try:  # SDPA broadcasts a mask over every dimension, (L, S) included
        attn_mask = attn_mask.expand(*attn_mask.shape[:-2], *lengths)
    except RuntimeError:
        raise ValueError(f"attn_mask: shape {tuple(attn_mask.shape)} does not broadcast to "
                         f"(..., {lengths[0]}, {lengths[1]})") from None
    if attn_mask.dtype == torch.bool:
        return dict(mask=attn_mask)
    # The kernels receive the bias in the inputs' dtype (SDPA converts it); its values then.
    return dict(bias=attn_mask.to(query.dtype))


def _options(query, format, set, mitigations, tile, scale, seed, threads, numerics, **masking):
    options = dict(numerics=numerics, format=_default_format(query, format),
                   set=string_list(set, "set", "s=fp32:rne"),
                   mitigations=string_list(mitigations, "mitigations", "beta-rowmax:2"),
                   tile=tile_argument(tile), scale=scale, seed=seed, threads=threads)
    options.update(masking)
    return options


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
    of the gradients needs: dO, the emulated delta). attn_mask as SDPA takes it: a boolean
    tensor (True: attend), a float tensor added to the scaled scores (in query's dtype, as the
    kernels receive it), or a CausalBias (torch.nn.attention.bias: causal_lower_right aligns
    the diagonal at the bottom right); enable_gqa=True lets key and value have fewer heads than
    query (a divisor); scale, the softmax scale (default 1/sqrt(E)). Dropout is not emulated:
    dropout_p other than 0 raises ValueError. numerics is a numerics spec, as for
    simprec.attention; format, the low-precision format where the spec names none, is by
    default query's dtype's (fp16 tensors emulate fp16, float32 fp32). NaN and infinite inputs
    go through as the emulated arithmetic takes them, with a NonFiniteInputWarning that counts
    them.
    """
    for tensor, argument in ((query, "query"), (key, "key"), (value, "value")):
        _check_tensor(tensor, argument)
    if dropout_p != 0.0:
        raise ValueError(f"dropout_p={dropout_p}: dropout is not emulated; expected 0.0")
    _check_heads(query, key, value, enable_gqa)
    options = _options(query, format, set, mitigations, tile, scale, seed, threads, numerics,
                       **_mask_options(attn_mask, is_causal, query, key))
    if on_backward is not None and not callable(on_backward):
        raise TypeError(f"on_backward: expected a callable, got {type(on_backward).__name__}")
    return _EmulatedAttention.apply(query, key, value, options, on_backward)[0]


attention.__doc__ = (attention.__doc__ or "") + simprec.numerics_help()

from simprec._torch_modules import emulate_attention  # noqa: E402 (uses attention above)
from simprec._torch_linear import linear, matmul  # noqa: E402
from simprec._torch_fp8 import DelayedScaling  # noqa: E402
from simprec._torch_flex import Alibi, SoftCap, flex_attention  # noqa: E402
from simprec._torch_emulate import emulate  # noqa: E402 (uses emulate_attention)
