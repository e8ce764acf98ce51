"""A whole GEMM as a library kernel computes it around the tensor-core instructions: K split
between thread blocks and their partial sums reduced in fp32 (split-K), the accumulator promoted
to an fp32 register every so many elements of K (FP8 without fast accumulation), the scales
applied in the epilogue and the result cast to the output format. The instructions themselves are
simprec.matmul's tensor-core models (docs/tensor_cores.md); what this module adds is fp32
arithmetic between them, which numpy's float32 operations round to nearest even as the GPU's
FADD and FMUL do.

The parameters that reproduce cuBLAS on an H200 (docs/tensor_cores.md, "GEMMs as cuBLAS and
_scaled_mm run them") were found from recordings (tests/data/gemm).
"""

import numpy as np

from simprec._arrays import to_numpy

SCALE_ORDERS = ("alpha", "b-then-a")
OUT_FORMATS = ("fp32", "bf16", "fp16")


def _positive(value, name):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"{name}: {value!r}; expected a positive number of elements of K or None")
    return int(value)


def _scale(scale, name, length, axis):
    """A scale as float32, broadcastable against the (M, N) result: a scalar, or `length` values
    (one per row for scale_a, per column for scale_b)."""
    if scale is None:
        return np.float32(1.0)
    if isinstance(scale, np.generic):  # a numpy scalar, as np.float32(0.7)
        scale = np.asarray(scale)
    s = np.asarray(to_numpy(scale, name)[0], dtype=np.float32)
    if s.size == 1:
        return s.reshape(())
    if s.size != length:
        raise ValueError(f"{name}: {s.size} values; expected 1 (tensor-wise) or {length} "
                         f"(one per {'row' if axis == 0 else 'column'})")
    return s.reshape((-1, 1) if axis == 0 else (1, -1))


def _promoted(a, b, model, promote_every):
    """A (M x k) B (k x N) on the tensor-core model from +0, the instruction chain's result
    added to an fp32 accumulator (starting at +0) every promote_every elements of K."""
    from simprec import matmul
    k = a.shape[1]
    if promote_every is None or promote_every >= k:
        return matmul(a, b, model=model)
    acc = np.zeros((a.shape[0], b.shape[1]), dtype=np.float32)
    for k0 in range(0, k, promote_every):
        acc += matmul(np.ascontiguousarray(a[:, k0:k0 + promote_every]),
                      np.ascontiguousarray(b[k0:k0 + promote_every]), model=model)
    return acc


def gemm(a, b, *, model, out_format="fp32", split_k=None, promote_every=None, scale_a=None,
         scale_b=None, scale_order="alpha"):
    """D = cast(scales * (A · B)) as a GEMM kernel computes it, float32 values of out_format.

    a (M x K) and b (K x N): encodings of the model's input format (uint16, uint8) or float32
    values it holds exactly, as simprec.matmul takes them; model a tensor-core model with an fp32
    accumulator ("tc:sm90-wgmma-e4m3"). split_k: K is cut into consecutive pieces of this many
    elements (the last shorter), each computed on its own and the partial sums added in fp32 in
    K order, from +0. promote_every: within a piece, the tensor-core chain restarts from +0 every
    this many elements and its result is added to an fp32 accumulator (None: one chain over the
    piece, the accumulator never leaves the tensor core). scale_a (a scalar or one per row) and
    scale_b (a scalar or one per column), fp32: scale_order "alpha" multiplies the sum by
    fl(scale_a * scale_b) (cuBLAS's alpha), "b-then-a" by scale_b and then by scale_a, each
    product rounded to fp32. The result is rounded to nearest even into out_format.
    """
    from simprec import round as round_to
    if out_format not in OUT_FORMATS:
        raise ValueError(f"out_format: {out_format!r}; expected one of {', '.join(OUT_FORMATS)}")
    if scale_order not in SCALE_ORDERS:
        raise ValueError(f"scale_order: {scale_order!r}; expected one of "
                         f"{', '.join(SCALE_ORDERS)}")
    split_k = _positive(split_k, "split_k")
    promote_every = _positive(promote_every, "promote_every")
    a, b = to_numpy(a, "a")[0], to_numpy(b, "b")[0]
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"a {a.shape} and b {b.shape}: expected M x K and K x N")
    m, k = a.shape
    n = b.shape[1]
    sa, sb = _scale(scale_a, "scale_a", m, 0), _scale(scale_b, "scale_b", n, 1)
    if split_k is None or split_k >= k:
        acc = _promoted(a, b, model, promote_every)
    else:
        acc = np.zeros((m, n), dtype=np.float32)
        for k0 in range(0, k, split_k):
            acc += _promoted(np.ascontiguousarray(a[:, k0:k0 + split_k]),
                             np.ascontiguousarray(b[k0:k0 + split_k]), model, promote_every)
    if scale_a is None and scale_b is None:
        pass
    elif scale_order == "alpha":
        acc = acc * np.float32(sa * sb)
    else:
        acc = (acc * sb).astype(np.float32) * sa
    acc = np.asarray(acc, dtype=np.float32)
    return acc if out_format == "fp32" else round_to(acc, out_format)
