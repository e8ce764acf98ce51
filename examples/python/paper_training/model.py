"""A small byte-level GPT whose attention goes through simprec's emulation, the text it learns
and the fp16 "autocast" linear layers of the low-precision training runs."""

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

import simprec.torch as storch

TEXT_DIR = Path("/usr/share/common-licenses")


@dataclass(frozen=True)
class ModelShape:
    layers: int = 2
    heads: int = 4
    head_dim: int = 16
    seq: int = 64
    batch: int = 8
    vocab: int = 256  # bytes

    @property
    def width(self):
        return self.heads * self.head_dim


@dataclass(frozen=True)
class Numerics:
    """How a run computes: the attention's numerics spec and format, and the precision of the
    rest of the model (fp32, or fp16 as autocast does it)."""

    spec: str
    format: str
    model_precision: str = "fp32"

    @property
    def attention_dtype(self):
        return {"bf16": torch.bfloat16, "fp16": torch.float16}.get(self.format, torch.float32)


def load_text(directory=TEXT_DIR, minimum=1 << 16):
    """The regular files of `directory` in name order, as one array of bytes."""
    if not directory.is_dir():
        raise SystemExit(f"text: {directory} is not a directory (expected the licence texts of "
                         "Debian's base-files)")
    parts = [p.read_bytes() for p in sorted(directory.iterdir())
             if p.is_file() and not p.is_symlink()]
    data = np.frombuffer(b"".join(parts), dtype=np.uint8)
    if data.size < minimum:
        raise SystemExit(f"text: {directory} holds {data.size} bytes; expected at least {minimum}")
    return data


def text_digest(data):
    """The first 16 hexadecimal digits of the text's SHA-256, as the reports quote it."""
    return hashlib.sha256(data.tobytes()).hexdigest()[:16]


def batch(data, shape, seed, step):
    """Inputs and next-byte targets of one step: `shape.batch` windows at offsets drawn from
    (seed, step) alone, so a resumed run sees the same batches."""
    if data.size < shape.seq + 2:
        raise ValueError(f"text of {data.size} bytes is shorter than seq + 2 = {shape.seq + 2}")
    rng = np.random.default_rng((seed, step))
    starts = rng.integers(0, data.size - shape.seq - 1, size=shape.batch)
    windows = np.stack([data[s:s + shape.seq + 1] for s in starts]).astype(np.int64)
    tokens = torch.from_numpy(windows)
    return tokens[:, :-1], tokens[:, 1:]


def matmul(a, b):
    """a @ b for 2-D float32 tensors through oneDNN where torch has it: Debian's torch links the
    reference BLAS, several times slower on these shapes (one thread either way, so the
    results do not depend on the machine's core count)."""
    if torch.backends.mkldnn.is_available():
        return torch._C._nn.mkldnn_linear(a.contiguous().to_mkldnn(),
                                          b.t().contiguous().to_mkldnn(), None).to_dense()
    return a @ b


def _fp16(t):
    return t.to(torch.float16).to(torch.float32)


def _unchanged(t):
    return t


class _Linear(torch.autograd.Function):
    """y = x W^T + b, and its gradients, with the operands and results of every product passed
    through `cast`: unchanged in fp32; for fp16, rounded to fp16 as autocast's fp16 products
    do (fp16 operands, fp32 accumulation of their exact products, fp16 result)."""

    @staticmethod
    def forward(ctx, x, weight, bias, cast):
        flat = cast(x.reshape(-1, x.shape[-1]))
        w = cast(weight)
        ctx.save_for_backward(flat, w)
        ctx.cast, ctx.shape = cast, x.shape
        y = cast(matmul(flat, w.t()) + cast(bias))
        return y.reshape(*x.shape[:-1], w.shape[0])

    @staticmethod
    def backward(ctx, grad):
        flat, w = ctx.saved_tensors
        cast = ctx.cast
        g = cast(grad.reshape(-1, grad.shape[-1]))
        dx = cast(matmul(g, w)).reshape(ctx.shape)
        return dx, cast(matmul(g.t(), flat)), cast(g.sum(0)), None


class Linear(torch.nn.Linear):
    def __init__(self, width_in, width_out, precision):
        super().__init__(width_in, width_out)
        if precision not in ("fp32", "fp16"):
            raise ValueError(f"model precision {precision!r}: expected fp32 or fp16")
        self.cast = _fp16 if precision == "fp16" else _unchanged

    def forward(self, x):
        return _Linear.apply(x, self.weight, self.bias, self.cast)


class Block(torch.nn.Module):
    """A pre-norm transformer block; `attend(q, k, v, layer)` is the emulated attention."""

    def __init__(self, shape, precision, index):
        super().__init__()
        self.shape, self.index = shape, index
        width = shape.width
        self.norm1 = torch.nn.LayerNorm(width)
        self.qkv = Linear(width, 3 * width, precision)
        self.proj = Linear(width, width, precision)
        self.norm2 = torch.nn.LayerNorm(width)
        self.up = Linear(width, 4 * width, precision)
        self.down = Linear(4 * width, width, precision)

    def forward(self, x, attend):
        b, n, width = x.shape
        h = self.norm1(x)
        q, k, v = self.qkv(h).chunk(3, dim=-1)
        heads = self.shape.heads
        q, k, v = (t.reshape(b, n, heads, width // heads).transpose(1, 2) for t in (q, k, v))
        o = attend(q, k, v, self.index, h)
        x = x + self.proj(o.transpose(1, 2).reshape(b, n, width))
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm2(x))))


class GPT(torch.nn.Module):
    def __init__(self, shape, precision="fp32"):
        super().__init__()
        self.shape = shape
        self.embed = torch.nn.Embedding(shape.vocab, shape.width)
        self.position = torch.nn.Embedding(shape.seq, shape.width)
        self.blocks = torch.nn.ModuleList(Block(shape, precision, i) for i in range(shape.layers))
        self.norm = torch.nn.LayerNorm(shape.width)
        self.head = Linear(shape.width, shape.vocab, precision)

    def forward(self, tokens, attend):
        x = self.embed(tokens) + self.position(torch.arange(tokens.shape[1]))
        for block in self.blocks:
            x = block(x, attend)
        return self.head(self.norm(x))


# The linear layers' numerics of a run, by name: simprec.torch.emulate's linear= argument.
# "bf16": autocast's bf16 GEMMs on an H200; "fp8-*": Transformer Engine's delayed scaling (HYBRID:
# e4m3 forward, e5m2 gradients; E4M3: e4m3 for both) with the accumulator promoted every 128
# elements of K in all three GEMMs, in none ("fast": fast accumulation), or as TE's default (fprop
# fast, dgrad and wgrad promoted); outputs in bf16. amax history of 16 steps: TE's default of 1024
# would hold the first steps' amaxes through the whole of a short run.
LINEAR_NUMERICS = ("bf16", "fp8-promoted", "fp8-fast", "fp8-te", "fp8-e4m3-promoted",
                   "fp8-e4m3-fast")
FP8_HISTORY = 16


def linear_numerics(name):
    """simprec.torch.emulate's linear= for a run (a new recipe, with its own state), or None."""
    if name is None or name == "bf16":
        return name
    if name not in LINEAR_NUMERICS:
        raise ValueError(f"linear numerics {name!r}: expected one of {LINEAR_NUMERICS}")
    fmt = "e4m3" if "e4m3" in name else "hybrid"
    promote = {"promoted": 128, "fast": None,
               "te": {"fprop": None, "dgrad": 128, "wgrad": 128}}[name.rsplit("-", 1)[1]]
    return storch.DelayedScaling(fp8_format=fmt, amax_history_len=FP8_HISTORY,
                                 promote_every=promote)


def emulated_attention(numerics, stream, on_backward=None):
    """attend(q, k, v, layer, layer_input) through simprec in the numerics' format: q, k, v are
    cast to the format's torch dtype (bf16, fp16) so that the emulation sees the encodings the
    model holds; stochastic rounding draws from random stream `stream * 16 + layer`, one per
    step and layer (a run passes a stream of its own for each step)."""

    def attend(q, k, v, layer, layer_input):
        dtype = numerics.attention_dtype
        hook = None if on_backward is None else on_backward(layer, layer_input.detach())
        o = storch.attention(q.to(dtype), k.to(dtype), v.to(dtype), is_causal=True,
                             numerics=numerics.spec, format=numerics.format,
                             seed=stream * 16 + layer, on_backward=hook)
        return o.to(torch.float32)

    return attend
