"""round and decode: against the exact oracle, against `simprec round`, and their errors."""

import math
from fractions import Fraction

import numpy as np
import pytest

import simprec
from exact_oracle import FORMATS, MAX_FINITE, decode as oracle_decode, limits, round_exact, same

MODES = ["rne", "rna", "rtz", "rup", "rdn"]


def test_limits_match_the_spec_values():
    by_name = {f["name"]: f for f in simprec.formats()}
    for name, max_finite in MAX_FINITE.items():
        assert Fraction(by_name[name]["max_finite"]) == max_finite
        assert limits(name)[0] == max_finite  # the oracle's own derivation agrees
    assert by_name["fp16"]["min_subnormal"] == 2.0**-24
    assert by_name["e4m3fn"]["min_subnormal"] == 2.0**-9
    assert simprec.format_info("e4m3fn", overflow="saturate")["overflow"] == "saturate"
    assert simprec.format_info("e3m4")["bits"] == 8


def test_formats_list_is_the_cli_table(cli):
    rows = [line.split() for line in cli("formats").splitlines()[1:]]
    listed = simprec.formats()
    assert [r[0] for r in rows] == [f["name"] for f in listed]
    for row, f in zip(rows, listed):
        assert [int(x) for x in row[1:5]] == [f["bits"], f["exponent_bits"], f["mantissa_bits"],
                                              f["bias"]]
        assert [float(x) for x in row[5:9]] == [f["max_finite"], f["min_normal"],
                                                f["min_subnormal"], f["epsilon"]]
        assert row[9:] == [f["overflow"], f["nan_inf"], f["subnormals"]]


def sample_values(rng, name, count):
    """Values across the format's range: random significands at every exponent from below the
    subnormals to past the largest finite value, plus exact ties of the format."""
    max_finite, emin, m, quantum = limits(name)
    top = math.floor(math.log2(max_finite)) + 2
    exponents = rng.integers(emin - m - 2, top, count)
    values = np.ldexp(rng.uniform(1, 2, count), exponents) * rng.choice([-1, 1], count)
    # Midpoints between neighbours (ties) at random exponents.
    ties = np.ldexp(1 + (2 * rng.integers(0, 2**m, count // 4) + 1) / 2.0 ** (m + 1),
                    rng.integers(emin, top - 1, count // 4))
    return np.concatenate([values, ties, -ties]).astype(np.float64)


@pytest.mark.parametrize("name", sorted(FORMATS))
@pytest.mark.parametrize("mode", MODES)
def test_round_matches_exact_oracle(name, mode):
    rng = np.random.default_rng(1234)
    x = sample_values(rng, name, 3000)
    got = simprec.round(x, name, mode)
    bits = simprec.round(x, name, mode, encode=True)
    for value, result, encoding in zip(x, got, bits):
        expected = round_exact(name, Fraction(float(value)), mode)
        assert same(float(result), expected), (name, mode, value, result, expected)
        assert same(float(result), oracle_decode(name, int(encoding))) or (
            math.isnan(result) and oracle_decode(name, int(encoding)) == "nan")


@pytest.mark.parametrize("name,dtype", [("bf16", np.uint16), ("fp16", np.uint16)])
def test_decode_every_16_bit_encoding(name, dtype):
    bits = np.arange(2**16, dtype=np.uint64).astype(dtype)
    values = simprec.decode(bits, name)
    # Independent decodings: bf16 is the top half of a float32, fp16 is numpy's float16.
    expected = ((bits.astype(np.uint32) << 16).view(np.float32) if name == "bf16"
                else bits.view(np.float16)).astype(np.float64)
    assert np.array_equal(values, expected, equal_nan=True)
    numbers = ~np.isnan(expected)  # the sign of a NaN is not part of its value
    assert np.array_equal(np.signbit(values[numbers]), np.signbit(expected[numbers]))


@pytest.mark.parametrize("name", ["e4m3fn", "e5m2"])
def test_decode_every_8_bit_encoding(name):
    values = simprec.decode(np.arange(256, dtype=np.uint8), name)
    for bits, value in enumerate(values):
        assert same(float(value), oracle_decode(name, bits)), (name, bits, value)


def hex_lines(values):
    return "".join(float(v).hex() + "\n" for v in values)


@pytest.mark.parametrize("name,mode,extra", [
    ("bf16", "rne", {}), ("e4m3fn", "rtz", {}), ("fp16", "sr", {"seed": 7}),
    ("e5m2", "sr", {"seed": 3, "sr_bits": 5}), ("bf16", "rnr", {"seed": 11}),
    ("e4m3fn", "rne", {"overflow": "saturate"}), ("fp16", "rne", {"subnormals": False}),
])
def test_round_is_bit_identical_to_the_cli(cli, name, mode, extra):
    rng = np.random.default_rng(99)
    x = sample_values(rng, name, 400)
    args = ["round", "--format", name, "--rounding", mode]
    if "seed" in extra:
        args += ["--seed", extra["seed"]]
    if "sr_bits" in extra:
        args += ["--sr-bits", extra["sr_bits"]]
    if "overflow" in extra:
        args += ["--overflow", extra["overflow"]]
    if extra.get("subnormals") is False:
        args += ["--no-subnormals"]
    cli_bits = [int(line.split()[0], 16) for line in cli(*args, stdin=hex_lines(x)).splitlines()]
    ours = simprec.round(x, name, mode, encode=True, **extra)
    assert ours.tolist() == cli_bits
    # float32 input: the same values give the same encodings.
    x32 = x.astype(np.float32)
    cli32 = [int(line.split()[0], 16) for line in cli(*args, stdin=hex_lines(x32)).splitlines()]
    assert simprec.round(x32, name, mode, encode=True, **extra).tolist() == cli32


def test_stochastic_rounding_is_the_same_for_any_thread_count():
    x = np.random.default_rng(5).normal(size=1 << 20).astype(np.float32)
    one = simprec.round(x, "bf16", "sr", seed=42, threads=1, encode=True)
    two = simprec.round(x, "bf16", "sr", seed=42, threads=2, encode=True)
    assert np.array_equal(one, two)
    assert not np.array_equal(one, simprec.round(x, "bf16", "sr", seed=43, encode=True))


def test_a_forked_child_rounds_after_the_parent_used_threads():
    """GCC's OpenMP runtime cannot start threads in a child forked after the parent's threads
    started (multiprocessing's fork start method): the child's loops run on one thread and give
    the same bits, rather than waiting forever."""
    import os
    import signal
    x = np.random.default_rng(6).normal(size=1 << 20).astype(np.float32)
    parent = simprec.round(x, "bf16", "sr", seed=7, threads=2, encode=True)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        signal.alarm(60)  # a hung child ends, and the test fails, instead of hanging ctest
        child = simprec.round(x, "bf16", "sr", seed=7, threads=2, encode=True)
        os.write(write, b"same" if np.array_equal(child, parent) else b"different")
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as answer:
        said = answer.read()
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, f"child status {status}"
    assert said == b"same"


def test_round_in_place_and_dtypes():
    x = np.array([0.1, 1 / 3, 1000.7], dtype=np.float32)
    expected = simprec.round(x, "bf16")
    assert expected.dtype == np.float32
    result = simprec.round(x, "bf16", out=x)
    assert result is x and np.array_equal(x, expected)
    assert simprec.round(np.zeros(3), "e4m3fn", encode=True).dtype == np.uint8
    assert simprec.round(np.zeros(3), "bf16", encode=True).dtype == np.uint16
    assert simprec.round(np.zeros(3), "fp32", encode=True).dtype == np.uint32


def test_round_and_decode_errors_name_the_argument():
    x = np.zeros((4, 4), dtype=np.float32)
    with pytest.raises(ValueError, match="x: expected a C-contiguous array"):
        simprec.round(x[:, ::2], "bf16")
    with pytest.raises(TypeError, match="x: dtype int32"):
        simprec.round(np.zeros(3, dtype=np.int32), "bf16")
    with pytest.raises(ValueError, match="format: .*bf17"):
        simprec.round(x, "bf17")
    with pytest.raises(ValueError, match="rounding: .*nearest-odd"):
        simprec.round(x, "bf16", "nearest-odd")
    with pytest.raises(ValueError, match="sr_bits=0: expected 1..32"):
        simprec.round(x, "bf16", "sr", sr_bits=0)
    with pytest.raises(ValueError, match="overflow='clamp'"):
        simprec.round(x, "bf16", overflow="clamp")
    with pytest.raises(ValueError, match="out: shape"):
        simprec.round(x, "bf16", out=np.zeros(3, dtype=np.float32))
    with pytest.raises(TypeError, match="out: dtype float64"):
        simprec.round(x, "bf16", out=np.zeros((4, 4)))
    with pytest.raises(ValueError, match="fp64: its values do not all fit in float32"):
        simprec.round(x, "fp64")
    with pytest.raises(TypeError, match="bits: dtype uint8 is not accepted for bf16"):
        simprec.decode(np.zeros(3, dtype=np.uint8), "bf16")
    with pytest.raises(ValueError, match=r"bits\[1\] = 4096 is not an encoding of e4m7"):
        simprec.decode(np.array([0, 4096], dtype=np.uint16), "e4m7")


def test_the_gil_is_released_while_rounding():
    """The main thread wakes while the worker is inside round. With a switch interval of 10 s
    the worker keeps the GIL from its Python code until it enters round; were the GIL not
    released there, the main thread could only take it once the worker had finished."""
    import sys
    import threading
    x = np.random.default_rng(1).normal(size=1 << 25).astype(np.float32)
    started, state = threading.Event(), {"done": False}

    def work():
        started.set()
        simprec.round(x, "bf16", "sr", seed=1, encode=True, threads=1)
        state["done"] = True

    interval = sys.getswitchinterval()
    sys.setswitchinterval(10.0)
    try:
        worker = threading.Thread(target=work)
        worker.start()
        started.wait()
        done_when_woken = state["done"]
        worker.join()
    finally:
        sys.setswitchinterval(interval)
    assert state["done"] and not done_when_woken
