"""Bit patterns of recorded and emulated outputs, and how alike two sets of them are.

The conversions the recordings' inputs went through (float64 -> bf16 as PyTorch's CPU does it),
the encodings of emulated values, the bits of torch tensors, SHA-256 digests of arrays, the share
of bit-identical elements and the distance in units in the last place. Bit patterns are unsigned
integers: uint16 for bf16 and fp16, uint32 for fp32. A NaN never counts as agreement, whatever
its bits: the two sides computed no value there to agree on.
"""

import hashlib

import numpy as np

# Per format: the integer type of its encodings, its exponent field and its significand field.
_FIELDS = {
    "bf16": (np.uint16, 0x7F80, 0x007F),
    "fp16": (np.uint16, 0x7C00, 0x03FF),
    "fp32": (np.uint32, 0x7F800000, 0x007FFFFF),
}
FORMATS = tuple(_FIELDS)


def bf16_bits(x):
    """uint16 bf16 encodings of float64 x as PyTorch's CPU conversion makes them: the double
    is first converted to float (round to nearest even), then the float to bf16 (round to
    nearest even; c10::BFloat16 has no constructor from double)."""
    f = np.ascontiguousarray(x, dtype=np.float64).astype(np.float32)
    u = f.view(np.uint32).astype(np.uint64)
    if np.isnan(f).any():
        raise ValueError("NaN in generated inputs")
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def bits_of_bf16_values(values):
    """uint16 encodings of float64 values that bf16 holds exactly (checked)."""
    f = np.ascontiguousarray(values, dtype=np.float64).astype(np.float32)
    u = f.view(np.uint32)
    if np.any(u & 0xFFFF):
        raise ValueError("emulated output holds values that are not bf16")
    return (u >> 16).astype(np.uint16)


def float32_bits(values):
    """uint32 bit patterns of values converted to float32 (exact where float32 holds them, as
    an fp32 LSE site's values are)."""
    return np.asarray(values, dtype=np.float64).astype(np.float32).view(np.uint32)


def format_bits(values, format):
    """Encodings of values that `format` holds: uint32 for fp32, uint16 for bf16 (checked:
    bits_of_bf16_values) and fp16."""
    if format == "fp32":
        return float32_bits(values)
    if format == "bf16":
        return bits_of_bf16_values(values)
    if format == "fp16":
        return np.asarray(values, dtype=np.float32).astype(np.float16).view(np.uint16)
    raise ValueError(f"format {format!r}: expected fp32, bf16 or fp16")


def format_values(bits, format):
    """float32 values of fp32 (uint32), bf16 or fp16 (uint16) encodings."""
    if format == "fp32":
        return np.asarray(bits).astype(np.uint32).view(np.float32)
    if format == "bf16":
        return (np.asarray(bits).astype(np.uint32) << 16).view(np.float32)
    if format == "fp16":
        return np.asarray(bits).astype(np.uint16).view(np.float16).astype(np.float32)
    raise ValueError(f"format {format!r}: expected fp32, bf16 or fp16")


def tensor_bits(tensor):
    """uint16 bit patterns of a torch bf16 or fp16 tensor, copied to the CPU (C order)."""
    import torch
    return tensor.detach().to("cpu").contiguous().view(torch.int16).numpy().view(np.uint16)


def sha256(*arrays):
    """SHA-256 (hex) of the arrays' bytes in C order, one after the other."""
    digest = hashlib.sha256()
    for a in arrays:
        digest.update(np.ascontiguousarray(a).tobytes())
    return digest.hexdigest()


def _checked(a, b, format):
    if format not in _FIELDS:
        raise ValueError(f"format {format!r}: expected one of {', '.join(FORMATS)}")
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        raise ValueError(f"shapes differ: {a.shape} against {b.shape}")
    dtype = np.dtype(_FIELDS[format][0])
    for name, x in (("first", a), ("second", b)):
        if x.dtype != dtype:
            raise ValueError(f"{name} array: {x.dtype} elements, expected {dtype} bit patterns "
                             f"of {format}")
    return a, b


def is_nan(bits, format):
    """Where the bit patterns of `format` encode a NaN (exponent all ones, significand not 0)."""
    _, exponent, significand = _FIELDS[format]
    bits = np.asarray(bits)
    return ((bits & exponent) == exponent) & ((bits & significand) != 0)


def share_equal(a, b, format):
    """The share of elements whose bit patterns of `format` are identical and not NaN (1.0 for
    empty arrays)."""
    a, b = _checked(a, b, format)
    if not a.size:
        return 1.0
    return float(np.mean((a == b) & ~is_nan(a, format)))


def ulp_distance(a, b, format):
    """Per element, how many encodings of `format` lie between a and b, in sign-magnitude order
    (so values of opposite sign near zero count as far apart; +0 and -0 are 0 apart). int64."""
    a, b = _checked(a, b, format)
    sign = np.int64(1) << (8 * a.dtype.itemsize - 1)

    def ordered(bits):
        x = bits.astype(np.int64)
        return np.where(x < sign, x, sign - x)
    return np.abs(ordered(a) - ordered(b))
