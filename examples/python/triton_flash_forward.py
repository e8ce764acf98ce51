"""A small FlashAttention-2 forward in Triton: the stand-in for "your own Triton kernel" that
scripts/gpu_python_check.sh validates with simprec.validate.

Its numerics, step by step, as the PTX Triton 3.6 generates for the H100 shows them (what a
numerics description of it has to say; the spec item that says each in brackets):
- S = Q K^T per 64x64 tile by tl.dot: bf16 (or fp16) wgmma.m64n64k16, fp32 accumulators, four
  k16 steps chained from zero (s=fp32:rne:tc:sm90-wgmma-bf16, tile=64x64);
- the row max m (exact in any order); c = scale * log2(e) rounded to fp32 once by the caller;
  shift = round(m * c);
- P = ex2.approx.ftz(fma(c, S, -shift)): Triton contracts S*c - shift into one fma (fa2's
  exp_impl exp2-fma) and tl.exp2 is the GPU's ex2.approx, not correctly rounded
  (device_math=sm90: ex2.approx.ftz on every fp32 argument, measured exhaustively);
- alpha = ex2.approx(fma(-c, m_new, shift_old)): the contraction reaches the new shift's
  product, so the argument is shift_old - m_new * c with the product exact, rounded once; when
  the max stays it is the rounding error of m * c, not zero, so alpha can differ from 1 after any
  key block but the first (rescale=exp2-shift-fma);
- l = fma(l, alpha, rowsum(P)): tl.sum over the wgmma accumulator layout (each thread adds its
  16 columns of the row in order, columns 8i + 2t and 8i + 2t + 1 of lane t, then the quad's 4
  lanes combine by shuffles, offset 2 then 1) and l * alpha + sum contracted
  (rowsum_block=quad-fma);
- O accumulates P V with P cast to the input dtype (round to nearest even) by wgmma into
  acc * alpha, which is rounded first (fa2's pv_acc, fused; pv_acc=fp32:rne:tc:sm90-wgmma-bf16);
- O = acc / l as div.full.f32, i.e. round(acc * rcp.approx(l)), then cast once to the input
  dtype (norm=div-full);
- LSE = (m * c + log2(l)) / 1.4426950408889634: fma(c, m, log2f(l)) with libdevice's log2f
  (tl.log2; no lg2.approx), then div.full.f32 by 1.442695f (lse_impl=fma-log2-div-full with
  device_math=sm90).
The numerics spec that says all of this is TRITON_FLASH_FORWARD_SPEC in
simprec.recordings.triton_example. It reproduces every bit of O and of the LSE that this kernel
gave on an H100 in the six recorded cases of tests/data/triton_example
(python/tests/test_triton_example.py; docs/python.md).
"""

import math

import torch
import triton
import triton.language as tl


@triton.jit
def _flash_forward(Q, K, V, O, LSE, c, n_keys, stride_h, stride_n, IS_CAUSAL: tl.constexpr,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr):
    block = tl.program_id(0)
    head = tl.program_id(1)
    rows = block * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    dims = tl.arange(0, HEAD_DIM)
    base = head * stride_h
    q = tl.load(Q + base + rows[:, None] * stride_n + dims[None, :])
    m = tl.full([BLOCK_M], float("-inf"), tl.float32)
    shift_old = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    end = (block + 1) * BLOCK_M if IS_CAUSAL else n_keys
    for start in range(0, end, BLOCK_N):
        keys = start + cols
        k = tl.load(K + base + keys[None, :] * stride_n + dims[:, None])
        s = tl.dot(q, k)
        if IS_CAUSAL:
            s = tl.where(rows[:, None] >= keys[None, :], s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, 1))
        shift = m_new * c
        p = tl.exp2(s * c - shift[:, None])
        alpha = tl.exp2(shift_old - shift)
        l = l * alpha + tl.sum(p, 1)
        v = tl.load(V + base + keys[:, None] * stride_n + dims[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m = m_new
        shift_old = shift
    o = acc / l[:, None]
    tl.store(O + base + rows[:, None] * stride_n + dims[None, :], o.to(O.dtype.element_ty))
    tl.store(LSE + head * (stride_h // HEAD_DIM) + rows, (m * c + tl.log2(l)) / 1.4426950408889634)


@triton.jit
def _exp2(X, Y, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + i, tl.exp2(tl.load(X + i, mask=i < n)), mask=i < n)


def device_exp2(x):
    """The GPU's tl.exp2 on float32 numpy arguments: what simprec.validate(exp2=...) takes to
    emulate the kernel's exp2 bit for bit."""
    xs = torch.from_numpy(x).cuda()
    ys = torch.empty_like(xs)
    _exp2[(triton.cdiv(xs.numel(), 1024),)](xs, ys, xs.numel(), BLOCK=1024)
    return ys.cpu().numpy()


def flash_forward(q, k, v, is_causal=False, scale=None, block=64):
    """q, k, v: (B, H, N, d) bf16/fp16 CUDA tensors, N a multiple of `block`, d in 16..128.
    Returns (O, LSE) with LSE in natural-log units, float32."""
    b, h, n, d = q.shape
    if n % block or k.shape[2] != n:
        raise ValueError(f"q, k: N = {n} must equal K's and be a multiple of {block}")
    q, k, v = (t.contiguous() for t in (q, k, v))
    o = torch.empty_like(q)
    lse = torch.empty((b, h, n), device=q.device, dtype=torch.float32)
    scale = 1.0 / math.sqrt(d) if scale is None else scale
    c = torch.tensor(scale * math.log2(math.e), dtype=torch.float32).item()
    _flash_forward[(n // block, b * h)](q, k, v, o, lse, c, n, n * d, d, IS_CAUSAL=is_causal,
                                        BLOCK_M=block, BLOCK_N=block, HEAD_DIM=d)
    return o, lse
