"""The GEMMs recorded on the GPU (tests/data/gemm) and their inputs, drawn so that the CPU draws
them again from the seed and the shape alone.

Two families. `matmul`: torch.matmul on bf16 or fp16 operands (cuBLAS), with PyTorch's
reduced-precision reduction allowed ("on"), not allowed ("off") and, where PyTorch takes the
pair form (allow_reduced_precision, allow_splitk), with split-K not allowed either ("off-nosplitk").
`scaled_mm`: torch._scaled_mm on FP8 operands (e4m3, or e5m2 for one of them) with tensor-wise or
row-wise fp32 scales, bf16 or fp32 output, use_fast_accum on or off.

Every GEMM is D = A · B with A (M x K) row-major and B = W^T for W (N x K) row-major: the layout of
a linear layer (x @ W.T), and the one _scaled_mm asks for (its second operand column-major).

Which shapes fit the model and which are kept back is fixed here, before any comparison:
HELD_OUT_* (tests/data/gemm/README.md lists them too).
"""

import numpy as np

from simprec.recordings.bits import bf16_bits

SEED = 20261129

# (M, N, K). Split-K-prone ones have K much larger than M*N.
MATMUL_FIT = (
    (64, 64, 1024), (128, 128, 4096), (64, 64, 16384), (128, 128, 32768), (32, 64, 65536),
    (256, 256, 256), (512, 256, 2048), (16, 128, 8192), (1024, 64, 512),
)
MATMUL_HELD_OUT = ((256, 2048, 256), (96, 160, 12288), (192, 192, 24576), (80, 48, 20000))
SCALED_FIT = (
    (128, 128, 256), (128, 128, 1024), (64, 128, 4096), (128, 128, 16384), (256, 512, 2048),
)
SCALED_HELD_OUT = ((256, 2048, 256), (192, 320, 8192), (64, 64, 12288))

MATMUL_DTYPES = ("bf16", "fp16")
REDUCTIONS = ("on", "off", "off-nosplitk")
# (A's format, B's format): cuBLASLt takes e4m3 x e4m3 and one e5m2 operand, not two.
FP8_PAIRS = (("e4m3", "e4m3"), ("e5m2", "e4m3"))
SCALINGS = ("tensor", "row")
OUT_DTYPES = ("bf16", "fp32")
# The tensor-wise scales: fp32 values whose product fp32 does not hold exactly, so that the
# order of the epilogue's multiplications shows in the output.
TENSOR_SCALE_A = np.float32(1.3)
TENSOR_SCALE_B = np.float32(0.7)

# At most this many outputs of a GEMM are stored (whole rows); a SHA-256 digest covers all.
OUTPUTS_KEPT = 4096

_FORMAT_IDS = {"bf16": 0, "fp16": 1, "e4m3": 2, "e5m2": 3, "scale": 4}


def case_name(case):
    """A case's key in the recording: matmul.bf16.on.64x64x1024,
    scaled_mm.e4m3-e4m3.tensor.bf16.fast.128x128x256."""
    m, n, k = case["shape"]
    shape = f"{m}x{n}x{k}"
    if case["family"] == "matmul":
        return f"matmul.{case['dtype']}.{case['reduction']}.{shape}"
    accumulation = "fast" if case["fast_accum"] else "promoted"
    return (f"scaled_mm.{case['a_format']}-{case['b_format']}.{case['scaling']}."
            f"{case['out_dtype']}.{accumulation}.{shape}")


def cases():
    """Every recorded case as a dict: family, shape, held_out and the family's settings."""
    out = []
    for shapes, held_out in ((MATMUL_FIT, False), (MATMUL_HELD_OUT, True)):
        for shape in shapes:
            for dtype in MATMUL_DTYPES:
                for reduction in REDUCTIONS:
                    out.append({"family": "matmul", "shape": shape, "held_out": held_out,
                                "dtype": dtype, "reduction": reduction})
    for shapes, held_out in ((SCALED_FIT, False), (SCALED_HELD_OUT, True)):
        for shape in shapes:
            for a_format, b_format in FP8_PAIRS:
                for scaling in SCALINGS:
                    for out_dtype in OUT_DTYPES:
                        for fast in (True, False):
                            out.append({"family": "scaled_mm", "shape": shape,
                                        "held_out": held_out, "a_format": a_format,
                                        "b_format": b_format, "scaling": scaling,
                                        "out_dtype": out_dtype, "fast_accum": fast})
    for case in out:
        case["name"] = case_name(case)
    return out


def _rng(seed, shape, operand, format):
    m, n, k = shape
    return np.random.Generator(np.random.PCG64([seed, m, n, k, operand, _FORMAT_IDS[format]]))


def _fp8_values(format):
    """Every finite value of an OCP FP8 format (e4m3 without infinities, e5m2 IEEE-like) by
    encoding (NaN and infinities as NaN), float64."""
    mantissa_bits, bias = (3, 7) if format == "e4m3" else (2, 15)
    codes = np.arange(256)
    exponent = (codes >> mantissa_bits) & ((1 << (7 - mantissa_bits)) - 1)
    fraction = codes & ((1 << mantissa_bits) - 1)
    magnitude = np.where(exponent == 0, fraction / 2.0**mantissa_bits * 2.0**(1 - bias),
                         (1 + fraction / 2.0**mantissa_bits) * 2.0**(exponent - bias))
    values = np.where(codes & 0x80, -magnitude, magnitude)
    if format == "e4m3":
        values[(codes & 0x7F) == 0x7F] = np.nan
    else:
        values[(codes & 0x7C) == 0x7C] = np.nan
    return values


def fp8_codes(x, format):
    """uint8 encodings of the values nearest to float64 x among the finite values of `format`
    (ties to the even encoding; beyond the largest, the largest). Which code a value gets only
    has to be a fixed function: the GPU and the CPU both start from the codes."""
    values = _fp8_values(format)
    positive = np.arange(128)[~np.isnan(values[:128])]
    magnitudes = values[positive]
    a = np.abs(x)
    hi = np.clip(np.searchsorted(magnitudes, a), 1, len(magnitudes) - 1)
    lo = hi - 1
    below, above = a - magnitudes[lo], magnitudes[hi] - a
    pick = np.where(below < above, lo, np.where(above < below, hi, np.where(lo % 2 == 0, lo, hi)))
    pick = np.where(a >= magnitudes[-1], len(magnitudes) - 1, pick)
    codes = positive[pick].astype(np.uint8)
    return np.where(x < 0, codes | 0x80, codes).astype(np.uint8)


def operand_bits(seed, shape, operand, format):
    """The encodings of operand "a" (M x K) or "w" (N x K) of a case: standard normal draws in
    float32 from PCG64 seeded by [seed, M, N, K, operand, format], rounded to nearest even into
    `format` (bf16, fp16: uint16; e4m3, e5m2: uint8)."""
    m, n, k = shape
    rows = {"a": m, "w": n}[operand]
    x = _rng(seed, shape, {"a": 0, "w": 1}[operand], format).standard_normal(
        (rows, k), dtype=np.float32)
    if format == "bf16":
        return bf16_bits(x)
    if format == "fp16":
        return x.astype(np.float16).view(np.uint16)
    return fp8_codes(x.astype(np.float64), format)


def row_scales(seed, shape):
    """Row-wise scales: scale_a (M,) and scale_b (N,) float32 uniform in [0.5, 2)."""
    m, n, _ = shape
    rng = _rng(seed, shape, 2, "scale")
    return (rng.uniform(0.5, 2.0, m).astype(np.float32),
            rng.uniform(0.5, 2.0, n).astype(np.float32))


def scales(case, seed):
    """(scale_a, scale_b) of a scaled_mm case as float32 arrays: shape () tensor-wise, (M, 1) and
    (1, N) row-wise."""
    if case["scaling"] == "tensor":
        return np.array(TENSOR_SCALE_A), np.array(TENSOR_SCALE_B)
    sa, sb = row_scales(seed, case["shape"])
    return sa.reshape(-1, 1), sb.reshape(1, -1)


def kept_rows(m, n, limit=OUTPUTS_KEPT):
    """The output rows stored: all when M*N <= limit, else evenly spread rows (the first and the
    last among them) whose outputs number at most limit (at least one row)."""
    count = max(1, min(m, limit // n))
    return np.unique(np.linspace(0, m - 1, count).round().astype(np.int64))
