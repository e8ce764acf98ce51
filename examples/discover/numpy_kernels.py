"""Strangers' attention kernels in numpy, written as a numpy user would, for simprec.discover
(docs/discover.md): each takes q, k, v [B, H, S, D] (float16 arrays for fp16 inputs, float32
ones holding bf16 values) and returns (O, LSE). Products are float64 matrix products of the
inputs rounded once to float32 (exact products, sums far inside float64's precision), exp and
log float64 ones rounded to float32 (correctly rounded for these arguments) except where a
kernel says otherwise.
"""

import numpy as np

F32 = np.float32


def _exp(x):
    return np.exp(x.astype(np.float64)).astype(F32)


def _log(x):
    return np.log(x.astype(np.float64)).astype(F32)


def _bf16(x):
    """float32 values rounded to bf16 (nearest even), kept as float32."""
    bits = np.ascontiguousarray(x, dtype=F32).view(np.uint32)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(F32)


def _scores(q, k):
    return (q.astype(np.float64) @ k.astype(np.float64).T).astype(F32)


def _causal_mask(t, rows, first_key):
    keys = first_key + np.arange(t.shape[1])
    t[keys[None, :] > rows[:, None]] = -np.inf


def flash_fp16(q, k, v, is_causal=False, block=96):
    """fp16 flash attention over key blocks of 96: each block's P V is a float64 product of the
    fp16 P (to nearest) and V rounded to float32 and added to the rescaled accumulator; the row
    sum adds the block's P one key at a time; O = acc / l cast to float16."""
    b_, h_, sq, d = q.shape
    sk = k.shape[2]
    scale = F32(1 / np.sqrt(d))
    o = np.empty((b_, h_, sq, d), np.float16)
    lse = np.empty((b_, h_, sq), F32)
    rows = np.arange(sq)
    for b in range(b_):
        for h in range(h_):
            m = np.full(sq, -np.inf, F32)
            l = np.zeros(sq, F32)
            acc = np.zeros((sq, d), F32)
            for j0 in range(0, sk, block):
                t = _scores(q[b, h], k[b, h, j0:j0 + block]) * scale
                if is_causal:
                    _causal_mask(t, rows, j0)
                m_new = np.maximum(m, t.max(axis=1))
                alpha = np.where(m > -np.inf, _exp(m - m_new), F32(0))
                p = _exp(t - m_new[:, None])
                l = l * alpha
                for j in range(p.shape[1]):
                    l = l + p[:, j]
                pv = (p.astype(np.float16).astype(np.float64) @
                      v[b, h, j0:j0 + block].astype(np.float64)).astype(F32)
                acc = acc * alpha[:, None] + pv
                m = m_new
            o[b, h] = (acc / l[:, None]).astype(np.float16)
            lse[b, h] = m + _log(l)
    return o, lse


def standard_numpy_exp(q, k, v, is_causal=False):
    """bf16 standard attention with numpy's own float32 exp (np.exp on float32 arrays, not
    correctly rounded): scores, softmax over whole rows (the row sum one key at a time), P / l,
    then P V, O cast to bf16."""
    b_, h_, sq, d = q.shape
    scale = F32(1 / np.sqrt(d))
    o = np.empty((b_, h_, sq, d), F32)
    lse = np.empty((b_, h_, sq), F32)
    for b in range(b_):
        for h in range(h_):
            t = _scores(q[b, h], k[b, h]) * scale
            if is_causal:
                _causal_mask(t, np.arange(sq), 0)
            m = t.max(axis=1)
            p = np.exp(t - m[:, None])
            l = np.zeros(sq, F32)
            for j in range(p.shape[1]):
                l = l + p[:, j]
            pn = p / l[:, None]
            o[b, h] = _bf16((pn.astype(np.float64) @ v[b, h].astype(np.float64)).astype(F32))
            lse[b, h] = m + _log(l)
    return _bf16_bits(o), lse


def prescaled_q(q, k, v, is_causal=False, block=32):
    """bf16 flash attention over key blocks of 32 with Q multiplied by the float32 scale before
    the scores (Q * scale rounded to float32), P in bf16, O = acc * (1/l) cast to bf16."""
    b_, h_, sq, d = q.shape
    sk = k.shape[2]
    scale = F32(1 / np.sqrt(d))
    o = np.empty((b_, h_, sq, d), F32)
    lse = np.empty((b_, h_, sq), F32)
    rows = np.arange(sq)
    for b in range(b_):
        for h in range(h_):
            qs = q[b, h].astype(F32) * scale
            m = np.full(sq, -np.inf, F32)
            l = np.zeros(sq, F32)
            acc = np.zeros((sq, d), F32)
            for j0 in range(0, sk, block):
                t = _scores(qs, k[b, h, j0:j0 + block])
                if is_causal:
                    _causal_mask(t, rows, j0)
                m_new = np.maximum(m, t.max(axis=1))
                alpha = np.where(m > -np.inf, _exp(m - m_new), F32(0))
                p = _exp(t - m_new[:, None])
                l = l * alpha
                acc = acc * alpha[:, None]
                for j in range(p.shape[1]):
                    l = l + p[:, j]
                    acc = acc + (_bf16(p[:, j])[:, None].astype(np.float64) *
                                 v[b, h, j0 + j].astype(np.float64)).astype(F32)
                m = m_new
            o[b, h] = _bf16(acc * (F32(1) / l)[:, None])
            lse[b, h] = m + _log(l)
    return _bf16_bits(o), lse


def _bf16_bits(x):
    """float32 values that bf16 holds, as their uint16 encodings."""
    return (np.ascontiguousarray(x, dtype=F32).view(np.uint32) >> 16).astype(np.uint16)
