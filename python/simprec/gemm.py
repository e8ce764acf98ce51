"""A whole GEMM as a library kernel computes it around the tensor-core instructions: K split
between thread blocks and their partial sums reduced in fp32 (split-K), the accumulator promoted
to an fp32 register every so many elements of K (FP8 without fast accumulation), the scales and
the bias applied in the epilogue and the result cast to the output format. The C++ engine
(lib/gemm, the one `simprec gemm` runs) computes it from a GEMM numerics spec,
PRESET[,KEY=VALUE...] (docs/gemm.md): gemm(a, b, numerics="scaled-mm-e4m3", scale_a=..., ...).

The keyword form of earlier versions, gemm(a, b, model=..., out_format=..., split_k=...,
promote_every=..., scale_order=...), is turned into the same spec (to_numerics) and runs the same
engine.

The presets that reproduce cuBLAS and torch._scaled_mm on an H200 were found from recordings
(tests/data/gemm; docs/gemm.md, "Measured").
"""

from __future__ import annotations

import numpy as np

from simprec._arrays import to_numpy
from simprec._extension import core as _core

SCALE_ORDERS = ("alpha", "b-then-a")
OUT_FORMATS = ("fp32", "bf16", "fp16")

__all__ = ["gemm", "to_numerics", "canonical", "numerics_reference", "split_k_length",
           "SCALE_ORDERS", "OUT_FORMATS"]


def _positive(value, name):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"{name}: {value!r}; expected a positive number of elements of K or None")
    return int(value)


def _floats(x, name):
    """x as a C-contiguous float32 numpy array (None stays None)."""
    if x is None:
        return None
    if isinstance(x, np.generic):  # a numpy scalar, as np.float32(0.7)
        x = np.asarray(x)
    return np.ascontiguousarray(np.asarray(to_numpy(x, name)[0], dtype=np.float32))


def to_numerics(*, model, out_format="fp32", split_k=None, promote_every=None,
                scale_order="alpha", scaled=False, row_wise=False):
    """The GEMM numerics spec of the keyword form: the `chain` preset with the instruction
    model, the output format, split_k as a piece length, promote_every, and (scaled) the scales'
    order, tensor-wise or (row_wise) row-wise."""
    if not isinstance(model, str):
        raise TypeError(f"model: {model!r}; expected a tensor-core model name such as "
                        "'tc:sm90-wgmma-e4m3'")
    if out_format not in OUT_FORMATS:
        raise ValueError(f"out_format: {out_format!r}; expected one of {', '.join(OUT_FORMATS)}")
    if scale_order not in SCALE_ORDERS:
        raise ValueError(f"scale_order: {scale_order!r}; expected one of "
                         f"{', '.join(SCALE_ORDERS)}")
    split_k = _positive(split_k, "split_k")
    promote_every = _positive(promote_every, "promote_every")
    spec = f"chain,instruction={model},out={out_format}"
    if split_k:
        spec += f",split_k=length:{split_k}"
    if promote_every:
        spec += f",promote={promote_every}"
    if scaled:
        spec += f",scaling={'row' if row_wise else 'tensor'},scale_order={scale_order}"
    return spec


def gemm(a, b, *, numerics=None, scale_a=None, scale_b=None, bias=None, block_scale_a=None,
         block_scale_b=None, model=None, out_format=None, split_k=None, promote_every=None,
         scale_order=None, threads=0):
    """D = cast(scales * (A · B) + bias) as a GEMM kernel computes it, float32 values of the
    output format.

    a (M x K) and b (K x N): encodings of the instruction's A and B formats (uint8, uint16) or
    float32 values they hold exactly (torch tensors too). numerics: a GEMM numerics spec or
    preset ("scaled-mm-e4m3", "cublas-bf16,out=fp32"; simprec.gemm.numerics_reference() lists
    them). scale_a (1 value, or M with scaling=row) and scale_b (1, or N), fp32; bias (N values),
    fp32, added after the scales and before the output cast. block_scale_a (M x ceil(K / block))
    and block_scale_b (ceil(K / block) x N) with block_scales=mxfp8 or nvfp4: uint8 encodings
    (E8M0, e4m3) as simprec.quantize gives them, or float32 values.

    Or, instead of numerics, the keyword form: model (a tensor-core model with an fp32
    accumulator), out_format (fp32, bf16, fp16), split_k (elements of K per piece), promote_every
    (elements of K between promotions), scale_order ("alpha": fl(scale_a * scale_b); "b-then-a");
    scales of more than one value make it row-wise. Both forms run the same engine.
    """
    keywords = dict(model=model, out_format=out_format, split_k=split_k,
                    promote_every=promote_every, scale_order=scale_order)
    sa, sb, bias = _floats(scale_a, "scale_a"), _floats(scale_b, "scale_b"), _floats(bias, "bias")
    if numerics is None:
        if model is None:
            raise TypeError("gemm() needs numerics= (a GEMM numerics spec or preset, such as "
                            "'scaled-mm-e4m3') or model= (the keyword form)")
        scaled = sa is not None or sb is not None
        row_wise = any(s is not None and s.size > 1 for s in (sa, sb))
        numerics = to_numerics(**{k: v for k, v in keywords.items() if v is not None},
                               scaled=scaled, row_wise=row_wise)
    else:
        given = [k for k, v in keywords.items() if v is not None]
        if given:
            raise TypeError(f"gemm(): numerics= and {', '.join(given)}= both given; the spec says "
                            "it all (docs/gemm.md)")
        if not isinstance(numerics, str):
            raise TypeError(f"numerics: {numerics!r}; expected a GEMM numerics spec (str)")
    a_np, b_np = to_numpy(a, "a")[0], to_numpy(b, "b")[0]
    if a_np.ndim != 2 or b_np.ndim != 2 or a_np.shape[1] != b_np.shape[0]:
        raise ValueError(f"a {a_np.shape} and b {b_np.shape}: expected M x K and K x N")
    blocks = [None if x is None else np.ascontiguousarray(to_numpy(x, name)[0])
              for x, name in ((block_scale_a, "block_scale_a"), (block_scale_b, "block_scale_b"))]
    return _core.gemm(np.ascontiguousarray(a_np), np.ascontiguousarray(b_np), numerics=numerics,
                      scale_a=sa, scale_b=sb, bias=bias, block_scale_a=blocks[0],
                      block_scale_b=blocks[1], threads=threads)


def canonical(spec):
    """A GEMM numerics spec's canonical form: the preset, then each key that differs from it."""
    return _core.canonical_gemm_numerics(spec)


def split_k_length(numerics, m, n, k):
    """The elements of K per split-K piece the spec gives an M x N x K GEMM (K or more: K is not
    split), as the engine cuts it."""
    return _core.gemm_split_k_length(numerics, m, n, k)


def numerics_reference():
    """The GEMM presets (name, doc, numerics), keys (key, doc, values, default) and split-K
    strategies (name, syntax, doc), as `simprec gemm --list` prints them."""
    return _core.gemm_numerics_reference()
