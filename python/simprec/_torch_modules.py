"""simprec.torch.emulate_attention: one switch that routes PyTorch's own attention through the
emulation, and puts everything back on exit.

PyTorch reaches attention by four roads, and each is replaced while the switch is on:

- torch.nn.functional.scaled_dot_product_attention (PyTorch 2), what models call directly;
- torch.nn.functional.multi_head_attention_forward, what nn.MultiheadAttention (hence
  nn.TransformerEncoderLayer, nn.TransformerDecoderLayer, nn.Transformer) calls in training;
- torch._native_multi_head_attention, nn.MultiheadAttention's fast path (eval mode, no grad);
- torch._transformer_encoder_layer_fwd, nn.TransformerEncoderLayer's fast path (the same).

Each replacement computes what PyTorch's own does outside the attention core (the projections,
the layer norms, the feed-forward block, with PyTorch's functions) and the core with
simprec.torch.attention. Replacing multi_head_attention_forward rather than relying on its call
of scaled_dot_product_attention covers PyTorch 1.13, which has none, and need_weights=True,
where PyTorch 2 computes the softmax itself.
"""

import contextlib
import math

import torch
import torch.nn.functional as F

import simprec
from simprec import _checks


def causal_mask_of(mask, rows, columns, true_attends):
    """True when `mask` (an attn_mask of shape (rows, columns)) is exactly the causal mask: as a
    float mask, -inf above the diagonal and 0 elsewhere (what
    nn.Transformer.generate_square_subsequent_mask makes); as a boolean mask, True where a key
    takes part (SDPA's meaning, true_attends) or where it is masked (nn.MultiheadAttention's)."""
    if mask is None or mask.dim() != 2 or tuple(mask.shape) != (rows, columns) or rows != columns:
        return False
    above = torch.ones(rows, columns, dtype=torch.bool, device=mask.device).triu(1)
    if mask.dtype == torch.bool:
        return bool(torch.equal(mask, ~above if true_attends else above))
    return bool(torch.equal(mask == -math.inf, above) and torch.all(mask[~above] == 0))


def _mha_bias(attn_mask, key_padding_mask, batch, heads, rows, columns, dtype):
    """nn.MultiheadAttention's masks as the one additive bias its math computes with, [N, H, L, S]
    (a boolean True masks: -inf; float masks are added; attn_mask (L, S) or (N*H, L, S),
    key_padding_mask (N, S)), in the inputs' dtype; None where neither is given."""
    if attn_mask is None and key_padding_mask is None:
        return None
    bias = torch.zeros(batch, heads, rows, columns, dtype=dtype)

    def additive(mask, argument):
        if mask.dtype == torch.bool:
            return torch.zeros(mask.shape, dtype=dtype).masked_fill(mask, -math.inf)
        if not mask.is_floating_point():
            raise TypeError(f"{argument}: expected a boolean or floating-point mask, got "
                            f"{mask.dtype}")
        return mask.to(dtype)

    if attn_mask is not None:
        if attn_mask.dim() == 2 and tuple(attn_mask.shape) == (rows, columns):
            bias = bias + additive(attn_mask, "attn_mask")
        elif attn_mask.dim() == 3 and tuple(attn_mask.shape) == (batch * heads, rows, columns):
            bias = bias + additive(attn_mask, "attn_mask").view(batch, heads, rows, columns)
        else:
            raise ValueError(f"attn_mask: shape {tuple(attn_mask.shape)}, expected "
                             f"({rows}, {columns}) or ({batch * heads}, {rows}, {columns})")
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (batch, columns):
            raise ValueError(f"key_padding_mask: shape {tuple(key_padding_mask.shape)}, expected "
                             f"({batch}, {columns})")
        bias = bias + additive(key_padding_mask, "key_padding_mask").view(batch, 1, 1, columns)
    return bias


def _refuse(condition, what):
    if condition:
        raise ValueError(f"simprec.torch.emulate_attention: {what} is not emulated")


def _sdpa(options, query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
          enable_gqa=False):
    # The causal mask given as a tensor runs as is_causal (the kernels' own causal path); any
    # other mask goes to simprec.torch.attention as SDPA's attn_mask.
    if causal_mask_of(attn_mask, query.shape[-2], key.shape[-2], True):
        attn_mask, is_causal = None, True
    return simprec.torch.attention(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p,
                                   is_causal=is_causal, scale=scale, enable_gqa=enable_gqa,
                                   **options)


def _in_projection(query, key, value, in_proj_weight, in_proj_bias, separate):
    """q, k, v projected as F.multi_head_attention_forward projects them (one product for
    self-attention, where PyTorch makes one too)."""
    if separate is not None:
        biases = (None,) * 3 if in_proj_bias is None else in_proj_bias.chunk(3)
        return tuple(F.linear(x, w, b) for x, w, b in zip((query, key, value), separate, biases))
    if query is key and key is value:
        return F.linear(query, in_proj_weight, in_proj_bias).chunk(3, dim=-1)
    weights = in_proj_weight.chunk(3)
    biases = (None,) * 3 if in_proj_bias is None else in_proj_bias.chunk(3)
    return tuple(F.linear(x, w, b) for x, w, b in zip((query, key, value), weights, biases))


def _mha_forward(options, query, key, value, embed_dim_to_check, num_heads, in_proj_weight,
                 in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight,
                 out_proj_bias, training=True, key_padding_mask=None, need_weights=True,
                 attn_mask=None, use_separate_proj_weight=False, q_proj_weight=None,
                 k_proj_weight=None, v_proj_weight=None, static_k=None, static_v=None,
                 average_attn_weights=True, is_causal=False):
    """F.multi_head_attention_forward with the attention core emulated. Inputs (L, N, E) or
    (L, E); returns (output, weights). The weights, when asked for, are PyTorch's own softmax of
    the same scores: the emulation has no P to give."""
    _refuse(bias_k is not None or bias_v is not None, "nn.MultiheadAttention's add_bias_kv")
    _refuse(add_zero_attn, "nn.MultiheadAttention's add_zero_attn")
    _refuse(training and dropout_p > 0, f"attention dropout (dropout={dropout_p} in training)")
    _refuse(static_k is not None or static_v is not None, "static_k and static_v")
    batched = query.dim() == 3
    if not batched:
        query, key, value = (x.unsqueeze(1) for x in (query, key, value))
    rows, batch, embed = query.shape
    columns = key.shape[0]
    if embed != embed_dim_to_check or embed % num_heads:
        raise ValueError(f"query: embedding size {embed}, expected {embed_dim_to_check} in "
                         f"{num_heads} heads")
    head = embed // num_heads
    # The causal mask alone runs as is_causal (the kernels' own causal path); other masks as the
    # additive bias nn.MultiheadAttention's math adds to the scaled scores.
    causal = key_padding_mask is None and (
        (attn_mask is None and is_causal) or causal_mask_of(attn_mask, rows, columns, False))
    bias = None if causal else _mha_bias(attn_mask, key_padding_mask, batch, num_heads, rows,
                                         columns, query.dtype)
    separate = ((q_proj_weight, k_proj_weight, v_proj_weight) if use_separate_proj_weight
                else None)
    q, k, v = _in_projection(query, key, value, in_proj_weight, in_proj_bias, separate)

    def heads(x, length):  # (length, N, E) -> (N, H, length, head)
        return x.reshape(length, batch, num_heads, head).permute(1, 2, 0, 3)

    q, k, v = heads(q, rows), heads(k, columns), heads(v, columns)
    o = simprec.torch.attention(q, k, v, attn_mask=bias, is_causal=causal, **options)
    o = o.permute(2, 0, 1, 3).reshape(rows * batch, embed)
    out = F.linear(o, out_proj_weight, out_proj_bias).view(rows, batch, embed)
    weights = None
    if need_weights:
        scores = (q * (1.0 / math.sqrt(head))) @ k.transpose(-2, -1)
        if causal:
            scores = scores.masked_fill(
                torch.ones(rows, columns, dtype=torch.bool, device=q.device).triu(1), -math.inf)
        elif bias is not None:
            scores = scores + bias
        weights = torch.softmax(scores, dim=-1)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not batched:
            weights = weights.squeeze(0)
    if not batched:
        out = out.squeeze(1)
    return out, weights


def _native_mha(options, query, key, value, embed_dim, num_head, qkv_weight, qkv_bias,
                proj_weight, proj_bias, mask=None, need_weights=True, average_attn_weights=True,
                mask_type=None):
    """torch._native_multi_head_attention (batch first, (N, L, E)) through _mha_forward."""
    _refuse(query.is_nested, "a nested tensor (a padding mask on nn.TransformerEncoder's fast "
            "path)")
    padding = mask is not None and mask_type == 1
    same = query is key and key is value
    q, k, v = (x.transpose(0, 1) for x in (query, key, value))
    if same:
        k = v = q
    out, weights = _mha_forward(options, q, k, v, embed_dim, num_head, qkv_weight, qkv_bias,
                                None, None, False, 0.0, proj_weight, proj_bias, training=False,
                                key_padding_mask=mask if padding else None,
                                need_weights=need_weights,
                                attn_mask=None if padding else mask,
                                average_attn_weights=average_attn_weights)
    return out.transpose(0, 1), weights


def _encoder_layer_fwd(options, src, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight,
                       proj_bias, use_gelu, norm_first, eps, norm_weight_1, norm_bias_1,
                       norm_weight_2, norm_bias_2, ffn_weight_1, ffn_bias_1, ffn_weight_2,
                       ffn_bias_2, mask=None, mask_type=None):
    """torch._transformer_encoder_layer_fwd: what nn.TransformerEncoderLayer's slow path computes
    (eval mode: no dropout), with the attention through _native_mha."""

    def attend(x):
        return _native_mha(options, x, x, x, embed_dim, num_heads, qkv_weight, qkv_bias,
                           proj_weight, proj_bias, mask, False, True, mask_type)[0]

    def feed_forward(x):
        hidden = F.linear(x, ffn_weight_1, ffn_bias_1)
        return F.linear(F.gelu(hidden) if use_gelu else F.relu(hidden), ffn_weight_2, ffn_bias_2)

    def norm(x, weight, bias):
        return F.layer_norm(x, (embed_dim,), weight, bias, eps)

    x = src
    if norm_first:
        x = x + attend(norm(x, norm_weight_1, norm_bias_1))
        return x + feed_forward(norm(x, norm_weight_2, norm_bias_2))
    x = norm(x + attend(x), norm_weight_1, norm_bias_1)
    return norm(x + feed_forward(x), norm_weight_2, norm_bias_2)


def _bind(function, options):
    def bound(*args, **kwargs):
        return function(options, *args, **kwargs)
    bound.__name__ = bound.__qualname__ = function.__name__.lstrip("_") + "_emulated"
    bound.__doc__ = function.__doc__
    return bound


# (module, attribute, replacement): the roads to attention, where this PyTorch has them.
_ROADS = ((F, "scaled_dot_product_attention", _sdpa),
          (F, "multi_head_attention_forward", _mha_forward),
          (torch, "_native_multi_head_attention", _native_mha),
          (torch, "_transformer_encoder_layer_fwd", _encoder_layer_fwd))


@_checks.named_keywords
@contextlib.contextmanager
def emulate_attention(numerics="fa2", *, format=None, set=(), mitigations=(), tile=None, seed=0,
                      threads=0, on_backward=None):
    """Within the `with` block, PyTorch's attention runs through simprec.torch.attention with
    these options: F.scaled_dot_product_attention (PyTorch 2), nn.MultiheadAttention and so
    nn.TransformerEncoderLayer, nn.TransformerDecoderLayer and nn.Transformer, in training and
    on their eval-mode fast paths. Everything is put back on exit, also on an exception.

    The options are simprec.torch.attention's (format=None: each call's query dtype's format).
    The causal mask (is_causal=True, or an attn_mask equal to
    nn.Transformer.generate_square_subsequent_mask's) runs as is_causal; any other attn_mask and
    key padding masks as the additive bias PyTorch's own attention adds to the scaled scores
    (SDPA's attn_mask as SDPA takes it). Attention dropout in training, add_bias_kv,
    add_zero_attn and nested tensors raise ValueError. need_weights=True returns PyTorch's own
    softmax of the scores beside the emulated output.
    """
    simprec.attention_config(numerics, "bf16" if format is None else format, set=set,
                             mitigations=mitigations, tile=tile)  # a bad spec fails here
    if on_backward is not None and not callable(on_backward):
        raise TypeError(f"on_backward: expected a callable, got {type(on_backward).__name__}")
    options = dict(numerics=numerics, format=format, set=set, mitigations=mitigations, tile=tile,
                   seed=seed, threads=threads, on_backward=on_backward)
    saved = [(module, name, getattr(module, name)) for module, name, _ in _ROADS
             if hasattr(module, name)]
    try:
        for module, name, replacement in _ROADS:
            if hasattr(module, name):
                setattr(module, name, _bind(replacement, options))
        yield
    finally:
        for module, name, original in saved:
            setattr(module, name, original)
