"""simprec.validate: a Python attention kernel (a Triton kernel, FlexAttention, SDPA, any
callable taking and returning torch or numpy tensors) against the emulation of a numerics
description, with the report of `simprec validate`."""

from __future__ import annotations

import inspect
from typing import Any, Callable, Optional, Sequence

import numpy as np

from simprec import _checks
from simprec._arrays import dtype_format, is_torch_tensor, tensor_to_numpy, torch_device
from simprec._arrays import torch_from_bits
from simprec._extension import core as _core
from simprec._types import DeviceFunctions, Numerics, Tile

_OUTPUT_ORDER = ("O", "LSE")


class ValidationReport:
    """text: the report as `simprec validate` prints it; passed: False when bit-exact agreement
    was required and not met; bit_exact; outputs: one dict per compared output (bitwise_equal,
    ulp_histogram as (low, high, count), mean_signed_ulps, kernel_mean_signed_error,
    emulation_mean_signed_error, ...); emulated: the emulation's outputs (float64 values);
    locate: with validate(..., locate=True), where the kernel and the emulation differ and why
    (the `locate` lines of the text, docs/plugins.md), else None. A dict of

    - "differences": per differing output, its first differing element: output, b, h, row,
      column (None for the LSE), index (flat), kernel, emulation (values), kernel_bits,
      emulation_bits, ulp (kernel - emulation; None with a NaN), differing (the output's
      differing elements), row_differing (of them, in this row);
    - "row": the located row (the same keys, and rows: "query" or "key"), or None;
    - "probe": the emulation's forward pass of that row, or None (a gradient's row): "blocks",
      per key block in the order it was visited, dicts of tile, split, first_key, keys, m_old,
      m_block, m, shift (the exponent's row shift), rescaled, alpha, alpha_steps, l (the row
      sum's partial sums after the block), acc (the row's O accumulator after the block's P.V)
      and key_values (per key: key, s, steps, p, p_cast); then the row's l, o_norm (O before its
      cast), o, lse and lse_steps. Steps are (site, value rounded, result) for each rounding;
    - "model": how the model's outputs agree on the row's (b, h): row_agrees, rows_agreeing,
      rows and outputs ({name: (rows agreeing, rows)});
    - "alternatives": the same for each configuration tried instead (another strategy of a slot,
      another tile, another rounding at a site), with kind ("slot", "parameter" or "site"),
      option (its name), value (the strategy, the parameter's text, or the site's
      FORMAT:ROUNDING[:ACCUMULATION]) and changes (whether any output
      of the row's (b, h) differs from the model's);
    - "refused": how many alternatives the configuration's requirements refused;
    - "stopped", "untried": None and 0 unless a time limit stopped the search (the reason, and
      how many alternatives were left)."""

    def __init__(self, raw: dict[str, Any]) -> None:
        self.text: str = raw["text"]
        self.passed: bool = raw["passed"]
        self.bit_exact: bool = raw["bit_exact"]
        self.outputs: list[dict[str, Any]] = raw["outputs"]
        self.emulated: dict[str, np.ndarray] = raw["emulated"]
        self.locate: Optional[dict[str, Any]] = raw["locate"]

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"ValidationReport(passed={self.passed}, bit_exact={self.bit_exact})"


def _input_format(numerics, format, set, mitigations):
    import json
    config = json.loads(_core.attention_config_json(numerics, format, list(set),
                                                    list(mitigations)))
    return config["sites"]["input"]["format"]


def _as_kernel_inputs(arrays, fmt, device, want_torch):
    """Emulation inputs (numpy: encodings of fmt, or float32/64 values) and the same values for
    the kernel: torch tensors of fmt's dtype on `device`, or the numpy arrays."""
    if not want_torch:
        return [_core.decode(a, fmt) if a.dtype.kind == "u" else a for a in arrays]
    return [torch_from_bits(a, fmt).to(device) for a in arrays]


def _kernel_output_arrays(result, backward_grads):
    """The kernel's outputs by name, each as a numpy array in its storage."""
    if isinstance(result, dict):
        named = dict(result)
    elif isinstance(result, (tuple, list)):
        named = dict(zip(_OUTPUT_ORDER, result))
    else:
        named = {"O": result}
    named.update(backward_grads)
    arrays = {}
    for name, value in named.items():
        if is_torch_tensor(value):
            array, _ = tensor_to_numpy(value.detach().cpu(), f"kernel output {name}",
                                       allow_copy=True)
        else:
            array = np.ascontiguousarray(value)
        arrays[name] = array
    return arrays


def _check_kernel_keywords(fn, kernel_kwargs):
    """The keywords validate passes on to fn must be fn's: a misspelt option of validate would
    otherwise reach the kernel and fail there, or be ignored by a kernel taking **kwargs."""
    if not kernel_kwargs:
        return
    try:
        parameters = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # builtins and extension functions may have none
        return
    if any(p.kind == p.VAR_KEYWORD for p in parameters.values()):
        return
    own = set(inspect.signature(validate).parameters) - {"fn", "kernel_kwargs"}
    name = getattr(fn, "__name__", type(fn).__name__)
    _checks.unknown_keywords(kernel_kwargs, own | set(parameters), "validate",
                             f", neither an option of validate nor a parameter of fn {name}")


def _format_of_inputs(inputs):
    """The format of the given inputs' dtype (torch tensors or numpy arrays), or None."""
    return dtype_format(inputs[0].dtype) if inputs and hasattr(inputs[0], "dtype") else None


def validate(fn: Callable[..., Any], *, numerics: Numerics = "fa2", format: Optional[str] = None,
             inputs: Optional[Sequence[Any]] = None, generate: Optional[str] = None,
             shape: Sequence[int] = (1, 2, 256, 64), seed: int = 0, backward: bool = False,
             device: Optional[str] = None, causal: bool = False, scale: Optional[float] = None,
             set: Sequence[str] = (), mitigations: Sequence[str] = (),
             tile: Optional[Tile] = None, require_bit_exact: bool = True,
             name: Optional[str] = None, threads: int = 0,
             exp2: Optional[Callable[[np.ndarray], np.ndarray]] = None,
             device_functions: Optional[DeviceFunctions] = None, verbose: bool = True,
             backward_from: str = "auto", locate: bool = False,
             **kernel_kwargs: Any) -> ValidationReport:
    """Calls fn(q, k, v, **kernel_kwargs) and compares its outputs with the emulation.

    Inputs: `inputs=(q, k, v)` or `(q, k, v, do)` (torch tensors or numpy arrays, used as
    given), or `generate=KIND` (normal, peaky, repeated-max, low-rank, sinks) of `shape`
    (B, H, N, d) and `seed`, rounded to the numerics' input format and passed to fn as torch
    tensors of that dtype on `device` (default cpu). fn returns O, or (O, LSE), or a dict with
    keys among O, LSE. With dO (backward=True for generated inputs) the gradients dQ, dK, dV
    come from torch.autograd through fn and are compared too: against the emulated backward fed
    the kernel's own O and LSE, as a backward kernel receives them, where fn returns both
    (backward_from="kernel"), or against the backward of the emulation's own forward pass
    (backward_from="emulation"); "auto" (the default) is "kernel" except for numerics that keep
    a base-2 LSE for the backward pass (lse_impl=log2: FlexAttention), whose returned natural
    LSE does not give that value back on every row. format is the low-precision format where
    the numerics spec names none: by default the format of the given inputs' dtype (bf16, fp16,
    float32, float64), or bf16 for generated inputs. causal and scale go to fn as
    is_causal= and scale= when set, and to the emulation. device_functions supplies the
    kernel's own functions to the emulation, as simprec.attention takes them: {"exp": np.exp,
    "exp2": ..., "log": ..., "log2": ..., "rcp": ..., "div": ...}, callables from float32 numpy
    arguments to the device's float32 results (as `simprec validate` does with a plugin's
    exp_function, ...); exp2=f is device_functions={"exp2": f}. locate=True adds where the
    outputs differ, the emulation's intermediate values of the first differing row and which
    other strategy of each slot (or key block, or rounding at a site) makes it agree, as
    `simprec validate --locate` does (ValidationReport.locate). Returns a ValidationReport
    (printed when verbose); its `passed` is False when require_bit_exact and any bit differs.
    """
    if exp2 is not None:
        if device_functions and "exp2" in device_functions:
            raise ValueError("validate: exp2 given twice (exp2= and device_functions['exp2'])")
        device_functions = {**(device_functions or {}), "exp2": exp2}
    if not callable(fn):
        raise TypeError(f"fn: expected a callable kernel taking (q, k, v), got "
                        f"{type(fn).__name__}")
    _check_kernel_keywords(fn, kernel_kwargs)
    if (inputs is None) == (generate is None):
        raise ValueError("validate: give inputs=(q, k, v[, do]) or generate=KIND, one of them")
    if inputs is not None and (isinstance(inputs, (str, bytes)) or
                               not isinstance(inputs, (tuple, list))):
        raise TypeError(f"inputs: expected a tuple (q, k, v) or (q, k, v, do) of tensors or "
                        f"arrays, got {type(inputs).__name__}")
    if format is None:
        format = (_format_of_inputs(inputs) if inputs is not None else None) or "bf16"
    set = _checks.string_list(set, "set", "s=fp32:rne")
    mitigations = _checks.string_list(mitigations, "mitigations", "beta-rowmax:2")
    tile = _checks.tile_argument(tile)
    numerics = _checks.numerics_spec(numerics)
    input_format = _input_format(numerics, _checks.text(format, "format", "bf16"), set,
                                 mitigations)
    if generate is not None:
        device = torch_device("cpu" if device is None else device)
        g = _core.generate(generate, _checks.shape_argument(shape, "shape", "(B, H, N, d)"),
                           seed=seed, backward=backward)
        names = ["q", "k", "v"] + (["do"] if backward else [])
        emulation_inputs = [_core.round(g[n], input_format, encode=True) for n in names]
        emulation_format = input_format
        want_torch = True
        kernel_inputs = _as_kernel_inputs(emulation_inputs, input_format, device, True)
        if input_format in ("fp32", "fp64"):
            emulation_inputs = [_core.decode(a, input_format) for a in emulation_inputs]
            emulation_format = None
    else:
        if len(inputs) not in (3, 4):
            raise ValueError(f"inputs: expected (q, k, v) or (q, k, v, do), got {len(inputs)} "
                             "tensors")
        kernel_inputs = list(inputs)
        want_torch = is_torch_tensor(inputs[0])
        emulation_inputs, set_of_formats = [], []
        for tensor, arg in zip(inputs, ("q", "k", "v", "do")):
            if is_torch_tensor(tensor):
                array, bits = tensor_to_numpy(tensor.detach().cpu(), arg, allow_copy=True)
            else:
                array, bits = np.ascontiguousarray(tensor), None
            emulation_inputs.append(array)
            set_of_formats.append(bits)
        if len({str(f) for f in set_of_formats}) > 1:
            raise TypeError(f"inputs: q, k, v, do in different formats {set_of_formats}")
        emulation_format = set_of_formats[0]
    with_grad = len(emulation_inputs) == 4

    call_kwargs = dict(kernel_kwargs)
    if causal:
        call_kwargs["is_causal"] = True
    if scale is not None:
        call_kwargs["scale"] = scale
    grads = {}
    if with_grad:
        if not want_torch:
            raise TypeError("validate: gradients need fn to take torch tensors")
        import torch
        q, k, v, do = kernel_inputs
        q, k, v = (t.detach().clone().requires_grad_(True) for t in (q, k, v))
        result = fn(q, k, v, **call_kwargs)
        o = result if is_torch_tensor(result) else (
            result["O"] if isinstance(result, dict) else result[0])
        dq, dk, dv = torch.autograd.grad(o, (q, k, v), do)
        grads = {"dQ": dq, "dK": dk, "dV": dv}
    else:
        result = fn(*kernel_inputs[:3], **call_kwargs)
    outputs = _kernel_output_arrays(result, grads)
    raw = _core.validate_attention(
        name or getattr(fn, "__name__", type(fn).__name__), outputs, *emulation_inputs[:3],
        emulation_inputs[3] if with_grad else None, numerics=numerics, format=format,
        set=list(set), mitigations=list(mitigations), tile=tile, causal=causal, scale=scale,
        seed=seed, threads=threads, input_format=emulation_format,
        require_bit_exact=require_bit_exact, device_functions=device_functions,
        backward_from=backward_from, locate=locate)
    report = ValidationReport(raw)
    if verbose:
        print(report.text, end="")
    return report
