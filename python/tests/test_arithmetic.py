"""Elementwise add, sub, mul, div, fma, sqrt: against exact rational arithmetic, exhaustively for
e4m3fn pairs, and their errors."""

import bisect
from fractions import Fraction

import numpy as np
import pytest

import simprec
from exact_oracle import decode as oracle_decode, round_exact, same

OPERATIONS = {
    "add": (simprec.add, lambda a, b: a + b),
    "sub": (simprec.sub, lambda a, b: a - b),
    "mul": (simprec.mul, lambda a, b: a * b),
    "div": (simprec.div, lambda a, b: a / b),
}


def finite_encodings(name, width):
    return [b for b in range(2**width) if oracle_decode(name, b) not in ("inf", "-inf", "nan")]


@pytest.mark.parametrize("op", sorted(OPERATIONS))
def test_every_e4m3fn_pair_round_to_nearest_even(op):
    """All pairs of finite e4m3fn encodings (divisors nonzero): 254^2 results per operation."""
    finite = finite_encodings("e4m3fn", 8)
    a = np.repeat(np.array(finite, dtype=np.uint8), len(finite))
    b = np.tile(np.array(finite, dtype=np.uint8), len(finite))
    if op == "div":
        nonzero = np.array([oracle_decode("e4m3fn", int(x)) != 0 for x in b])
        a, b = a[nonzero], b[nonzero]
    function, exact = OPERATIONS[op]
    results = function(a, b, "e4m3fn", "rne")
    assert results.dtype == np.uint8
    values = {x: oracle_decode("e4m3fn", x) for x in finite}
    for x, y, r in zip(a.tolist(), b.tolist(), results.tolist()):
        expected = round_exact("e4m3fn", exact(values[x], values[y]), "rne")
        got = oracle_decode("e4m3fn", r)
        assert got == expected or (expected == 0 and got == 0), (op, x, y, r, expected)


@pytest.mark.parametrize("name", ["bf16", "fp16"])
@pytest.mark.parametrize("mode", ["rne", "rna", "rtz", "rup", "rdn"])
def test_random_pairs_and_fma_in_every_deterministic_mode(name, mode):
    rng = np.random.default_rng(2024)
    n = 1500
    a = simprec.round(rng.normal(size=n) * 8, name)
    b = simprec.round(rng.normal(size=n) * 8, name)
    c = simprec.round(rng.normal(size=n) * 8, name)
    b[b == 0] = 1.0
    for op, (function, exact) in OPERATIONS.items():
        got = function(a, b, name, mode)
        for x, y, r in zip(a, b, got):
            expected = round_exact(name, exact(Fraction(float(x)), Fraction(float(y))), mode)
            assert same(float(r), expected), (op, x, y, r, expected)
    got = simprec.fma(a, b, c, name, mode)
    for x, y, z, r in zip(a, b, c, got):
        exact_value = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
        assert same(float(r), round_exact(name, exact_value, mode)), (x, y, z, r)


@pytest.mark.parametrize("name,width", [("e5m2", 8), ("fp16", 16)])
def test_sqrt_of_every_positive_encoding(name, width):
    finite = [b for b in finite_encodings(name, width) if oracle_decode(name, b) >= 0]
    values = sorted({oracle_decode(name, b) for b in finite})
    squares = [v * v for v in values]
    bits = np.array(finite, dtype=np.uint8 if width == 8 else np.uint16)
    results = simprec.sqrt(bits, name, "rne")
    for x_bits, r in zip(finite, results.tolist()):
        x = oracle_decode(name, x_bits)
        i = bisect.bisect_right(squares, x) - 1  # values[i] <= sqrt(x) < values[i + 1]
        if squares[i] == x or i + 1 == len(values):
            expected = values[i]
        else:
            middle = (values[i] + values[i + 1]) / 2
            expected = values[i] if x < middle * middle else values[i + 1]
        assert oracle_decode(name, r) == expected, (x_bits, r, expected)


def test_special_values_follow_ieee():
    inf, nan = float("inf"), float("nan")
    r = simprec.div(np.array([1.0, 0.0, -1.0]), np.array([0.0, 0.0, 0.0]), "bf16")
    assert r[0] == inf and np.isnan(r[1]) and r[2] == -inf
    assert np.isnan(simprec.sub(np.array([inf]), np.array([inf]), "fp16")[0])
    assert np.isnan(simprec.sqrt(np.array([-1.0]), "fp16")[0])
    assert np.isnan(simprec.add(np.array([nan]), np.array([1.0]), "bf16")[0])


def test_stochastic_rounding_is_unbiased_and_reproducible():
    # 1 + 2^-10 lies 1/8 of a bf16 ulp above 1: rounds up with probability 1/8.
    n = 200_000
    a, b = np.ones(n), np.full(n, 2.0**-10)
    r = simprec.add(a, b, "bf16", "sr", seed=9)
    ups = int(np.count_nonzero(r > 1))
    assert set(np.unique(r)) == {1.0, 1.0 + 2.0**-7}
    # Binomial(n, 1/8): sd 148; 5 sd either side fails a correct implementation with p < 1e-6.
    assert abs(ups - n / 8) < 5 * np.sqrt(n * (1 / 8) * (7 / 8))
    assert np.array_equal(r, simprec.add(a, b, "bf16", "sr", seed=9))


def test_values_and_encodings_agree_and_broadcast():
    a = np.array([1.5, -2.25, 0.375])
    bits_a = simprec.round(a, "e4m3fn", encode=True)
    bits_b = simprec.round(np.full(3, 0.625), "e4m3fn", encode=True)
    as_bits = simprec.mul(bits_a, bits_b, "e4m3fn")
    as_values = simprec.mul(a, np.float64(0.625) * np.ones(1), "e4m3fn")
    assert np.array_equal(simprec.decode(as_bits, "e4m3fn"), as_values)


def test_arithmetic_errors_name_the_argument():
    with pytest.raises(ValueError, match=r"b\[0\] = 0.1 is not representable in bf16"):
        simprec.add(np.array([1.0]), np.array([0.1]), "bf16")
    with pytest.raises(TypeError, match="b: dtype float32, expected float64 like a"):
        simprec.add(np.array([1.0]), np.array([1.0], dtype=np.float32), "bf16")
    with pytest.raises(TypeError, match="a: dtype int64 is not accepted"):
        simprec.mul(np.array([1]), np.array([1]), "bf16")
    with pytest.raises(ValueError, match="a: expected a C-contiguous array"):
        simprec.sqrt(np.ones((3, 3))[:, 1], "bf16")
    with pytest.raises(TypeError, match=r"a: dtype uint16 is not accepted \(e4m3fn encodings as"):
        simprec.add(np.array([3], dtype=np.uint16), np.array([1], dtype=np.uint16), "e4m3fn")
    with pytest.raises(ValueError, match=r"a\[0\] = 4096 is not an encoding of e4m7"):
        simprec.add(np.array([4096], dtype=np.uint16), np.array([1], dtype=np.uint16), "e4m7")
