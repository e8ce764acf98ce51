"""An independent oracle for rounding: exact rational arithmetic (fractions.Fraction) and the
textbook definition of each mode, written from the formats' spec values, sharing nothing with
simprec's integer kernel."""

import math
from fractions import Fraction

# name: (exponent bits, mantissa bits, bias, special encodings); limits follow from these.
FORMATS = {
    "bf16": (8, 7, 127, "ieee"),
    "fp16": (5, 10, 15, "ieee"),
    "e5m2": (5, 2, 15, "ieee"),
    "e4m3fn": (4, 3, 7, "fn"),
}
# Spec values (OCP FP8, IEEE 754) the limits must match.
MAX_FINITE = {"bf16": Fraction(0x1FE, 2**8) * 2**127, "fp16": 65504, "e5m2": 57344,
              "e4m3fn": 448}


def limits(name):
    e, m, bias, special = FORMATS[name]
    top_exponent = (2**e - 2) if special == "ieee" else (2**e - 1)
    top_mantissa = (2**m - 1) if special == "ieee" else (2**m - 2)
    max_finite = Fraction(2**m + top_mantissa, 2**m) * Fraction(2) ** (top_exponent - bias)
    emin = 1 - bias
    quantum = Fraction(2) ** (emin - m)  # spacing of the subnormals
    return max_finite, emin, m, quantum


def decode(name, bits):
    """Exact value of an encoding (Fraction), or 'inf'/'-inf'/'nan'."""
    e, m, bias, special = FORMATS[name]
    sign = -1 if bits >> (e + m) else 1
    exponent = (bits >> m) & (2**e - 1)
    mantissa = bits & (2**m - 1)
    if special == "ieee" and exponent == 2**e - 1:
        return "nan" if mantissa else ("inf" if sign > 0 else "-inf")
    if special == "fn" and exponent == 2**e - 1 and mantissa == 2**m - 1:
        return "nan"
    if exponent == 0:
        return sign * Fraction(mantissa, 2**m) * Fraction(2) ** (1 - bias)
    return sign * Fraction(2**m + mantissa, 2**m) * Fraction(2) ** (exponent - bias)


def round_exact(name, x, mode):
    """x (Fraction) rounded into the format: a Fraction, or 'inf'/'-inf'/'nan' where the result
    is beyond the largest finite value and the mode rounds away (default overflow policies:
    infinity for IEEE formats, NaN for e4m3fn)."""
    max_finite, emin, m, quantum = limits(name)
    if x == 0:
        return x
    sign = 1 if x > 0 else -1
    a = abs(x)
    exponent = max(math.floor(math.log2(a)), emin)
    # log2 of a Fraction can be off by one near powers of two: correct it exactly.
    while Fraction(2) ** exponent > a and exponent > emin:
        exponent -= 1
    while Fraction(2) ** (exponent + 1) <= a:
        exponent += 1
    ulp = Fraction(2) ** (exponent - m) if exponent >= emin else quantum
    low = (a // ulp) * ulp
    high = low + ulp
    if low == a:
        result = a
    elif mode == "rtz" or (mode == "rdn" and sign > 0) or (mode == "rup" and sign < 0):
        result = low
    elif mode == "rup" or mode == "rdn":
        result = high
    else:
        half = low + ulp / 2
        if a < half:
            result = low
        elif a > half:
            result = high
        elif mode == "rna":
            result = high
        else:  # rne: the neighbour with an even last significand bit
            result = low if (low / ulp) % 2 == 0 else high
    if result > max_finite:
        rounds_away = mode in ("rne", "rna") or (mode == "rup" and sign > 0) or (
            mode == "rdn" and sign < 0)
        if not rounds_away:
            return sign * max_finite
        if FORMATS[name][3] == "fn":
            return "nan"
        return "inf" if sign > 0 else "-inf"
    return sign * result


def same(value, expected):
    """Compares a float result with the oracle's Fraction or special."""
    if expected == "nan":
        return math.isnan(value)
    if expected in ("inf", "-inf"):
        return value == float(expected)
    return Fraction(value) == expected
