"""What paper A's analysis measures at one attention call of one training step, against the
same step's exact (fp64) attention on the same inputs, and paper B's distances between the
weights of two runs.

Paper A (Qiu & Yao, arXiv 2510.04212, Sec. 3): in the backward pass only delta = rowsum(dO o O)
differs materially between low and high precision, so per head

    dQ_lp - dQ_hp = -scale * diag(delta_lp - delta_hp) (P K),
    dW_Q error    = sum_T x_T (dQ_lp - dQ_hp)_T^T ~ -scale * sum_T (delta_lp - delta_hp)_T R,

where x_T is the layer's input at token T and R = x_T (P K)_T^T, about the same matrix for every
token once the representations are similar (low rank). The rank-1 direction is the leading
singular pair u v^T of sum_T x_T (P K)_T^T; the error along it is u^T (dW_Q error) v, with the
sign of the singular pair fixed by u^T R v > 0.
"""

import numpy as np

import simprec


def exact_attention(q, k, v, scale):
    """Causal softmax attention in fp64 (numpy's own loops: Debian's torch and numpy link the
    reference BLAS): P, O and P K per (batch, head)."""
    n = q.shape[-2]
    s = np.einsum("bhqd,bhkd->bhqk", q, k) * scale
    s = np.where(np.tril(np.ones((n, n), dtype=bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    return p, np.einsum("bhqk,bhkd->bhqd", p, v), np.einsum("bhqk,bhkd->bhqd", p, k)


def repeated_maxima(q, k, tokens, score_format, key_block):
    """Which causal score rows have their maximum at two or more keys.

    `exact`: the fp64 scores (exact for the products of bf16/fp16 inputs at these head sizes)
    tie at the max. `rounded`: the scores rounded once to `score_format` (paper A's bf16 S)
    tie at the max; `rounded_same_token`: rounded ties whose tied keys all hold the same input
    byte (a byte repeated at other positions), against ties of different bytes that the
    rounding makes. Per head: shares of the rows with two or more keys.

    `block`: where paper A's P-bar = exp(S - m) is exactly 1 at two or more keys of one key
    block (`key_block` keys) of the rounded scores, m the running max over the blocks so far:
    the share of (row, block) pairs holding a causal key.
    """
    b, h, n, _ = q.shape
    causal = np.tril(np.ones((n, n), dtype=bool))
    exact = np.ascontiguousarray(np.einsum("bhqd,bhkd->bhqk", q, k))
    masked = {"exact": np.where(causal, exact, -np.inf),
              "rounded": np.where(causal, simprec.round(exact, score_format), -np.inf)}
    at_max = {name: m == m.max(axis=-1, keepdims=True) for name, m in masked.items()}
    tied = {name: m.sum(axis=-1) >= 2 for name, m in at_max.items()}
    key_tokens = np.broadcast_to(tokens[:, None, None, :], (b, h, n, n))
    first = np.argmax(at_max["rounded"], axis=-1)[..., None]
    first_token = np.take_along_axis(key_tokens, first, axis=-1)
    same = np.all(np.where(at_max["rounded"], key_tokens == first_token, True), axis=-1)
    rows = b * (n - 1)  # row 0 has one key

    blocks = -(-n // key_block)
    padded = np.full((b, h, n, blocks * key_block), -np.inf)
    padded[..., :n] = masked["rounded"]
    per_block = padded.reshape(b, h, n, blocks, key_block)
    running_max = np.maximum.accumulate(per_block.max(axis=-1), axis=-1)
    several_ones = (per_block == running_max[..., None]).sum(axis=-1) >= 2
    live = np.isfinite(per_block).any(axis=-1)
    return {
        "repeat_exact": tied["exact"].sum(axis=(0, 2)) / rows,
        "repeat_rounded": tied["rounded"].sum(axis=(0, 2)) / rows,
        "repeat_rounded_same_token": (tied["rounded"] & same).sum(axis=(0, 2)) / rows,
        "repeat_block": (several_ones & live).sum(axis=(0, 2, 3)) / live.sum(axis=(0, 2, 3)),
    }


def delta_analysis(q, k, v, do, result, layer_input, scale):
    """Per head: the delta error summed over batch and tokens, the dW_Q error along the rank-1
    direction (all of it, and the part delta's error alone predicts: -scale x^T diag(delta
    error) P K), and that projection's share of the error's Frobenius norm. q, k, v, do: the
    emulation's inputs as float64 arrays; result: its AttentionResult."""
    p, o_hp, pk = exact_attention(q, k, v, scale)
    delta_hp = np.einsum("bhqd,bhqd->bhq", do, o_hp)
    delta_error = result.delta - delta_hp
    dp = np.einsum("bhqd,bhkd->bhqk", do, v)
    dq_hp = np.einsum("bhqk,bhkd->bhqd", p * (dp - delta_hp[..., None]), k) * scale
    x = np.asarray(layer_input, dtype=np.float64)
    r = np.einsum("btd,bhte->hde", x, pk, optimize=True)
    e = np.einsum("btd,bhte->hde", x, result.dq - dq_hp, optimize=True)
    e_delta = np.einsum("btd,bhte->hde", x, -scale * delta_error[..., None] * pk,
                        optimize=True)
    # The leading singular pair of each head's R; u1^T R v1 = sigma_1 > 0 fixes its sign.
    u, _, vt = np.linalg.svd(r, full_matrices=False)
    u1, v1 = u[:, :, 0], vt[:, 0, :]
    rank1 = np.einsum("hd,hde,he->h", u1, e, v1)
    norm = np.linalg.norm(e, axis=(1, 2))
    return {
        "delta_error": delta_error.sum(axis=(0, 2)),
        "rank1_error": rank1,
        "rank1_error_from_delta": np.einsum("hd,hde,he->h", u1, e_delta, v1),
        "rank1_share": np.divide(np.abs(rank1), norm, out=np.zeros_like(rank1), where=norm > 0),
    }


def weight_distances(a, b):
    """Paper B's Sec. V distances between two flat weight vectors: max |a - b| and the
    Wasserstein-1 distance between their value distributions (equal counts: the mean absolute
    difference of the sorted values)."""
    if a.shape != b.shape:
        raise ValueError(f"weights of {a.shape} and {b.shape} parameters")
    a, b = a.astype(np.float64), b.astype(np.float64)
    return float(np.max(np.abs(a - b))), float(np.mean(np.abs(np.sort(a) - np.sort(b))))
