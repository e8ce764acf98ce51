"""simprec for Python: bit-exact emulation of low-precision floating-point arithmetic.

Formats and their limits, correctly rounded rounding and arithmetic on numpy arrays (and torch
tensors through DLPack), the tensor-core models, emulated attention with its analysis, experiment
files, and validation of Python attention kernels. The C++ work runs without the GIL. See
docs/python.md. simprec.recordings records real kernels on a GPU and compares them with the
emulation; its recorders run without the C++ extension (simprec._extension).
"""

from __future__ import annotations

import json
import os
from typing import Any, Callable, Mapping, Optional, Sequence, Tuple

import numpy as np

from simprec._arrays import like as _like
from simprec._arrays import to_numpy as _to_numpy
from simprec import _checks
from simprec._extension import core as _core
from simprec._extension import missing as _missing_extension
from simprec._types import Array, ArrayLike, DeviceFunctions, MemorySize, Numerics, Tile
from simprec.discovery import DiscoveryResult, discover  # noqa: F401
from simprec.gemm import discover as discover_gemm  # noqa: F401
from simprec.validation import ValidationReport, validate  # noqa: F401

try:
    from simprec._build_info import __version__
except ImportError:  # a source folder on PYTHONPATH (python/): CMake generated nothing there
    __version__ = "unknown"

__all__ = [
    "__version__",
    "formats", "format_info", "rounding_modes", "round", "decode", "add", "sub", "mul", "div",
    "fma", "sqrt", "matmul", "tensor_core_models", "quantize", "attention", "AttentionResult",
    "generate", "run_experiment", "validate", "ValidationReport", "numerics_reference",
    "canonical_numerics", "numerics_help", "discover", "DiscoveryResult", "discover_gemm",
    "device_function", "set_progress",
]

formats = _core.formats
rounding_modes = _core.rounding_modes
tensor_core_models = _core.tensor_core_models
generator_kinds = _core.generator_kinds
numerics_reference = _core.numerics_reference
# Calls longer than 2 s (attention, validate, discover, run_experiment, ...) show a progress line
# on stderr where it is a terminal; set_progress(False) turns it off.
set_progress = _core.set_progress


@_checks.named_keywords
def format_info(format, *, overflow=None, subnormals=True):
    """A format's limits, the columns of `simprec formats` (any eXmY[fn|fnuz])."""
    return _core.format_info(_checks.text(format, "format", "e4m3fn"),
                             overflow=_checks.optional_str(overflow, "overflow", "saturate"),
                             subnormals=_checks.flag(subnormals, "subnormals"))


@_checks.named_keywords
def canonical_numerics(spec, format="bf16"):
    """A numerics spec's canonical form (ValueError for one a run would refuse)."""
    return _core.canonical_numerics(_checks.numerics_spec(spec), _checks.text(format, "format",
                                                                           "bf16"))


def _mode(format, rounding, overflow=None):
    """The format, rounding and overflow arguments checked for their types."""
    return (_checks.text(format, "format", "bf16"), _checks.text(rounding, "rounding", "rne"),
            _checks.optional_str(overflow, "overflow", "saturate"))


@_checks.named_keywords
def round(x: ArrayLike, format: str, rounding: str = "rne", *, sr_bits: int = 32, seed: int = 0,
          overflow: Optional[str] = None, subnormals: bool = True, encode: bool = False,
          out: Optional[np.ndarray] = None, threads: int = 0) -> Array:
    """Rounds every element of x (float32 or float64) once into `format` with `rounding`.

    encode=False gives the rounded values in x's dtype (out=x rounds in place); encode=True the
    encodings (uint8, uint16, uint32 or uint64 by the format's width). Element i takes random
    index i of stream 0 under `seed` (sr, rnr), as the i-th line of `simprec round` does.
    """
    array, bits_format = _to_numpy(x, "x")
    if bits_format is not None:
        raise TypeError(f"x: a {bits_format} tensor holds encodings; decode it first or pass "
                        "float32/float64 values")
    format, rounding, overflow = _mode(format, rounding, overflow)
    result = _core.round(array, format, rounding, sr_bits=sr_bits, seed=seed, overflow=overflow,
                         subnormals=_checks.flag(subnormals, "subnormals"),
                         encode=_checks.flag(encode, "encode"), out=out, threads=threads)
    return _like(result, x)


@_checks.named_keywords
def decode(bits: ArrayLike, format: str, *, overflow: Optional[str] = None,
           subnormals: bool = True, dtype: str = "float64",
           out: Optional[np.ndarray] = None) -> Array:
    """The exact values of encodings of `format` (uint8/uint16/uint32/uint64) as float64 (or
    float32 where every value of the format fits)."""
    array, bits_format = _to_numpy(bits, "bits")
    if bits_format is not None:
        raise TypeError(f"bits: a {bits_format} tensor is already values; convert it with "
                        ".float() instead")
    if not isinstance(dtype, str):
        try:  # numpy.float32, numpy.dtype("float64")
            dtype = np.dtype(dtype).name
        except TypeError:
            raise TypeError(f"dtype={dtype!r}: expected 'float64' or 'float32'") from None
    format, _, overflow = _mode(format, "rne", overflow)
    result = _core.decode(array, format, overflow=overflow,
                          subnormals=_checks.flag(subnormals, "subnormals"), dtype=dtype, out=out)
    return _like(result, bits)


def _elementwise(operation, arrays, names, format, rounding, options):
    converted = []
    for array, name in zip(arrays, names):
        a, bits_format = _to_numpy(array, name)
        if bits_format is not None:
            raise TypeError(f"{name}: pass {bits_format} tensors as encodings "
                            "(tensor.view(torch.int16).numpy().view('uint16')) or as float32")
        converted.append(a)
    if any(a.shape != converted[0].shape for a in converted):
        # Broadcasting needs materialised operands: the C++ side takes contiguous arrays.
        converted = [np.ascontiguousarray(a) for a in np.broadcast_arrays(*converted)]
    format, rounding, options["overflow"] = _mode(format, rounding, options["overflow"])
    options["subnormals"] = _checks.flag(options["subnormals"], "subnormals")
    result = operation(*converted, format, rounding, **options)
    return _like(result, arrays[0])


def _mode_options(sr_bits, seed, overflow, subnormals):
    return dict(sr_bits=sr_bits, seed=seed, overflow=overflow, subnormals=subnormals)


def _binary(operation: Callable[..., Any], name: str,
            symbol: str) -> Callable[..., Array]:
    def function(a: ArrayLike, b: ArrayLike, format: str, rounding: str = "rne", *,
                 sr_bits: int = 32, seed: int = 0, overflow: Optional[str] = None,
                 subnormals: bool = True) -> Array:
        return _elementwise(operation, (a, b), ("a", "b"), format, rounding,
                            _mode_options(sr_bits, seed, overflow, subnormals))
    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"a {symbol} b rounded once into `format` with `rounding`; operands are "
                        "encodings or values the format holds exactly, results come back alike.")
    return _checks.named_keywords(function)


add = _binary(_core.add, "add", "+")
sub = _binary(_core.sub, "sub", "-")
mul = _binary(_core.mul, "mul", "*")
div = _binary(_core.div, "div", "/")


@_checks.named_keywords
def fma(a: ArrayLike, b: ArrayLike, c: ArrayLike, format: str, rounding: str = "rne", *,
        sr_bits: int = 32, seed: int = 0, overflow: Optional[str] = None,
        subnormals: bool = True) -> Array:
    """a * b + c with one rounding into `format`."""
    return _elementwise(_core.fma, (a, b, c), ("a", "b", "c"), format, rounding,
                        _mode_options(sr_bits, seed, overflow, subnormals))


@_checks.named_keywords
def sqrt(a: ArrayLike, format: str, rounding: str = "rne", *, sr_bits: int = 32, seed: int = 0,
         overflow: Optional[str] = None, subnormals: bool = True) -> Array:
    """sqrt(a) rounded once into `format`."""
    return _elementwise(_core.sqrt, (a,), ("a",), format, rounding,
                        _mode_options(sr_bits, seed, overflow, subnormals))


@_checks.named_keywords
def matmul(a: ArrayLike, b: ArrayLike, c: Optional[ArrayLike] = None, *,
           model: str = "tc:sm90-mma-bf16", threads: int = 0) -> Array:
    """D = A*B + C as the tensor-core model computes it (`simprec mma`): A (..., M, K) and
    B (..., K, N) as encodings of the model's input format for each (A's and B's differ for
    tc:sm90-wgmma-e5m2-e4m3 and the like) or float32 values it holds exactly (torch bf16/fp16
    tensors too), C float32; D float32 (fp16 accumulators: uint16 encodings)."""
    operands: list[Optional[np.ndarray]] = []
    for array, name in ((a, "a"), (b, "b"), (c, "c")):
        if array is None:
            operands.append(None)
            continue
        operands.append(_to_numpy(array, name)[0])
    result = _core.matmul(*operands, model=_checks.text(model, "model", "tc:sm90-mma-bf16"),
                          threads=threads)
    return _like(result, a)


@_checks.named_keywords
def quantize(x: ArrayLike, scheme: str, rounding: str = "rne", *, sr_bits: int = 32,
             seed: int = 0, block_size: Optional[int] = None) -> dict[str, Any]:
    """x (float32 or float64; NVFP4 float32 only) in a block-scaled format, as `simprec quantize`
    computes it (docs/block_scaling.md): scheme mxfp8_e4m3, mxfp8_e5m2, mxfp6_e2m3, mxfp6_e3m2,
    mxfp4 (OCP MX v1.0, blocks of 32) or nvfp4 (blocks of 16); blocks along the last axis
    (block_size replaces the scheme's). Value i takes random index i of stream 0 under `seed`
    (sr, rnr). Returns a dict of the CLI's files: elements (uint8 encodings, x's shape),
    scales (uint8 E8M0 or e4m3fn encodings, the last axis counting blocks), dequantized
    (float64, exact) and tensor_scale (NVFP4's fp32 decode scale as a float; None for MX)."""
    array, bits_format = _to_numpy(x, "x")
    if bits_format is not None:
        raise TypeError(f"x: a {bits_format} tensor holds encodings; decode it first or pass "
                        "float32/float64 values")
    scheme, rounding = _checks.text(scheme, "scheme", "mxfp8_e4m3"), _mode("bf16", rounding)[1]
    block_size = _checks.number(block_size, "block_size", "a block size such as 32",
                                integer=True)
    return _core.quantize(array, scheme, rounding, sr_bits, seed, block_size)


class AttentionResult:
    """What `simprec attention` computes and writes, in memory.

    o, lse (and with dO: dq, dk, dv, delta) are float64 arrays of the exact emulated values, each
    a value of its site's format (o_format, grad_format); stats is the content of the CLI's
    stats.json (config, scale, metrics, baseline, trace, attribution) without the input
    description; metrics, trace and attribution are its parts; attribution_table the ranked
    table the CLI prints; nonfinite_inputs counts the NaN and infinite values of each input
    ({"q": {"nan": 0, "inf": 0}, ...}), which go through as the emulated arithmetic takes them.
    """

    def __init__(self, raw: dict[str, Any]) -> None:
        self.o: np.ndarray = raw["o"]
        self.lse: np.ndarray = raw["lse"]
        self.dq: Optional[np.ndarray] = raw.get("dq")
        self.dk: Optional[np.ndarray] = raw.get("dk")
        self.dv: Optional[np.ndarray] = raw.get("dv")
        self.delta: Optional[np.ndarray] = raw.get("delta")
        self.o_format: str = raw["o_format"]
        self.grad_format: str = raw["grad_format"]
        self.input_format: Optional[str] = raw["input_format"]
        self.stats: dict[str, Any] = json.loads(raw["stats_json"])
        self.metrics: Optional[dict[str, Any]] = self.stats.get("metrics")
        self.baseline: Optional[dict[str, Any]] = self.stats.get("baseline")
        self.trace: Optional[Any] = self.stats.get("trace")
        self.attribution: Optional[Any] = self.stats.get("attribution")
        self.attribution_table: str = raw["attribution_table"]
        self.numerics: Any = self.stats["numerics"]
        self.nonfinite_inputs: dict[str, Any] = raw["nonfinite_inputs"]

    def __repr__(self) -> str:
        parts = [f"o {self.o.shape} in {self.o_format}"]
        if self.dq is not None:
            parts.append(f"dq, dk, dv in {self.grad_format}")
        if self.metrics:
            m = self.metrics["o"]
            z = m.get("bias_z")
            parts.append(f"O bias {m['bias']:+.3e}" + ("" if z is None else f" (z {z:+.1f})"))
        return "AttentionResult(" + ", ".join(parts) + ")"


def _attention_inputs(q, k, v, do, input_format):
    arrays, formats_seen = [], set()
    for array, name in ((q, "q"), (k, "k"), (v, "v"), (do, "do")):
        if array is None:
            arrays.append(None)
            continue
        a, bits_format = _to_numpy(array, name)
        if bits_format is not None:
            formats_seen.add(bits_format)
        arrays.append(a)
    if formats_seen:
        if len(formats_seen) > 1 or (input_format and input_format not in formats_seen):
            raise TypeError(f"q, k, v, do: tensors of {sorted(formats_seen)} with input_format "
                            f"{input_format!r}; give them all in one format")
        input_format = formats_seen.pop()
    return arrays, input_format


@_checks.named_keywords
def attention(q: ArrayLike, k: ArrayLike, v: ArrayLike, do: Optional[ArrayLike] = None, *,
              numerics: Numerics = "fa2", format: Optional[str] = None, set: Sequence[str] = (),
              mitigations: Sequence[str] = (), tile: Optional[Tile] = None,
              causal: bool = False, scale: Optional[float] = None, seed: int = 0,
              threads: int = 0, input_format: Optional[str] = None, trace: bool = False,
              reference: bool = True, baseline: bool = True, attribute: bool = False,
              attribute_target: str = "o", o: Optional[np.ndarray] = None,
              lse: Optional[np.ndarray] = None, max_memory: Optional[MemorySize] = None,
              device_functions: Optional[DeviceFunctions] = None,
              mask: Optional[ArrayLike] = None, bias: Optional[ArrayLike] = None,
              causal_align: str = "top-left", window: Optional[Tuple[int, int]] = None,
              alibi_slopes: Optional[ArrayLike] = None,
              softcap: Optional[float] = None, score_mod: Optional[str] = None,
              mask_mod: Optional[str] = None,
              score_tensors: Optional[Mapping[str, ArrayLike]] = None) -> AttentionResult:
    """Emulated attention as `simprec attention` runs it: forward, and backward with dO.

    q (..., Nq, d), k (..., Nk, d), v (..., Nk, dv), do (..., Nq, dv): float32/float64 values,
    k and v may have fewer heads than q, a divisor of q's (grouped-query attention: dk and dv
    come back with k's heads, each the sum over its group of query heads);
    or encodings of input_format (uint16/uint8), or torch tensors (bf16/fp16 ones as their
    encodings). numerics is a numerics spec ("fa2", "torch-math,p_cast=bf16:rne", a .toml
    file; docs/attention.md, docs/kernel_models.md) and format the low-precision format when
    the spec names none: by default the inputs' format where they are encodings (input_format,
    or bf16/fp16/fp8 torch tensors), else bf16;
    tile, set and mitigations add to it as the CLI's --tile, --set and --mitigation do. reference=False skips the fp64
    reference and the metrics (what a training step needs); o and lse, with do, are a forward
    pass to differentiate instead of running it again. A call whose estimated memory exceeds
    max_memory ("4G", a number of bytes; None: the machine's physical memory) raises MemoryError
    before it starts, as `simprec attention --max-memory` refuses it. device_functions supplies
    the kernel's own fp32 functions: {"exp": np.exp, "log": np.log, "exp2": ..., "log2": ...,
    "rcp": ..., "div": ...}, each a callable taking float32 numpy arrays (div: x and the
    divisor) and returning float32 values, called once per function and pass with every
    argument the emulation meets at an fp32 round-to-nearest-even site (docs/python.md). Ctrl-C
    stops the call at the next head. NaN and infinite inputs go through as the emulated
    arithmetic takes them; AttentionResult.nonfinite_inputs counts them. Masks and score
    modifications (docs/attention_variants.md): mask, a boolean array (..., Nq, Nk) broadcast
    over q's leading dimensions (False: masked); bias, an additive float array likewise (-inf
    masks); causal_align, "top-left" (key j visible to query i when j <= i) or "bottom-right"
    (j <= i + Nk - Nq) for causal=True; window=(left, right), keys within left before and right
    after the (aligned) diagonal (-1: unbounded); alibi_slopes, one per head, adding
    slope * (j - i); softcap, cap * tanh(score / cap) on the scaled score as FlexAttention
    compiles it; score_mod, any score modification in FlexAttention's form written as an
    expression of score, b, h, q_idx, kv_idx and the arrays of score_tensors (a dict of name:
    array), e.g. "score + bias[h, q_idx, kv_idx]", its arithmetic and derivative emulated as
    Inductor and Triton compile them (docs/score_mod.md; simprec.torch.flex_attention writes it
    from a callable); mask_mod, a boolean expression of b, h, q_idx, kv_idx and those arrays
    (False: masked), e.g. "q_idx // 256 == kv_idx // 256". Returns an AttentionResult.
    """
    numerics = _checks.numerics_spec(numerics)
    _checks.optional_str(format, "format", "bf16")
    _checks.optional_str(input_format, "input_format", "bf16")
    (qa, ka, va, da), input_format = _attention_inputs(q, k, v, do, input_format)
    if format is None:
        format = input_format or "bf16"
    raw = _core.attention(qa, ka, va, da, numerics=numerics, format=format,
                          set=_checks.string_list(set, "set", "s=fp32:rne"),
                          mitigations=_checks.string_list(mitigations, "mitigations",
                                                          "beta-rowmax:2"),
                          tile=_checks.tile_argument(tile), causal=_checks.flag(causal, "causal"),
                          scale=_checks.number(scale, "scale", "a positive number"), seed=seed,
                          threads=threads, input_format=input_format,
                          trace=_checks.flag(trace, "trace"),
                          reference=_checks.flag(reference, "reference"),
                          baseline=_checks.flag(baseline, "baseline"),
                          attribute=_checks.flag(attribute, "attribute"),
                          attribute_target=_checks.text(attribute_target, "attribute_target", "dq"),
                          o=o, lse=lse,
                          max_memory=max_memory, device_functions=device_functions,
                          mask=_mask_argument(mask, "mask", bool),
                          bias=_mask_argument(bias, "bias", float),
                          causal_align=_checks.text(causal_align, "causal_align", "bottom-right"),
                          window=_window_argument(window),
                          alibi_slopes=_mask_argument(alibi_slopes, "alibi_slopes", float),
                          softcap=0.0 if softcap is None else
                          _checks.number(softcap, "softcap", "a positive number"),
                          score_mod=_checks.optional_str(score_mod, "score_mod",
                                                         "score + bias[h, q_idx, kv_idx]"),
                          mask_mod=_checks.optional_str(mask_mod, "mask_mod",
                                                        "q_idx >= kv_idx"),
                          score_tensors=_score_tensors_argument(score_tensors))
    return AttentionResult(raw)


def _score_tensors_argument(tensors):
    """score_mod's arrays as numpy (torch tensors converted: bf16 and fp16 as float32, their
    values exact there); None as is."""
    if tensors is None:
        return None
    if not isinstance(tensors, Mapping):
        raise TypeError(f"score_tensors: expected a dict of name: array, got "
                        f"{type(tensors).__name__}")
    out = {}
    for name, value in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"score_tensors: the name {name!r} is not a string")
        if hasattr(value, "detach"):  # a torch tensor
            value = value.detach().cpu()
            if value.is_floating_point() and value.element_size() < 4:
                value = value.float()
            value = value.numpy()
        out[name] = np.asarray(value)
    return out


def _mask_argument(value, name, kind):
    """A mask, bias or slope array as float64 numpy (torch tensors converted); None as is."""
    if value is None:
        return None
    if hasattr(value, "detach"):  # a torch tensor
        value = value.detach().cpu()
        value = value.numpy() if kind is bool else value.double().numpy()
    array = np.asarray(value)
    if kind is bool and array.dtype != np.bool_:
        raise TypeError(f"{name}: expected a boolean array (True: attend), got {array.dtype}")
    if kind is float and not np.issubdtype(array.dtype, np.floating):
        raise TypeError(f"{name}: expected a floating-point array, got {array.dtype}")
    return array.astype(np.float64)


def _window_argument(window):
    if window is None:
        return None
    if (not isinstance(window, (tuple, list)) or len(window) != 2
            or not all(isinstance(w, int) and not isinstance(w, bool) for w in window)):
        raise TypeError(f"window: expected (left, right), two integers (-1: unbounded), "
                        f"got {window!r}")
    return (int(window[0]), int(window[1]))


@_checks.named_keywords
def device_function(strategy: str, function: str, x: ArrayLike,
                    y: Optional[ArrayLike] = None) -> tuple[np.ndarray, np.ndarray]:
    """What device_math strategy `strategy` ("glibc", "numpy", "sm90-fast-math", ...) computes
    for `function` ("exp2", "exp", "log", "fast_log", "log2", "rcp", or "div" with the divisor
    y) on the float32 values x: (values, modelled), float32 values and a bool array, False (and
    NaN) where the strategy has no value and the emulation rounds the correctly rounded result
    at the site instead."""
    def values(a, argument):
        try:
            return np.asarray(a, dtype=np.float32)
        except (TypeError, ValueError):
            raise TypeError(f"{argument}={a!r}: expected float32 values (an array or a number)"
                            ) from None
    return _core.device_function(_checks.text(strategy, "strategy", "numpy"),
                                 _checks.text(function, "function", "exp2"), values(x, "x"),
                                 None if y is None else values(y, "y"))


def numerics_help() -> str:
    """What a numerics spec can name, from the registries: the kernel models (presets) and every
    slot with its strategies. Empty where the C++ extension did not import."""
    if _missing_extension():
        return ""
    reference = numerics_reference()
    presets = ", ".join(p["name"] for p in reference["presets"])
    slots = "\n".join(f"      {s['key']}: " + ", ".join(x["name"] for x in s["strategies"])
                      for s in reference["slots"])
    return (f"\n    Presets (kernel models, lib/attention/models/): {presets}.\n"
            f"    Slots and their strategies (simprec.numerics_reference() says what each "
            f"computes):\n{slots}\n")


attention.__doc__ = (attention.__doc__ or "") + numerics_help()


@_checks.named_keywords
def attention_config(numerics: Numerics = "fa2", format: str = "bf16", *,
                     set: Sequence[str] = (), mitigations: Sequence[str] = (),
                     tile: Optional[Tile] = None, causal: bool = False,
                     scale: Optional[float] = None, seed: int = 0) -> dict[str, Any]:
    """The configuration (every site's format, rounding and accumulation) as a dict."""
    return json.loads(_core.attention_config_json(
        _checks.numerics_spec(numerics), _checks.text(format, "format", "bf16"),
        _checks.string_list(set, "set", "s=fp32:rne"),
        _checks.string_list(mitigations, "mitigations", "beta-rowmax:2"),
        _checks.tile_argument(tile), _checks.flag(causal, "causal"),
        _checks.number(scale, "scale", "a positive number"), seed))


@_checks.named_keywords
def generate(kind: str, shape: Sequence[int], *, seed: int = 0, backward: bool = False,
             peak: float = 4.0, prototypes: int = 32,
             concentration: float = 3.0) -> dict[str, np.ndarray]:
    """Inputs from a generator (normal, peaky, repeated-max, low-rank, sinks) as the CLI's
    --generate makes them: a dict of float64 arrays q, k, v (and do with backward=True) of
    shape (B, H, N, d)."""
    if not isinstance(kind, str):
        raise TypeError(f"kind={kind!r}: expected a generator's name, one of "
                        f"{', '.join(generator_kinds())}")
    return _core.generate(kind, _checks.shape_argument(shape, "shape", "(B, H, N, d)"),
                          seed=seed, backward=_checks.flag(backward, "backward"), peak=peak,
                          prototypes=prototypes, concentration=concentration)


@_checks.named_keywords
def run_experiment(file: str | os.PathLike[str], *, out: str | os.PathLike[str] | None = None,
                   force: bool = False, quiet: bool = True, threads: int = 0,
                   max_cases: int = 0, check: bool = False,
                   max_memory: Optional[MemorySize] = None) -> dict[str, Any]:
    """Runs an experiment file as `simprec run` does (resumable; the same results, report and
    verdict). Returns a dict: cases, out, total, skipped, ran, failed, report, summary, plots,
    verdict. check=True only validates the file (and the memory bound) and counts its cases.
    A case whose estimated memory exceeds max_memory ("4G", bytes; None: the machine's physical
    memory) raises MemoryError before any runs, as `simprec run --max-memory` refuses it."""
    import os
    for value, argument in ((file, "file"), (out, "out")):
        if not isinstance(value, (str, os.PathLike)) and (argument == "file" or value is not None):
            raise TypeError(f"{argument}={value!r}: expected a path (a str or pathlib.Path), got "
                            f"{type(value).__name__}")
    return _core.run_experiment(str(file), out=None if out is None else str(out), force=force,
                                quiet=quiet, threads=threads, max_cases=max_cases, check=check,
                                max_memory=max_memory)
