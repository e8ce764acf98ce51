"""simprec.discover: find the numerics spec that reproduces a kernel bit for bit, from a Python
kernel it calls on probes of its own, from recorded inputs and outputs, or both; the search and
the report of `simprec discover` (docs/discover.md)."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

import numpy as np

from simprec._arrays import is_torch_tensor, tensor_to_numpy, torch_device, torch_from_bits
from simprec._extension import core as _core

_OUTPUT_ORDER = ("O", "LSE")
_STORAGE = {"float32": "fp32", "float64": "fp64", "float16": "fp16"}


class DiscoveryResult:
    """spec: the spec found (canonical; `simprec validate --model SPEC` and simprec.attention
    take it); bit_exact: whether it reproduces every value of every case; stopped: the time limit
    ended the search; lines and text: the report; remaining: the rows that still differ, each a
    dict (case, output, b, h, row, values_differing, max_ulps, agrees_with: the single moves that
    would make the row agree); ties: moves that agree wherever the spec does; cases: per case
    its label and agreement {output: (equal, values)}; seconds, runs (emulations)."""

    def __init__(self, raw: dict[str, Any]) -> None:
        self.spec: str = raw["spec"]
        self.bit_exact: bool = raw["bit_exact"]
        self.stopped: bool = raw["stopped"]
        self.lines: list[str] = raw["lines"]
        self.text: str = "".join(line + "\n" for line in self.lines)
        self.remaining: list[dict[str, Any]] = raw["remaining"]
        self.ties: list[Any] = raw["ties"]
        self.cases: list[dict[str, Any]] = raw["cases"]
        self.seconds: float = raw["seconds"]
        self.runs: int = raw["runs"]

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"DiscoveryResult(spec={self.spec!r}, bit_exact={self.bit_exact})"


def _storage(array, name, output_format):
    """An output as (array in its storage, format): torch bf16/fp16 tensors as encodings, numpy
    float16 as fp16 encodings, float32/float64 as values, uint16/uint8 as encodings of
    output_format."""
    if is_torch_tensor(array):
        array, bits = tensor_to_numpy(array.detach().cpu(), f"kernel output {name}",
                                      allow_copy=True)
        if bits is not None:
            return np.ascontiguousarray(array), bits
    array = np.ascontiguousarray(array)
    if array.dtype == np.float16:
        return array.view(np.uint16), "fp16"
    if array.dtype.name in _STORAGE:
        return array, _STORAGE[array.dtype.name]
    if array.dtype in (np.uint16, np.uint8):
        if output_format is None:
            raise TypeError(f"kernel output {name}: {array.dtype} encodings need output_format=")
        return array, output_format
    raise TypeError(f"kernel output {name}: dtype {array.dtype} (expected float16, float32, "
                    "float64, torch bf16/fp16, or encodings with output_format=)")


def _kernel_runner(fn, input_format, tensors, device, output_format, causal_keyword):
    """run(q, k, v, causal) as the search calls it: the probe's encodings (or values) converted to
    what fn takes, fn's outputs back to {name: (array, format)}."""

    def convert(x):
        if x.dtype.kind == "f":
            values = x
        else:
            values = _core.decode(x, input_format)
        if tensors == "torch":
            if x.dtype.kind == "f":
                import torch
                return torch.from_numpy(np.ascontiguousarray(values)).to(device)
            return torch_from_bits(x, input_format).to(device)
        if input_format == "fp16":
            return values.astype(np.float16)
        return values.astype(np.float32) if input_format != "fp64" else values

    def run(q, k, v, causal):
        kwargs = {causal_keyword: True} if causal else {}
        result = fn(convert(q), convert(k), convert(v), **kwargs)
        if isinstance(result, dict):
            named = dict(result)
        elif isinstance(result, (tuple, list)):
            named = dict(zip(_OUTPUT_ORDER, result))
        else:
            named = {"O": result}
        return {name: _storage(value, name, output_format) for name, value in named.items()}

    return run


def discover(kernel: Union[Callable[..., Any], Iterable[Mapping[str, Any]], None] = None, *,
             cases: Iterable[Mapping[str, Any]] = (), input_format: Optional[str] = None,
             causal: bool = False, causal_keyword: str = "is_causal",
             families: Sequence[str] = (), time_limit: Optional[float] = None, threads: int = 0,
             max_probes: int = 32, tensors: str = "numpy", device: str = "cpu",
             output_format: Optional[str] = None, name: Optional[str] = None,
             verbose: bool = True) -> DiscoveryResult:
    """Finds a numerics spec that reproduces `kernel` bit for bit, as `simprec discover` does.

    kernel: a callable fn(q, k, v) returning O, (O, LSE) or a dict with keys among O, LSE,
    called on probes the search designs ([B, H, S, D] arrays of input_format's values: numpy
    float32, float16 for fp16, with tensors="torch" torch tensors of that dtype on `device`);
    with causal=True the search also calls fn(q, k, v, is_causal=True) (causal_keyword names
    the argument). Or a list of recorded cases instead (or as well: cases=): dicts with q, k, v
    (numpy: values of input_format, or its uint16/uint8 encodings), optional do, outputs {O,
    LSE, dQ, dK, dV} (float32/float64 values, or encodings of output_format), optional rows and
    key_rows (the query and key rows the outputs hold, when not every row), input_format,
    optional output_format, causal, scale, given (KEY=VALUE facts of the call the search never
    moves: batch_heads=, sms=, compiled_for=), label.

    families: presets or numerics files the search may start from (default fa2, fp32,
    torch-math); time_limit: seconds, after which the best spec so far is reported; threads:
    candidates tried at once (0: every core); max_probes: kernel calls beyond the first probes.
    Returns a DiscoveryResult (the report printed line by line when verbose).
    """
    if callable(kernel):
        fn = kernel
    else:
        fn = None
        if kernel is not None:
            cases = list(kernel) + list(cases)
    if fn is None and not cases:
        raise ValueError("discover: give a kernel to call or recorded cases")
    if tensors not in ("numpy", "torch"):
        raise ValueError(f"tensors: 'numpy' or 'torch', not {tensors!r}")
    runner = None
    if fn is not None:
        if input_format is None:
            raise ValueError("discover: a kernel to call needs input_format (bf16, fp16, ...)")
        if tensors == "torch":
            device = torch_device(device)
        runner = _kernel_runner(fn, input_format, tensors, device, output_format,
                                causal_keyword)
    log = print if verbose else None
    raw = _core.discover([dict(c) for c in cases], runner,
                         kernel_name=name or getattr(fn, "__name__", "kernel"),
                         input_format=input_format, causal=causal, families=list(families),
                         time_limit=time_limit, threads=threads, max_probes=max_probes, log=log)
    return DiscoveryResult(raw)


def agreement(spec: str, cases: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """`spec` run on recorded `cases` (dicts as discover takes them) without any search: per case
    a dict with label, agreement {output: (equal values, values)} and rows {output: [(b, h, row,
    values differing, max ulps), ...]}, the rows where the spec and the recording differ. What
    a spec found on some recordings gives on the others."""
    return _core.discover_agreement([dict(c) for c in cases], spec)
