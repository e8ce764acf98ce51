"""simprec.torch.flex_attention: FlexAttention's signature with emulated numerics (CPU tensors).

A mask_mod (or a BlockMask's) is evaluated here, on index tensors, into a boolean mask: its
values are exact whatever arithmetic computed them. A score_mod changes scores in floating
point, so its arithmetic is emulated, not run: the callable is traced once into simprec's
score_mod expression (_score_mod_trace.py), which the engine rounds as Inductor and Triton
compile it. SoftCap and Alibi are score_mods of that form too, with their own names in reports.
"""

from __future__ import annotations

from typing import Callable, Optional, Sequence

import torch

from simprec._checks import named_keywords
from simprec._types import Numerics, Tile


class SoftCap:
    """The tanh soft-cap of Gemma 2's attention logits, cap * tanh(score / cap): a score_mod for
    torch's flex_attention and for simprec.torch.flex_attention, which emulates it as Inductor
    compiles it (score times fp32(1 / cap), libdevice's tanhf, times cap; its derivative
    ((dS cap) (1 - t t)) / cap)."""

    def __init__(self, cap: float) -> None:
        if not isinstance(cap, (int, float)) or isinstance(cap, bool) or not cap > 0:
            raise ValueError(f"SoftCap: cap={cap!r}; expected a positive number")
        self.cap = float(cap)

    def __call__(self, score, b, h, q_idx, kv_idx):
        return self.cap * torch.tanh(score / self.cap)

    def __repr__(self) -> str:
        return f"SoftCap({self.cap})"


class Alibi:
    """ALiBi (Press et al. 2022): score + slope[h] * (kv_idx - q_idx), slopes one per head (a
    1-D float32 tensor or sequence); Alibi.default(heads) gives 2^(-8 (h + 1) / heads)."""

    def __init__(self, slopes) -> None:
        slopes = torch.as_tensor(slopes, dtype=torch.float32)
        if slopes.dim() != 1 or slopes.numel() == 0:
            raise ValueError(f"Alibi: slopes of shape {tuple(slopes.shape)}; expected one per "
                             "head (1-D)")
        self.slopes = slopes

    @staticmethod
    def default(heads: int) -> "Alibi":
        return Alibi([2.0 ** (-8.0 * (h + 1) / heads) for h in range(heads)])

    def __call__(self, score, b, h, q_idx, kv_idx):
        return score + self.slopes.to(score.device)[h] * (kv_idx - q_idx)

    def __repr__(self) -> str:
        return f"Alibi({self.slopes.tolist()})"


def _mask_of(mask_mod, batch, heads, sq, sk):
    """mask_mod evaluated at every (b, h, q_idx, kv_idx) by broadcasting index tensors: a
    boolean tensor (B or 1, H or 1, Sq, Sk)."""
    b = torch.arange(batch).view(-1, 1, 1, 1)
    h = torch.arange(heads).view(1, -1, 1, 1)
    q = torch.arange(sq).view(1, 1, -1, 1)
    k = torch.arange(sk).view(1, 1, 1, -1)
    try:
        mask = torch.as_tensor(mask_mod(b, h, q, k))
    except Exception as error:  # the user's function: say whose error it is
        raise ValueError(f"mask_mod raised {type(error).__name__}: {error} (it is called once "
                         "with broadcasting index tensors b [B,1,1,1], h [1,H,1,1], q_idx "
                         "[1,1,Sq,1], kv_idx [1,1,1,Sk])") from error
    if mask.dtype != torch.bool:
        raise TypeError(f"mask_mod: returned {mask.dtype}; expected booleans")
    try:
        mask = mask.reshape((1,) * (4 - mask.dim()) + tuple(mask.shape)) if mask.dim() < 4 else mask
        return mask.expand(mask.shape[0], mask.shape[1], sq, sk)
    except RuntimeError:
        raise ValueError(f"mask_mod: result of shape {tuple(mask.shape)} does not broadcast to "
                         f"(B, H, {sq}, {sk})") from None


def _score_mod_options(score_mod, heads):
    if score_mod is None:
        return {}
    if isinstance(score_mod, SoftCap):
        return dict(softcap=score_mod.cap)
    if isinstance(score_mod, Alibi):
        if score_mod.slopes.numel() != heads:
            raise ValueError(f"score_mod: Alibi with {score_mod.slopes.numel()} slopes for "
                             f"{heads} heads")
        return dict(alibi_slopes=score_mod.slopes.double().numpy())
    if not callable(score_mod):
        raise TypeError(f"score_mod: expected a callable (score, b, h, q_idx, kv_idx) -> score, "
                        f"got {type(score_mod).__name__}")
    from simprec._score_mod_trace import trace_score_mod
    text, tensors = trace_score_mod(score_mod)
    return dict(score_mod=text, score_tensors=tensors)


@named_keywords
def flex_attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                   score_mod: Optional[Callable] = None, block_mask=None,
                   scale: Optional[float] = None, enable_gqa: bool = False,
                   return_lse: bool = False, *, mask_mod: Optional[Callable] = None,
                   numerics: Numerics = "torch-flex", format: Optional[str] = None,
                   set: Sequence[str] = (), mitigations: Sequence[str] = (),
                   tile: Optional[Tile] = None, seed: int = 0, threads: int = 0,
                   on_backward=None):
    """torch.nn.attention.flex_attention.flex_attention with emulated numerics (CPU tensors).

    query (B, H, L, E), key (B, Hkv, S, E), value (B, Hkv, S, Ev); enable_gqa=True for Hkv < H.
    score_mod: any callable (score, b, h, q_idx, kv_idx) -> score of FlexAttention's form,
    traced once into simprec's score_mod expression (docs/score_mod.md lists what it takes);
    SoftCap and Alibi are two (usable with torch's flex_attention too). The mask: a
    BlockMask (its mask_mod is evaluated; PyTorch 2.5 and later) or mask_mod, a callable
    (b, h, q_idx, kv_idx) -> bool evaluated on broadcasting index tensors (what Debian's
    PyTorch 1.13, which has no create_block_mask, can take). scale: default 1/sqrt(E). The
    numerics default to torch-flex (set flex_compile=static for a graph compiled for the shape,
    torch.compile(dynamic=False)). Returns the output, or (output, LSE) with return_lse (natural
    log, float32, not differentiable). The other keywords as simprec.torch.attention's.
    """
    from simprec import torch as simprec_torch
    for tensor, argument in ((query, "query"), (key, "key"), (value, "value")):
        simprec_torch._check_tensor(tensor, argument)
        if tensor.dim() != 4:
            raise ValueError(f"{argument}: expected (B, H, L, E), got {tuple(tensor.shape)}")
    simprec_torch._check_heads(query, key, value, enable_gqa)
    if block_mask is not None and mask_mod is not None:
        raise ValueError("block_mask and mask_mod together: give one")
    if block_mask is not None:
        mask_mod = getattr(block_mask, "mask_mod", None)
        if mask_mod is None:
            raise TypeError(f"block_mask: expected a torch BlockMask, got "
                            f"{type(block_mask).__name__}")
    masking = _score_mod_options(score_mod, query.shape[1])
    if mask_mod is not None:
        if not callable(mask_mod):
            raise TypeError(f"mask_mod: expected a callable, got {type(mask_mod).__name__}")
        masking["mask"] = _mask_of(mask_mod, query.shape[0], query.shape[1], query.shape[2],
                                   key.shape[2])
    options = simprec_torch._options(query, format, set, mitigations, tile, scale, seed,
                                     threads, numerics, **masking)
    o, lse = simprec_torch._EmulatedAttention.apply(query, key, value, options, on_backward)
    return (o, lse) if return_lse else o
