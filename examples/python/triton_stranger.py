"""A stranger's Triton attention forward for simprec discover (docs/discover.md): written as a
Triton user would, without simprec's numerics in mind, recorded on a GPU by
scripts/record_stranger_triton.py and discovered from the recording on the CPU.

fp16 inputs; query blocks of 64 rows, key blocks of 32; the scaled score t = tl.dot(q, k) * scale
minus the running max of t through tl.exp (base2=False) or, with base2=True, the score times
scale * log2(e) through tl.exp2; alpha from the difference of the maxima the same way; the row
sum l * alpha + tl.sum(p); P cast to fp16 for tl.dot with V; O = acc / l (Triton's fp32
division) cast to fp16; LSE = m + tl.log(l) (base2: (m + tl.log2(l)) * ln 2); an optional causal
mask (top-left aligned).
"""

import math

import torch
import triton
import triton.language as tl


@triton.jit
def _stranger_forward(Q, K, V, O, LSE, scale, n_keys, stride_h, stride_n, IS_CAUSAL: tl.constexpr,
                      BASE2: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      HEAD_DIM: tl.constexpr):
    block = tl.program_id(0)
    head = tl.program_id(1)
    rows = block * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    dims = tl.arange(0, HEAD_DIM)
    base = head * stride_h
    q = tl.load(Q + base + rows[:, None] * stride_n + dims[None, :])
    m = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    end = (block + 1) * BLOCK_M if IS_CAUSAL else n_keys
    for start in range(0, end, BLOCK_N):
        keys = start + cols
        k = tl.load(K + base + keys[None, :] * stride_n + dims[:, None])
        t = tl.dot(q, k) * scale
        if IS_CAUSAL:
            t = tl.where(rows[:, None] >= keys[None, :], t, float("-inf"))
        m_new = tl.maximum(m, tl.max(t, 1))
        if BASE2:
            p = tl.exp2(t - m_new[:, None])
            alpha = tl.exp2(m - m_new)
        else:
            p = tl.exp(t - m_new[:, None])
            alpha = tl.exp(m - m_new)
        l = l * alpha + tl.sum(p, 1)
        v = tl.load(V + base + keys[:, None] * stride_n + dims[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m = m_new
    o = acc / l[:, None]
    tl.store(O + base + rows[:, None] * stride_n + dims[None, :], o.to(O.dtype.element_ty))
    if BASE2:
        lse = (m + tl.log2(l)) * 0.6931471805599453
    else:
        lse = m + tl.log(l)
    tl.store(LSE + head * (stride_h // HEAD_DIM) + rows, lse)


def stranger_forward(q, k, v, is_causal=False, base2=False, block_m=64, block_n=32):
    """q, k, v: (B, H, N, d) fp16 CUDA tensors, N a multiple of 64, d a power of 2 in 16..128 (tl.arange). Returns
    (O, LSE, compiled kernel), LSE float32 in natural-log units."""
    b, h, n, d = q.shape
    if n % block_m or k.shape[2] != n:
        raise ValueError(f"q, k: N = {n} must equal K's and be a multiple of {block_m}")
    q, k, v = (t.contiguous() for t in (q, k, v))
    o = torch.empty_like(q)
    lse = torch.empty((b, h, n), device=q.device, dtype=torch.float32)
    scale = 1.0 / math.sqrt(d) * (math.log2(math.e) if base2 else 1.0)
    scale = torch.tensor(scale, dtype=torch.float32).item()  # the float32 the kernel multiplies by
    compiled = _stranger_forward[(n // block_m, b * h)](q, k, v, o, lse, scale, n, n * d, d,
                                                        IS_CAUSAL=is_causal, BASE2=base2,
                                                        BLOCK_M=block_m, BLOCK_N=block_n,
                                                        HEAD_DIM=d)
    return o, lse, compiled
