"""simprec.torch.DelayedScaling: FP8 training of linear layers as Transformer Engine's delayed
scaling recipe does it, emulated on the CPU, every GEMM through simprec.gemm.gemm.

Transformer Engine (transformer_engine/common/recipe/__init__.py, DelayedScaling, and
transformer_engine/common/recipe/delayed_scaling.cu, the amax-and-scale update) keeps, for each
FP8 tensor of each layer (input, weight, output gradient), a history of the amax (largest |x|)
of its last amax_history_len quantizations and one fp32 scale. A tensor is quantized with the
scale already held: q = cast(fl32(x · scale)), nearest even, saturating at the format's largest
finite value; its amax enters the history; then the scale is updated from the history:
amax = the history's max ("max") or its newest entry ("most_recent"),
scale = fl32(fl32(fp8_max · 2^-margin) / amax) when amax is finite and > 0 (else the old scale;
an infinite quotient becomes FLT_MAX), scale_inv = fl32(1 / scale), and the history rolled (the
oldest entry out). So step i's tensors are quantized with the scale from steps before i (the
first step with scale 1). The GEMMs take scale_inv of both operands as cuBLASLt's A and B
scales: the fp32 sum times fl32(scale_inv_a · scale_inv_b), then the bias, then the cast.
"HYBRID" (TE's default): e4m3 forward operands, e5m2 gradients; "E4M3": e4m3 everywhere.
"""

import weakref

import numpy as np
import torch

import simprec
from simprec import _checks
from simprec._torch_gemm import (as_tensor, gemm_values, refuse_double_backward, result_dtype,
                                 values)
from simprec._torch_linear import _check_linear, bias_gradient, bias_values, rows

FP8_MAX = {"e4m3fn": 448.0, "e5m2": 57344.0}
# (forward operands, gradient) formats and the models of fprop, dgrad (dY·W), wgrad (dYᵀ·X).
FORMATS = {
    "hybrid": ("e4m3fn", "e5m2", "tc:sm90-wgmma-e4m3", "tc:sm90-wgmma-e5m2-e4m3",
               "tc:sm90-wgmma-e5m2-e4m3"),
    "e4m3": ("e4m3fn", "e4m3fn", "tc:sm90-wgmma-e4m3", "tc:sm90-wgmma-e4m3",
             "tc:sm90-wgmma-e4m3"),
}
GEMMS = ("fprop", "dgrad", "wgrad")
PROMOTE_EVERY_CUTLASS = 128  # _scaled_mm without fast accumulation on an H200 (recordings)


class ScalingState:
    """One tensor's delayed-scaling state: its amax history (newest first), scale, scale_inv."""

    def __init__(self, history_length):
        self.history = np.zeros(history_length, dtype=np.float32)
        self.scale = np.float32(1.0)
        self.scale_inv = np.float32(1.0)
        self.quantizations = 0

    def quantize(self, x, fmt, margin, algorithm):
        """x (float32 values) in `fmt` with the scale held, and the scale_inv it was quantized
        with; then its amax recorded and the scale updated."""
        scale_inv = self.scale_inv
        with np.errstate(over="ignore"):  # x · FLT_MAX: inf, which saturates as on the GPU
            scaled = (x * self.scale).astype(np.float32)
        q = simprec.round(scaled, fmt, overflow="saturate")
        self.history[0] = np.float32(np.max(np.abs(x))) if x.size else np.float32(0)
        self._update(np.float32(FP8_MAX[fmt] * 2.0 ** -margin), algorithm)
        self.quantizations += 1
        return q, scale_inv

    def _update(self, scaled_max, algorithm):
        amax = self.history.max() if algorithm == "max" else self.history[0]
        if np.isfinite(amax) and amax > 0:
            with np.errstate(over="ignore"):
                scale = np.float32(scaled_max / amax)
            self.scale = np.float32(np.finfo(np.float32).max) if np.isinf(scale) else scale
        self.scale_inv = np.float32(np.float32(1.0) / self.scale)
        self.history = np.roll(self.history, -1)
        self.history[0] = 0


class _Fp8Linear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, weight, bias, recipe, state):
        fwd, _ = recipe.formats
        x, xs = state["input"].quantize(values(input, "input").reshape(rows(input),
                                                                       weight.shape[1]),
                                        fwd, recipe.margin, recipe.amax_compute_algo)
        w, ws = state["weight"].quantize(values(weight, "weight"), fwd, recipe.margin,
                                         recipe.amax_compute_algo)
        b = None if bias is None else bias_values(bias, recipe.out_format)
        y = gemm_values(x, np.ascontiguousarray(w.T), recipe.gemm("fprop", xs, ws), b)
        ctx.save_for_backward(input, weight, bias)
        ctx.quantized, ctx.recipe, ctx.state = (x, xs, w, ws), recipe, state
        return as_tensor(y.reshape(*input.shape[:-1], w.shape[0]),
                         result_dtype(input.dtype, recipe.out_format))

    @staticmethod
    def backward(ctx, grad):
        refuse_double_backward("simprec.torch.DelayedScaling")
        input, weight, bias = ctx.saved_tensors
        x, xs, w, ws = ctx.quantized
        recipe = ctx.recipe
        g = values(grad, "grad_output").reshape(rows(input), weight.shape[0])
        q, gs = ctx.state["grad_output"].quantize(g, recipe.formats[1], recipe.margin,
                                                  recipe.amax_compute_algo)
        dx = dw = db = None
        if ctx.needs_input_grad[0]:
            dx = as_tensor(gemm_values(q, w, recipe.gemm("dgrad", gs, ws)).reshape(input.shape),
                           input.dtype)
        if ctx.needs_input_grad[1]:
            dw = as_tensor(gemm_values(np.ascontiguousarray(q.T), x, recipe.gemm("wgrad", gs, xs)),
                           weight.dtype)
        if bias is not None and ctx.needs_input_grad[2]:
            db = bias_gradient(g, bias.dtype)
        return dx, dw, db, None, None


class DelayedScaling:
    """An FP8 training recipe for linear layers: Transformer Engine's delayed scaling
    (DelayedScaling(margin, fp8_format, amax_history_len, amax_compute_algo)), emulated.

    Each layer (keyed by its weight tensor) keeps a ScalingState for its input, weight and
    output gradient. fp8_format "hybrid" (e4m3 forward, e5m2 gradients; TE's default) or
    "e4m3". The three GEMMs run on the sm90 FP8 wgmma models through simprec.gemm.gemm:
    promote_every (an int, None, or a dict over "fprop", "dgrad", "wgrad") is the accumulator's
    promotion interval, 128 as _scaled_mm without fast accumulation, None for fast accumulation
    (TE's own default: fprop None, dgrad and wgrad 128). out_format: the outputs and
    gradients' format (bf16: TE with bf16 activations). Use with simprec.torch.emulate(model,
    linear=recipe), or call recipe.linear(input, weight, bias) as F.linear.
    """

    def __init__(self, *, margin=0, amax_history_len=1024, amax_compute_algo="max",
                 fp8_format="hybrid", promote_every=PROMOTE_EVERY_CUTLASS, out_format="bf16"):
        self.margin = _checks.number(margin, "margin", "a margin (powers of 2) such as 0")
        if self.margin is None:
            raise TypeError("margin=None: expected a number such as 0")
        length = _checks.number(amax_history_len, "amax_history_len", "a positive integer",
                                integer=True)
        if length is None or length < 1:
            raise ValueError(f"amax_history_len={amax_history_len!r}: expected a positive "
                             "integer")
        self.amax_history_len = length
        if amax_compute_algo not in ("max", "most_recent"):
            raise ValueError(f"amax_compute_algo={amax_compute_algo!r}: expected 'max' or "
                             "'most_recent'")
        self.amax_compute_algo = amax_compute_algo
        if fp8_format not in FORMATS:
            raise ValueError(f"fp8_format={fp8_format!r}: expected one of {', '.join(FORMATS)}")
        self.fp8_format = fp8_format
        self.formats = FORMATS[fp8_format][:2]
        self.models = dict(zip(GEMMS, FORMATS[fp8_format][2:]))
        self.promote_every = _promotion(promote_every)
        if out_format not in simprec.gemm.OUT_FORMATS:
            raise ValueError(f"out_format={out_format!r}: expected one of "
                             f"{', '.join(simprec.gemm.OUT_FORMATS)}")
        self.out_format = out_format
        self._states = {}  # id(weight) -> states; a tensor's == is elementwise, not identity

    def __repr__(self):
        return (f"DelayedScaling(margin={self.margin:g}, amax_history_len={self.amax_history_len}, "
                f"amax_compute_algo={self.amax_compute_algo!r}, fp8_format={self.fp8_format!r}, "
                f"promote_every={self.promote_every!r}, out_format={self.out_format!r})")

    def gemm(self, which, scale_inv_a, scale_inv_b):
        """simprec.gemm.gemm's keywords for one of the three GEMMs."""
        return dict(model=self.models[which], out_format=self.out_format,
                    promote_every=self.promote_every[which], scale_a=scale_inv_a,
                    scale_b=scale_inv_b, scale_order="alpha")

    def state(self, weight):
        """The layer's {"input", "weight", "grad_output"} ScalingStates (made on first use)."""
        key = id(weight)
        if key not in self._states:
            self._states[key] = {name: ScalingState(self.amax_history_len)
                                 for name in ("input", "weight", "grad_output")}
            weakref.finalize(weight, self._states.pop, key, None)
        return self._states[key]

    def state_dict(self, model):
        """The scaling states of `model`'s layers by parameter name (what a checkpoint keeps, as
        TE keeps its FP8 metadata in the module's extra state): plain Python values."""
        out = {}
        for name, p in model.named_parameters():
            if id(p) in self._states:
                out[name] = {t: {"history": s.history.tolist(), "scale": float(s.scale),
                                 "scale_inv": float(s.scale_inv),
                                 "quantizations": s.quantizations}
                             for t, s in self._states[id(p)].items()}
        return out

    def load_state_dict(self, model, states):
        """Scaling states from state_dict(model) (the same parameter names)."""
        params = dict(model.named_parameters())
        unknown = sorted(set(states) - set(params))
        if unknown:
            raise ValueError(f"states: parameters {unknown} are not the model's")
        for name, tensors in states.items():
            for t, saved in tensors.items():
                s = self.state(params[name])[t]
                if len(saved["history"]) != self.amax_history_len:
                    raise ValueError(f"states[{name!r}][{t!r}]: an amax history of "
                                     f"{len(saved['history'])}; expected {self.amax_history_len}")
                s.history = np.array(saved["history"], dtype=np.float32)
                s.scale, s.scale_inv = np.float32(saved["scale"]), np.float32(saved["scale_inv"])
                s.quantizations = int(saved["quantizations"])

    def linear(self, input, weight, bias=None):
        """F.linear(input, weight, bias) through the recipe (CPU tensors, differentiable)."""
        _check_linear(input, weight, bias)
        return _Fp8Linear.apply(input, weight, bias, self, self.state(weight))


def _promotion(value):
    if isinstance(value, dict):
        _checks.unknown_keywords(value, GEMMS, "promote_every")
        return {g: _interval(value.get(g), f"promote_every['{g}']") for g in GEMMS}
    interval = _interval(value, "promote_every")
    return {g: interval for g in GEMMS}


def _interval(value, argument):
    n = _checks.number(value, argument, "a positive number of elements of K", integer=True)
    if n is not None and n < 1:
        raise ValueError(f"{argument}={value!r}: expected a positive number of elements of K or "
                         "None")
    return n

