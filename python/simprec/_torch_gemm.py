"""simprec.torch.matmul and simprec.torch.linear: PyTorch's GEMMs through simprec.gemm.gemm, with
autograd. Each of the three GEMMs of a linear layer (the forward product, dX = dY·W and
dW = dYᵀ·X) takes its own settings: simprec.gemm.gemm's keywords as a dict (a GEMM numerics
spec, numerics=, or the keyword form).

What PyTorch 2.x does on CUDA, which the defaults follow (aten/src/ATen/native/Linear.cpp and
cuda/Blas.cpp): F.linear with a bias flattens a contiguous input's leading dimensions into rows
and calls addmm(bias, x, Wᵀ), which takes cuBLASLt with its bias epilogue (gemm_and_bias,
CUBLASLT_EPILOGUE_BIAS) when the bias is one row of the output's width: the bias, in the
tensors' dtype, is added to the fp32 sum in the epilogue before the cast to the output dtype.
bf16 and fp16 operands run on the sm90 tensor cores with fp32 accumulation and the result in
their own dtype (docs/tensor_cores.md, "GEMMs as cuBLAS and _scaled_mm run them").
"""

import numpy as np
import torch

import simprec
import simprec.gemm
from simprec import _checks
from simprec._arrays import dtype_format, tensor_to_numpy

GEMM_KEYWORDS = ("numerics", "model", "out_format", "split_k", "promote_every", "scale_a",
                 "scale_b", "scale_order", "threads")
# The keyword form's numerics, which a spec (numerics=) says instead.
_KEYWORD_FORM = ("model", "out_format", "split_k", "promote_every", "scale_order")
# The GEMM models of cuBLAS on an H200 for 16-bit tensors (the recordings' nvjet kernels).
DEFAULT_MODELS = {"bf16": "tc:sm90-wgmma-bf16", "fp16": "tc:sm90-wgmma-fp16"}
_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
_FP8_NAMES = {"e4m3": "e4m3fn", "e5m2": "e5m2"}


def settings_argument(value, argument, where=None):
    """None, or a dict of simprec.gemm.gemm's keywords (checked names, a copy). Its items are
    named argument['key'], or bare where `where` (the function taking them as keywords) is
    given."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise TypeError(f"{argument}={value!r}: expected None or a dict of simprec.gemm.gemm's "
                        f"keywords such as {{'model': 'tc:sm90-wgmma-bf16'}}, got "
                        f"{type(value).__name__}")
    _checks.unknown_keywords(value, GEMM_KEYWORDS, where or argument)

    def name(key):
        return key if where else f"{argument}['{key}']"

    if value.get("model") is not None:
        _checks.text(value["model"], name("model"), "tc:sm90-wgmma-bf16")
    fmt = value.get("out_format")
    if fmt is not None and fmt not in simprec.gemm.OUT_FORMATS:
        raise ValueError(f"{name('out_format')}={fmt!r}: expected one of "
                         f"{', '.join(simprec.gemm.OUT_FORMATS)} or None")
    return dict(value)


def resolve(settings, tensor, argument, where=None):
    """The keywords of one GEMM: `settings` with model and out_format filled in from the
    tensor's dtype as cuBLAS runs it (bf16, fp16: the sm90 wgmma model, out in the dtype), or
    its numerics spec checked and read (its instruction and output format)."""
    resolved = dict(settings or {})
    if resolved.get("numerics") is not None:
        given = [k for k in _KEYWORD_FORM if resolved.get(k) is not None]
        if given:
            raise TypeError(f"{where or argument}: numerics= and {', '.join(given)}= both given; "
                            "the spec says it all (docs/gemm.md)")
        spec = _checks.text(resolved["numerics"], "numerics", "cublas-bf16")
        resolved["model"], resolved["out_format"] = spec_instruction_and_out(spec)
        return resolved
    fmt = dtype_format(tensor.dtype)
    if resolved.get("model") is None:
        if fmt not in DEFAULT_MODELS:
            raise ValueError(
                f"{argument}: no default GEMM model for {tensor.dtype} tensors (cuBLAS runs "
                "fp32 GEMMs on its FP32 units, which simprec does not model); pass model=, "
                "e.g. model='tc:sm90-wgmma-bf16' for autocast's bf16 GEMM, or numerics=, or "
                "bf16/fp16 tensors")
        resolved["model"] = DEFAULT_MODELS[fmt]
    if resolved.get("out_format") is None:
        resolved["out_format"] = fmt if fmt in simprec.gemm.OUT_FORMATS else "fp32"
    return resolved


def spec_instruction_and_out(spec):
    """A GEMM numerics spec's instruction model and output format (ValueError, naming the
    nearest names, for a spec the engine refuses)."""
    canonical = simprec.gemm.canonical(spec).split(",")
    presets = {p["name"]: p["assignments"] for p in simprec.gemm.numerics_reference()["presets"]}
    keys = dict(item.split("=", 1) for item in presets[canonical[0]].split(",") if item)
    keys.update(item.split("=", 1) for item in canonical[1:])
    return keys.get("instruction", "tc:sm90-wgmma-bf16"), keys.get("out", "fp32")


def without_scales(settings):
    """A GEMM's settings for another product: scales belong to one pair of operands (a spec's
    scaling stays: the backward GEMMs are then given scales of 1)."""
    return {k: v for k, v in settings.items() if k not in ("scale_a", "scale_b", "scale_order")}


_MODELS = {}


def operand_formats(model):
    """The formats of A and B of a tensor-core model; ValueError for a model unknown or one whose
    accumulator is not fp32 (simprec.gemm.gemm's fp32 arithmetic between instructions)."""
    if not _MODELS:
        _MODELS.update({m["name"]: m for m in simprec.tensor_core_models()})
    entry = _MODELS.get(model)
    if entry is None:
        import difflib
        near = difflib.get_close_matches(model, list(_MODELS), n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise ValueError(f"model={model!r}: not a tensor-core model{hint}; expected one of "
                         f"simprec.tensor_core_models()")
    if entry["accumulator"] != "fp32":
        raise ValueError(f"model={model!r}: its accumulator is {entry['accumulator']}; a GEMM "
                         "takes a model with an fp32 accumulator")
    a = entry.get("input_a", entry["input"])
    b = entry.get("input_b", entry["input"])
    return _FP8_NAMES.get(a, a), _FP8_NAMES.get(b, b)


def values(tensor, argument):
    """A tensor's values as a numpy array (a copy): float64 for float64 tensors, so that they are
    rounded once into the model's format, float32 for every narrower dtype."""
    array, fmt = tensor_to_numpy(tensor, argument, allow_copy=True)
    if fmt is not None:
        array = simprec.decode(array, fmt, dtype="float32")
    return np.array(array, dtype=np.float64 if array.dtype == np.float64 else np.float32)


def operand(array, fmt):
    """Values rounded to nearest even into the model's input format, as a cast of the tensor to
    that dtype rounds (a no-op for values of the format), as float32."""
    if fmt != "fp32":
        array = simprec.round(np.ascontiguousarray(array), fmt)
    return np.ascontiguousarray(array, dtype=np.float32)


def gemm_values(a, b, settings, bias=None):
    """A (M x K) · B (K x N), float32 arrays of any values, through simprec.gemm.gemm with
    `settings` (resolved: model and out_format filled in, or a numerics spec read): the operands
    rounded into the model's input formats, the bias (N values, already in out_format) added by
    the engine in fp32 after the scales and before the cast, as cuBLASLt's bias epilogue.
    Returns float32 values of out_format."""
    fa, fb = operand_formats(settings["model"])
    keywords = {k: v for k, v in settings.items() if v is not None}
    if "numerics" in keywords:
        keywords.pop("model")
        out_format = keywords.pop("out_format")
    else:
        out_format = keywords["out_format"]
    if 0 in a.shape or 0 in b.shape:  # as PyTorch: no rows or columns, or K = 0 (sums of nothing)
        d = np.zeros((a.shape[0], b.shape[1]), dtype=np.float32)
        if bias is not None:
            d = d + bias
        return d if out_format == "fp32" else simprec.round(d, out_format)
    return simprec.gemm.gemm(operand(a, fa), operand(b, fb), bias=bias, **keywords)


def result_dtype(dtype, out_format):
    """The tensor's own dtype where it holds out_format's values (float32 holds bf16 values),
    else out_format's dtype."""
    own = dtype_format(dtype)
    if own == out_format or (own in ("fp32", "fp64") and out_format in ("bf16", "fp16", "fp32")):
        return dtype
    return _DTYPES[out_format]


def as_tensor(array, dtype):
    return torch.from_numpy(np.ascontiguousarray(array)).to(dtype)


def check_tensor(tensor, argument, dims=1):
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"{argument}: expected a torch.Tensor, got {type(tensor).__name__}")
    if not tensor.is_floating_point():
        raise TypeError(f"{argument}: expected a floating-point tensor, got {tensor.dtype}")
    if tensor.dim() < dims:
        raise ValueError(f"{argument}: expected at least {dims} dimensions, got shape "
                         f"{tuple(tensor.shape)}")


def refuse_double_backward(where):
    if torch.is_grad_enabled():
        raise NotImplementedError(
            f"{where}: double backward (create_graph=True, gradients of gradients) is not "
            "supported: the emulated backward GEMMs are not themselves differentiable; call "
            "backward() or torch.autograd.grad() without create_graph")
