"""simprec.quantize: bit for bit the outputs of `simprec quantize`, against a reference written
here from the MX specification's and NVIDIA's rules (exact rationals and numpy's IEEE float32
arithmetic, nothing of simprec), and its errors."""

import math
from fractions import Fraction

import numpy as np
import pytest

import simprec

SCHEMES = ["mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e2m3", "mxfp6_e3m2", "mxfp4", "nvfp4"]

# Element formats of the MX spec's Table 1 (exponent bits, mantissa bits, bias, emax: the
# exponent of the largest normal) and whether the top exponent is reserved (IEEE-like e5m2).
ELEMENTS = {
    "mxfp8_e4m3": (4, 3, 7, 8),
    "mxfp8_e5m2": (5, 2, 15, 15),
    "mxfp6_e2m3": (2, 3, 1, 2),
    "mxfp6_e3m2": (3, 2, 3, 4),
    "mxfp4": (2, 1, 1, 2),
}


def element_values(scheme):
    """Every non-negative finite value of the element format, by encoding (sign bit clear),
    from the spec's parameters: e4m3 reserves S.1111.111 for NaN, e5m2 its top exponent."""
    e, m, bias, _ = ELEMENTS[scheme]
    values = []
    for bits in range(2 ** (e + m)):
        exponent, mantissa = bits >> m, bits & (2**m - 1)
        if scheme == "mxfp8_e5m2" and exponent == 2**e - 1:
            continue
        if scheme == "mxfp8_e4m3" and exponent == 2**e - 1 and mantissa == 2**m - 1:
            continue
        if exponent == 0:
            values.append((Fraction(mantissa, 2**m) * Fraction(2) ** (1 - bias), bits))
        else:
            values.append((Fraction(2**m + mantissa, 2**m) * Fraction(2) ** (exponent - bias),
                           bits))
    return values


def nearest_even(table, x):
    """|x| rounded to nearest, ties to the even encoding, clamped to the largest value: the
    spec's conversion with saturation. Returns (value, encoding)."""
    a = abs(x)
    best = min(table, key=lambda vb: (abs(vb[0] - a), vb[1] % 2))
    return best


def mx_reference(x, scheme, block=32):
    """OCP MX v1.0 section 6.3 for finite x: X = 2^(floor(log2 amax) - emax), elements V / X
    rounded to nearest even and clamped. Returns (dequantized, scale exponents)."""
    emax = ELEMENTS[scheme][3]
    table = element_values(scheme)
    rows = x.reshape(-1, x.shape[-1])
    out = np.empty(rows.shape)
    exponents = []
    for r, row in enumerate(rows):
        row_exponents = []
        for b0 in range(0, len(row), block):
            values = [Fraction(float(v)) for v in row[b0:b0 + block]]
            amax = max(abs(v) for v in values)
            if amax == 0:
                scale_exponent = -127
            else:
                scale_exponent = math.frexp(float(amax))[1] - 1 - emax
            row_exponents.append(scale_exponent)
            scale = Fraction(2) ** scale_exponent
            for i, v in enumerate(values):
                magnitude, _ = nearest_even(table, v / scale)
                out[r, b0 + i] = float(math.copysign(1, v) * magnitude * scale)
        exponents.append(row_exponents)
    return out.reshape(x.shape), np.array(exponents)


E2M1 = element_values("mxfp4")


def nvfp4_reference(x, block=16):
    """NVFP4 (arXiv 2509.25149 Appendix B) in numpy float32 arithmetic, each step one IEEE fp32
    operation: returns (dequantized, tensor decode scale)."""
    f = np.float32
    amax = f(np.max(np.abs(x)))
    s_enc = f(1) if amax == 0 else min(f(f(448 * 6) / amax), f(np.finfo(np.float32).max))
    s_dec = f(f(1) / s_enc)
    rows = x.reshape(-1, x.shape[-1])
    out = np.empty(rows.shape)
    e4m3 = element_values("mxfp8_e4m3")
    for r, row in enumerate(rows):
        for b0 in range(0, len(row), block):
            values = row[b0:b0 + block]
            block_amax = f(np.max(np.abs(values)))
            s_b, _ = nearest_even(e4m3, Fraction(float(f(f(block_amax / f(6)) * s_enc))))
            s_b = f(float(s_b))
            with np.errstate(divide="ignore"):  # a zero block scale: 1/0, clamped to FLT_MAX
                s_enc_b = min(f(f(1) / f(s_b * s_dec)), f(np.finfo(np.float32).max))
            for i, v in enumerate(values):
                q, _ = nearest_even(E2M1, Fraction(float(f(v * s_enc_b))))
                out[r, b0 + i] = math.copysign(1, v) * float(q) * float(s_b) * float(s_dec)
    return out.reshape(x.shape), float(s_dec)


def sample(seed, dtype, shape=(3, 40)):
    """Values over several binades with zeros, exact element ties and a partial final block."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * np.exp2(rng.integers(-6, 7, size=shape))
    x[0, 5:9] = 0
    x[1, :] = np.round(x[1, :] * 4) / 4  # values on the quarter grid: ties of the narrow formats
    x[2, 32:] = 0  # an all-zero partial block
    return x.astype(dtype)


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("rounding", ["rne", "rtz", "sr", "rnr"])
def test_quantize_matches_the_cli(cli, tmp_path, scheme, rounding):
    x = sample(7, np.float32)
    x[0, 1] = np.nan  # a NaN-scaled block
    np.save(tmp_path / "x.npy", x)
    cli("quantize", "--scheme", scheme, "--in", tmp_path / "x.npy", "--out", tmp_path / "q",
        "--rounding", rounding, "--seed", 11, "--block-size", 8)
    q = simprec.quantize(x, scheme, rounding, seed=11, block_size=8)
    for name in ("elements", "scales"):
        expected = np.load(tmp_path / "q" / f"{name}.npy")
        assert q[name].dtype == expected.dtype and q[name].shape == expected.shape
        assert np.array_equal(q[name], expected), name
    expected = np.load(tmp_path / "q" / "dequantized.npy")
    assert np.array_equal(q["dequantized"], expected, equal_nan=True)
    assert np.isnan(q["dequantized"][0, :8]).all()
    if scheme == "nvfp4":
        assert q["tensor_scale"] == float(np.load(tmp_path / "q" / "tensor_scale.npy")[0])
    else:
        assert q["tensor_scale"] is None


@pytest.mark.parametrize("scheme", [s for s in SCHEMES if s != "nvfp4"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mx_against_the_specification(scheme, dtype):
    x = sample(3, dtype)
    q = simprec.quantize(x, scheme)
    dequantized, exponents = mx_reference(x, scheme)
    assert np.array_equal(q["dequantized"], dequantized)
    # E8M0 stores 2^k as k + 127.
    assert np.array_equal(q["scales"].astype(int) - 127, exponents)


def test_nvfp4_against_the_recipe():
    x = sample(5, np.float32, shape=(4, 48))
    q = simprec.quantize(x, "nvfp4")
    dequantized, s_dec = nvfp4_reference(x)
    assert q["tensor_scale"] == s_dec
    assert np.array_equal(q["dequantized"], dequantized)


def test_torch_tensor_input():
    import torch  # the suite requires it (conftest.py)
    x = sample(9, np.float32)
    q = simprec.quantize(torch.from_numpy(x), "mxfp4")
    assert np.array_equal(q["elements"], simprec.quantize(x, "mxfp4")["elements"])


def test_errors_name_the_offending_value():
    x = np.ones((2, 8), dtype=np.float32)
    with pytest.raises(ValueError, match="scheme 'mxfp5': expected one of mxfp8_e4m3"):
        simprec.quantize(x, "mxfp5")
    with pytest.raises(TypeError, match=r"x: dtype float64, expected float32 \(NVFP4"):
        simprec.quantize(x.astype(np.float64), "nvfp4")
    with pytest.raises(ValueError, match=r"block_size=0: expected 1..2\^30"):
        simprec.quantize(x, "mxfp4", block_size=0)
    with pytest.raises(ValueError, match="rounding"):
        simprec.quantize(x, "mxfp4", "nearest")
    with pytest.raises(TypeError, match="x: dtype uint8, expected float32 or float64"):
        simprec.quantize(x.astype(np.uint8), "mxfp4")
