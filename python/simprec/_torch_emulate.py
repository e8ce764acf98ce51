"""simprec.torch.emulate: one `with` block in which a module's linear layers and attention run
through simprec, and everything PyTorch had is put back on leaving it.

Linear layers are reached two ways: each nn.Linear of the module (subclasses included) has its
forward replaced on the instance, and torch.nn.functional.linear is replaced by a function that
emulates the calls whose weight is one of the module's parameters (nn.MultiheadAttention's
projections call it with its own weights) and leaves every other call to PyTorch. torch.matmul
and the @ operator are not routed: a module's own products stay PyTorch's (call
simprec.torch.matmul for them). Attention goes through simprec.torch.emulate_attention.
"""

import contextlib
import functools

import torch
import torch.nn.functional as F

from simprec import _checks
from simprec._torch_gemm import GEMM_KEYWORDS, settings_argument

# linear= presets: autocast's GEMMs on an H200 (operands cast to the dtype, fp32 accumulation,
# results in the dtype), the backward GEMMs alike.
PRESETS = {"bf16": dict(model="tc:sm90-wgmma-bf16", out_format="bf16"),
           "fp16": dict(model="tc:sm90-wgmma-fp16", out_format="fp16")}
_FAST_PATHS = ("_native_multi_head_attention", "_transformer_encoder_layer_fwd")


def _linear_function(linear):
    """F.linear's replacement for linear=: a preset, a dict of simprec.torch.linear's keywords,
    or a recipe (an object with a linear(input, weight, bias) method)."""
    import simprec.torch as storch
    if isinstance(linear, str):
        if linear not in PRESETS:
            _checks.unknown_keywords([linear], PRESETS, "linear",
                                     " (a preset; or pass a dict of GEMM keywords or a recipe)")
        return functools.partial(storch.linear, **PRESETS[linear])
    if isinstance(linear, dict):
        gemm = {k: v for k, v in linear.items() if k not in ("grad_input", "grad_weight")}
        _checks.unknown_keywords(gemm, (*GEMM_KEYWORDS, "grad_input", "grad_weight"), "linear")
        settings_argument(gemm, "linear")
        return functools.partial(storch.linear, **linear)
    if callable(getattr(linear, "linear", None)):
        return linear.linear
    raise TypeError(f"linear={linear!r}: expected None, a preset ({', '.join(PRESETS)}), a dict of "
                    "simprec.torch.linear's keywords such as {'model': 'tc:sm90-wgmma-bf16'}, or a "
                    "recipe such as simprec.torch.DelayedScaling()")


def _attention_options(attention):
    if attention is None or isinstance(attention, dict):
        return attention
    if isinstance(attention, str):
        return {"numerics": attention}
    raise TypeError(f"attention={attention!r}: expected None, a numerics spec such as 'fa2', or a "
                    "dict of simprec.torch.emulate_attention's keywords")


def _refused_fast_path(name):
    def refused(*args, **kwargs):
        raise ValueError(
            f"simprec.torch.emulate: torch.{name} (the eval-mode fast path of "
            "nn.MultiheadAttention and nn.TransformerEncoderLayer without gradients) computes its "
            "projections in one fused PyTorch kernel, which linear= cannot reach; pass attention= "
            "as well (it routes the fast path through Python), or run with gradients enabled")
    return refused


@contextlib.contextmanager
def _linear_layers(module, function, attention_routed):
    layers = [m for m in module.modules() if isinstance(m, torch.nn.Linear)]
    weights = {id(p) for p in module.parameters()}
    original_linear = F.linear

    def routed(input, weight, bias=None):
        if id(weight) in weights:
            return function(input, weight, bias)
        return original_linear(input, weight, bias)

    def forward_of(layer):
        def forward(input):
            return function(input, layer.weight, layer.bias)
        return forward

    own = [(layer, layer.__dict__.get("forward")) for layer in layers]
    fast = [] if attention_routed else [(name, getattr(torch, name)) for name in _FAST_PATHS
                                        if hasattr(torch, name)]
    try:
        F.linear = routed
        for layer in layers:
            layer.forward = forward_of(layer)
        for name, _ in fast:
            setattr(torch, name, _refused_fast_path(name))
        yield
    finally:
        F.linear = original_linear
        for layer, forward in own:
            if forward is None:
                layer.__dict__.pop("forward", None)
            else:
                layer.forward = forward
        for name, original in fast:
            setattr(torch, name, original)


@_checks.named_keywords
@contextlib.contextmanager
def emulate(model, linear=None, attention=None):
    """Within the `with` block, `model`'s linear layers and attention run through simprec; the
    block gives the model back (`with emulate(m, ...) as m:`), and everything is put back on
    leaving it, also on an exception.

    linear: None (PyTorch's own), a preset ("bf16", "fp16": autocast's GEMMs on an H200, the
    operands rounded to the dtype), a dict of simprec.torch.linear's keywords (model,
    out_format, split_k, promote_every, scales, grad_input, grad_weight), or a recipe such as
    simprec.torch.DelayedScaling(). Every nn.Linear of the model (subclasses too: their forward
    becomes F.linear's arithmetic) and every F.linear call whose weight is one of the model's
    parameters runs through it; torch.matmul and @ are not routed.
    attention: None, a numerics spec ("fa2", "torch-flash") or a dict of
    simprec.torch.emulate_attention's keywords; it routes F.scaled_dot_product_attention and
    nn.MultiheadAttention (with its eval-mode fast paths) through simprec.torch.attention.
    With linear= alone, those fast paths raise ValueError rather than run unemulated.
    Gradients computed after the block still use the numerics the forward pass ran with.
    """
    from simprec._torch_modules import emulate_attention
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model: expected a torch.nn.Module, got {type(model).__name__}")
    if linear is None and attention is None:
        raise ValueError("simprec.torch.emulate: nothing to emulate; expected linear= (a preset "
                         "such as 'bf16', GEMM keywords or a recipe) or attention= (a numerics "
                         "spec such as 'fa2')")
    function = None if linear is None else _linear_function(linear)
    options = _attention_options(attention)
    with contextlib.ExitStack() as stack:
        if options is not None:
            stack.enter_context(emulate_attention(**options))
        if function is not None:
            stack.enter_context(_linear_layers(model, function, options is not None))
        yield model
