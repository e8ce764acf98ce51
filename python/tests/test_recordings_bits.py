"""simprec.recordings.bits on crafted bit patterns: the expected encodings are worked out by hand
from the formats' layouts (bf16: 1 sign, 8 exponent, 7 significand bits; fp16: 1, 5, 10), the
digests by hashlib on the literal bytes."""

import hashlib

import numpy as np
import pytest

from simprec.recordings.bits import (bf16_bits, bits_of_bf16_values, float32_bits, is_nan,
                                     sha256, share_equal, ulp_distance)


def u16(*values):
    return np.array(values, dtype=np.uint16)


def test_bf16_bits_round_to_nearest_even_through_float32():
    values = [1.0, -2.0, 0.0, -0.0,
              1 + 2**-8,             # halfway between 0x3F80 and 0x3F81: the even one
              1 + 3 * 2**-8,         # halfway between 0x3F81 and 0x3F82: the even one
              1 + 2**-8 + 2**-20,    # above halfway
              # Halfway for bf16 only after float32 dropped the 2^-30 (PyTorch's CPU converts
              # double -> float -> bf16); rounded once it would be 0x3F81.
              1 + 2**-8 + 2**-30,
              float(np.finfo(np.float32).max)]  # rounds up past bf16's largest: infinity
    expected = u16(0x3F80, 0xC000, 0x0000, 0x8000, 0x3F80, 0x3F82, 0x3F81, 0x3F80, 0x7F80)
    np.testing.assert_array_equal(bf16_bits(np.array(values)), expected)


def test_bf16_bits_refuses_nan():
    with pytest.raises(ValueError, match="NaN"):
        bf16_bits(np.array([1.0, np.nan]))


def test_bits_of_bf16_values_and_float32_bits():
    np.testing.assert_array_equal(bits_of_bf16_values([1.0, -0.5, 2.0**-133]),
                                  u16(0x3F80, 0xBF00, 0x0001))  # 2^-133: bf16's least subnormal
    with pytest.raises(ValueError, match="not bf16"):
        bits_of_bf16_values([1 + 2**-9])
    np.testing.assert_array_equal(float32_bits([1.0, -2.5]),
                                  np.array([0x3F800000, 0xC0200000], dtype=np.uint32))


def test_sha256_digests_the_bytes_in_order():
    a = np.array([1, 2], dtype="<u2")
    b = np.array([3], dtype=np.uint8)
    assert sha256(a, b) == hashlib.sha256(b"\x01\x00\x02\x00\x03").hexdigest()
    # A strided view digests its elements in C order, not the memory behind it.
    strided = np.array([1, 9, 2, 9], dtype="<u2")[::2]
    assert sha256(strided, b) == sha256(a, b)


def test_share_equal_counts_identical_bits_and_never_a_nan():
    # same | NaN, same bits | inf, same | +0 against -0 | one ulp apart
    a = u16(0x3F80, 0x7FC0, 0x7F80, 0x0000, 0x1234)
    b = u16(0x3F80, 0x7FC0, 0x7F80, 0x8000, 0x1235)
    assert share_equal(a, b, "bf16") == pytest.approx(2 / 5)
    # Every NaN encoding, of either sign, signalling or quiet, is never agreement.
    nans = u16(0x7FC0, 0xFFC0, 0x7F81, 0xFFFF)
    assert share_equal(nans, nans.copy(), "bf16") == 0.0
    assert share_equal(np.array([0x7FC00000, 0x7F800001], dtype=np.uint32),
                       np.array([0x7FC00000, 0x7F800001], dtype=np.uint32), "fp32") == 0.0
    # The format decides where a NaN is: 0x7F80 is bf16's infinity and an fp16 NaN.
    assert share_equal(u16(0x7F80), u16(0x7F80), "bf16") == 1.0
    assert share_equal(u16(0x7F80), u16(0x7F80), "fp16") == 0.0
    assert share_equal(u16(0x7C00), u16(0x7C00), "fp16") == 1.0  # fp16's infinity
    assert share_equal(u16(), u16(), "bf16") == 1.0


def test_is_nan_by_format():
    # inf | NaN | -inf | negative NaN | 0x7C01, an fp16 NaN, is a finite bf16 value
    np.testing.assert_array_equal(is_nan(u16(0x7F80, 0x7F81, 0xFF80, 0xFFC1, 0x7C01), "bf16"),
                                  [False, True, False, True, False])
    np.testing.assert_array_equal(is_nan(u16(0x7C00, 0x7C01, 0x7BFF), "fp16"),
                                  [False, True, False])


def test_share_equal_refuses_what_it_cannot_compare():
    with pytest.raises(ValueError, match=r"shapes differ: \(2,\) against \(3,\)"):
        share_equal(u16(1, 2), u16(1, 2, 3), "bf16")
    with pytest.raises(ValueError, match="int16 elements, expected uint16"):
        share_equal(np.array([1], dtype=np.int16), u16(1), "bf16")
    with pytest.raises(ValueError, match="uint16 elements, expected uint32"):
        share_equal(u16(1), u16(1), "fp32")
    with pytest.raises(ValueError, match="format 'e4m3'"):
        share_equal(u16(1), u16(1), "e4m3")


def test_ulp_distance_in_sign_magnitude_order():
    a = u16(0x3F80, 0x0001, 0x0000, 0x3F80, 0xBF80)
    b = u16(0x3F81, 0x8001, 0x8000, 0xBF80, 0xBF82)
    # one step | across zero: +tiny, 0, -tiny | +0 and -0 | 1 and -1 | two steps below -1
    np.testing.assert_array_equal(ulp_distance(a, b, "bf16"), [1, 2, 0, 2 * 0x3F80, 2])
    np.testing.assert_array_equal(
        ulp_distance(np.array([0x3F800000], dtype=np.uint32),
                     np.array([0x3F800003], dtype=np.uint32), "fp32"), [3])
