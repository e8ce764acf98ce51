"""The attention variants recorded on PyTorch's backends (record_variants) and compared with the
emulation (compare_variants): grouped-query attention, masks and biases, Sq != Sk, custom
scales, fp16, decoding, FlexAttention's score_mod and mask_mod, cuDNN.

A case is (backend, variant, shape, settings). Its inputs are drawn per head so that the CPU can
draw the heads it needs without the others: query head h's q and dO from numpy's PCG64 seeded by
[seed, b, h, kind, 0], key/value head h's k and v by [seed, b, h, kind, 1], in float64, rounded to
float32 by numpy and then to the case's 16-bit format by PyTorch (one rounding each, the same on
both sides). Masks, biases and score modifications are functions of the case alone (this
module), evaluated by PyTorch on the GPU and on the CPU alike.

Cases marked held_out were recorded with their own seed (HELD_OUT_SEED) and shapes, and no
emulation setting was chosen from them.
"""

import math
from dataclasses import dataclass

import numpy as np

SEED = 20261129
HELD_OUT_SEED = 20261130
KIND_IDS = {"normal": 0, "repeated-max": 1}


@dataclass(frozen=True)
class Case:
    """One recorded call. heads_kv < heads: grouped-query attention (enable_gqa=True). mask:
    None, 'causal' (is_causal=True), 'causal-lower-right' (PyTorch's CausalBias), 'padding' (a
    boolean key-padding mask broadcast over heads and queries), 'alibi-bias' (an additive ALiBi
    bias), 'random-bias' (an additive bias drawn per head), 'window' and 'document' (FlexAttention
    mask_mods). score_mod: None, 'softcap', 'alibi', or one of SCORE_MODS' (FlexAttention)."""
    backend: str
    variant: str
    batch: int
    heads: int
    heads_kv: int
    sq: int
    sk: int
    d: int
    dtype: str = "bf16"
    mask: str = None
    score_mod: str = None
    scale: float = None
    kind: str = "normal"
    held_out: bool = False
    window: int = 256
    softcap: float = 5.0

    @property
    def name(self):
        parts = [self.backend, self.variant, f"b{self.batch}h{self.heads}"]
        if self.heads_kv != self.heads:
            parts[-1] += f"kv{self.heads_kv}"
        parts.append(f"n{self.sq}" if self.sq == self.sk else f"q{self.sq}_k{self.sk}")
        parts.append(f"d{self.d}")
        if self.dtype != "bf16":
            parts.append(self.dtype)
        if self.held_out:
            parts.append("heldout")
        return "_".join(parts)

    @property
    def seed(self):
        return HELD_OUT_SEED if self.held_out else SEED

    @property
    def group(self):
        return self.heads // self.heads_kv


def _cases():
    c = Case
    return [
        # SDPA's flash backend.
        c("flash", "gqa", 2, 8, 2, 512, 512, 64),
        c("flash", "mqa-causal", 1, 8, 1, 1024, 1024, 128, mask="causal"),
        c("flash", "gqa-causal", 1, 12, 4, 777, 777, 128, mask="causal", held_out=True),
        c("flash", "scale", 1, 2, 2, 512, 512, 64, scale=0.3),
        c("flash", "scale", 1, 2, 2, 700, 700, 128, scale=0.2, held_out=True),
        c("flash", "sq-ne-sk", 1, 2, 2, 256, 2000, 64),
        c("flash", "sq-ne-sk", 1, 2, 2, 300, 1500, 128, held_out=True),
        c("flash", "fp16-causal", 1, 2, 2, 1024, 1024, 64, dtype="fp16", mask="causal"),
        c("flash", "fp16-causal", 1, 2, 2, 600, 600, 128, dtype="fp16", mask="causal",
          held_out=True),
        c("flash", "decode", 4, 8, 8, 1, 4096, 128),
        c("flash", "decode-gqa", 2, 32, 8, 1, 4096, 128, held_out=True),
        c("flash", "short-query", 2, 8, 8, 4, 3000, 64, held_out=True),
        c("flash", "causal-sq-ne-sk", 1, 2, 2, 256, 1024, 64, mask="causal"),
        # SDPA's memory-efficient backend.
        c("efficient", "padding", 2, 4, 4, 512, 512, 64, mask="padding"),
        c("efficient", "padding", 3, 2, 2, 333, 777, 128, mask="padding", held_out=True),
        c("efficient", "alibi-bias", 1, 4, 4, 512, 512, 64, mask="alibi-bias"),
        c("efficient", "random-bias", 1, 2, 2, 300, 300, 128, mask="random-bias", held_out=True),
        c("efficient", "causal-sq-ne-sk", 1, 2, 2, 256, 1000, 64, mask="causal"),
        c("efficient", "causal-lower-right", 1, 2, 2, 200, 600, 64, mask="causal-lower-right"),
        c("efficient", "causal-lower-right", 1, 2, 2, 300, 900, 128, mask="causal-lower-right",
          held_out=True),
        c("efficient", "gqa", 1, 8, 2, 512, 512, 64),
        # FlexAttention (torch.compile).
        c("flex", "softcap", 1, 2, 2, 512, 512, 64, score_mod="softcap"),
        c("flex", "softcap", 1, 2, 2, 640, 640, 128, score_mod="softcap", held_out=True),
        c("flex", "alibi", 1, 4, 4, 512, 512, 64, score_mod="alibi"),
        c("flex", "window", 1, 2, 2, 1024, 1024, 64, mask="window"),
        c("flex", "document", 1, 2, 2, 1024, 1024, 64, mask="document"),
        c("flex", "gqa", 1, 8, 2, 512, 512, 64),
        c("flex", "gqa-window-softcap", 1, 8, 2, 768, 768, 128, mask="window",
          score_mod="softcap", held_out=True),
        # SDPA's cuDNN backend.
        c("cudnn", "plain", 1, 2, 2, 512, 512, 64),
        c("cudnn", "plain", 1, 2, 2, 1024, 1024, 128),
        c("cudnn", "causal", 1, 2, 2, 1024, 1024, 128, mask="causal"),
        c("cudnn", "causal", 1, 2, 2, 768, 768, 64, mask="causal", held_out=True),
        c("cudnn", "plain", 2, 4, 4, 1000, 1000, 128, held_out=True),
        c("cudnn", "gqa", 1, 8, 2, 512, 512, 128),
        # Held out in a second recording, after the models were fitted to the cases above.
        c("flash", "decode-gqa", 3, 16, 4, 1, 3000, 64, held_out=True),
        c("flash", "gqa", 2, 6, 2, 900, 900, 128, mask="causal", held_out=True),
        c("flash", "scale", 1, 3, 3, 333, 777, 96, scale=0.05, held_out=True),
        c("efficient", "padding", 2, 2, 2, 640, 640, 64, mask="padding", held_out=True),
        c("efficient", "alibi-bias", 1, 8, 8, 384, 384, 128, mask="alibi-bias", held_out=True),
        c("flex", "window", 1, 2, 2, 700, 700, 64, mask="window", window=100, held_out=True),
        c("flex", "document", 1, 4, 2, 1024, 1024, 128, mask="document", held_out=True),
        c("flex", "alibi", 1, 8, 8, 384, 384, 64, score_mod="alibi", held_out=True),
        c("flex", "softcap", 1, 4, 1, 512, 512, 64, score_mod="softcap", softcap=2.0,
          held_out=True),
        c("cudnn", "plain", 1, 2, 2, 2048, 2048, 64, held_out=True),
        c("cudnn", "causal", 2, 2, 2, 512, 512, 128, mask="causal", held_out=True),
        c("cudnn", "gqa", 1, 8, 2, 777, 777, 64, held_out=True),
        # Long cuDNN sequences to search on (its O, exact to 1024 keys, misses a few values at
        # 2048 on a held-out case).
        c("cudnn", "long", 1, 1, 1, 4096, 4096, 64),
        c("cudnn", "long", 1, 1, 1, 3072, 3072, 128),
        c("cudnn", "long-causal", 1, 1, 1, 4096, 4096, 128, mask="causal"),
        # Score modifications of every kind simprec's score_mod expressions take, recorded
        # after their emulation was written (tests/data/torch_score_mods).
        c("flex", "rel-bias", 1, 4, 4, 512, 512, 96, score_mod="rel-bias", held_out=True),
        c("flex", "tanh-plus-bias", 1, 2, 2, 640, 640, 96, score_mod="tanh-plus-bias",
          held_out=True),
        c("flex", "silu", 1, 2, 2, 512, 512, 64, mask="causal", score_mod="silu", held_out=True),
        c("flex", "distance-penalty", 1, 2, 2, 768, 768, 128, score_mod="distance-penalty",
          held_out=True),
        c("flex", "doc-damp", 1, 2, 2, 1024, 1024, 64, score_mod="doc-damp", held_out=True),
        c("flex", "temperature", 1, 4, 2, 512, 512, 64, score_mod="temperature", held_out=True),
        c("flex", "exp2-decay", 1, 2, 2, 512, 512, 64, mask="window", score_mod="exp2-decay",
          held_out=True),
        c("flex", "alibi", 1, 3, 3, 640, 640, 64, mask="causal", score_mod="alibi",
          held_out=True),
        c("flex", "exp-bias", 1, 2, 2, 512, 512, 128, score_mod="exp-bias", held_out=True),
        c("flex", "log-sqrt", 1, 2, 2, 384, 384, 64, score_mod="log-sqrt", held_out=True),
        c("flex", "distance-penalty", 1, 2, 2, 768, 768, 64, score_mod="distance-penalty",
          held_out=True),
        c("flex", "plain", 1, 2, 2, 768, 768, 128, held_out=True),
    ]


CASES = {case.name: case for case in _cases()}


def head_draw(case, b, h, role):
    """float32 draws of one head: role 0 gives (q, dO) of query head h, role 1 (k, v) of key/value
    head h."""
    rng = np.random.Generator(np.random.PCG64([case.seed, b, h, KIND_IDS[case.kind], role]))
    rows = case.sq if role == 0 else case.sk
    return tuple(rng.standard_normal((rows, case.d)).astype(np.float32) for _ in range(2))


def inputs_float32(case, batches=None, q_heads=None, kv_heads=None):
    """q, k, v, dO as float32 numpy arrays [len(batches), len(heads), S, d] of the given batch
    indices and heads (default: all)."""
    batches = range(case.batch) if batches is None else batches
    q_heads = range(case.heads) if q_heads is None else q_heads
    kv_heads = range(case.heads_kv) if kv_heads is None else kv_heads
    q = np.stack([np.stack([head_draw(case, b, h, 0)[0] for h in q_heads]) for b in batches])
    do = np.stack([np.stack([head_draw(case, b, h, 0)[1] for h in q_heads]) for b in batches])
    k = np.stack([np.stack([head_draw(case, b, h, 1)[0] for h in kv_heads]) for b in batches])
    v = np.stack([np.stack([head_draw(case, b, h, 1)[1] for h in kv_heads]) for b in batches])
    return q, k, v, do


def torch_dtype(case):
    import torch
    return {"bf16": torch.bfloat16, "fp16": torch.float16}[case.dtype]


def alibi_slopes(heads):
    """ALiBi's head slopes 2^(-8 (h + 1) / H) (Press et al. 2022), float32."""
    return np.array([2.0 ** (-8.0 * (h + 1) / heads) for h in range(heads)], dtype=np.float32)


def valid_keys(case, b):
    """The padding mask's number of valid keys of batch element b."""
    return case.sk - 37 * (b + 1) % (case.sk // 2)


def document_ids(case):
    """Document index of each position of the packed sequence (documents of 300, 200, 400, ...
    positions)."""
    lengths = [300, 200, 400, 124]
    ids = np.concatenate([np.full(n, i) for i, n in enumerate(lengths)])
    return np.resize(ids, max(case.sq, case.sk)).astype(np.int64)


def attn_mask(case, torch, batches, heads, device="cpu"):
    """SDPA's attn_mask of the case for the given batch indices and (query) heads: a boolean
    padding mask [b, 1, 1, Sk], an additive bias [b or 1, h, Sq, Sk] in the case's dtype, or None.
    'causal-lower-right' is not a tensor (causal_bias)."""
    dtype = torch_dtype(case)
    if case.mask == "padding":
        m = np.zeros((len(batches), 1, 1, case.sk), dtype=bool)
        for i, b in enumerate(batches):
            m[i, :, :, :valid_keys(case, b)] = True
        return torch.from_numpy(m).to(device)
    if case.mask == "alibi-bias":
        slopes = alibi_slopes(case.heads)[list(heads)]
        rel = (np.arange(case.sk)[None, :] - np.arange(case.sq)[:, None]).astype(np.float32)
        bias = slopes[:, None, None] * rel[None]
        return torch.from_numpy(bias[None]).to(dtype).to(device)
    if case.mask == "random-bias":
        bias = np.stack([np.stack([
            np.random.Generator(np.random.PCG64([case.seed, b, h, 7])).standard_normal(
                (case.sq, case.sk)).astype(np.float32) for h in heads]) for b in batches])
        return torch.from_numpy(bias).to(dtype).to(device)
    return None


def mask_mod(case, torch, device="cpu"):
    """FlexAttention's mask_mod(b, h, q_idx, kv_idx) of the case, or None."""
    if case.mask == "causal":
        return lambda b, h, q, k: q >= k
    if case.mask == "window":
        w = case.window
        return lambda b, h, q, k: (q >= k) & (q - k < w)
    if case.mask == "document":
        docs = torch.from_numpy(document_ids(case)).to(device)
        return lambda b, h, q, k: docs[q] == docs[k]
    return None


def score_mod(case, torch, device="cpu"):
    """FlexAttention's score_mod(score, b, h, q_idx, kv_idx) of the case, or None."""
    if case.score_mod == "softcap":
        cap = case.softcap
        return lambda s, b, h, q, k: cap * torch.tanh(s / cap)
    if case.score_mod == "alibi":
        slopes = torch.from_numpy(alibi_slopes(case.heads)).to(device)
        return lambda s, b, h, q, k: s + slopes[h] * (k - q)
    if case.score_mod in SCORE_MODS:
        return SCORE_MODS[case.score_mod](case, torch, device)
    return None


def _draw(case, shape, stream):
    rng = np.random.Generator(np.random.PCG64([case.seed, stream]))
    return rng.standard_normal(shape).astype(np.float32)


def _rel_bias(case, torch, device):
    table = torch.from_numpy(_draw(case, (case.heads, case.sq + case.sk - 1), 11)).to(device)
    offset = case.sk - 1
    return lambda s, b, h, q, k: s + table[h, q - k + offset]


def _tanh_plus_bias(case, torch, device):
    bias = torch.from_numpy(_draw(case, (case.sq, case.sk), 12)).to(device)
    return lambda s, b, h, q, k: 30.0 * torch.tanh(s / 30.0) + bias[q, k]


def _temperature(case, torch, device):
    temps = torch.from_numpy(np.linspace(0.6, 1.4, case.heads).astype(np.float32)).to(device)
    return lambda s, b, h, q, k: s / temps[h]


def _doc_damp(case, torch, device):
    docs = torch.from_numpy(document_ids(case)).to(device)
    return lambda s, b, h, q, k: torch.where(docs[q] == docs[k], s, s * 0.5 - 1.0)


# Score modifications in FlexAttention's form, each exercising other operations: a relative
# position bias table, a tanh soft-cap plus a bias, SiLU of the score (the score used twice), a
# distance penalty, a damping across packed documents, a temperature per head (a division by a
# tensor), decays by exp2, exp, log and sqrt.
SCORE_MODS = {
    "rel-bias": _rel_bias,
    "tanh-plus-bias": _tanh_plus_bias,
    "silu": lambda case, torch, device: (lambda s, b, h, q, k: s * torch.sigmoid(s)),
    "distance-penalty": lambda case, torch, device: (
        lambda s, b, h, q, k: s - 0.05 * (q - k).abs()),
    "doc-damp": _doc_damp,
    "temperature": _temperature,
    "exp2-decay": lambda case, torch, device: (
        lambda s, b, h, q, k: s * torch.exp2(-(q - k).float() / 64.0)),
    "exp-bias": lambda case, torch, device: (
        lambda s, b, h, q, k: s + torch.exp(-(q - k).abs().float() / 32.0)),
    "log-sqrt": lambda case, torch, device: (
        lambda s, b, h, q, k: s - torch.log(1.0 + torch.sqrt((q - k).abs().float()))),
}


def default_scale(d):
    return 1.0 / math.sqrt(d)
