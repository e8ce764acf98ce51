"""A kernel's own functions from Python: device_math=numpy against this interpreter's numpy, and
the device_functions hook of simprec.attention against the strategy that says the same."""

import numpy as np
import pytest

import simprec


def _numpy_avx512():
    """Whether this numpy takes np.exp and np.log on float32 from its AVX-512F code, which the
    numpy strategy models (numpy 2.5.2, measured); its AVX2 np.log is the same, its AVX2 np.exp
    differs on 84 arguments (docs/attention.md), and elsewhere they are the C library's."""
    core = getattr(np, "_core", None) or np.core
    return bool(core._multiarray_umath.__cpu_features__.get("AVX512F"))


def _spread_float32(n, seed):
    """n float32 values of every sign and binade, NaN and infinities among them."""
    return np.random.default_rng(seed).integers(0, 2**32, n, dtype=np.uint64).astype(
        np.uint32).view(np.float32)


@pytest.mark.skipif(not _numpy_avx512(), reason="numpy without its AVX-512 exp and log")
@pytest.mark.parametrize("function", ["exp", "log"])
def test_the_numpy_strategy_is_this_numpy(function):
    x = np.concatenate([_spread_float32(1 << 20, 1),
                        np.linspace(-104, 89, 1 << 18, dtype=np.float32),
                        np.linspace(1e-3, 4, 1 << 18, dtype=np.float32)])
    with np.errstate(all="ignore"):
        want = getattr(np, function)(x)
    got, modelled = simprec.device_function("numpy", function, x)
    assert modelled.all()
    same = (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
    assert same.all(), x[~same][:5]


def test_the_hook_is_the_strategy_it_stands_for():
    g = simprec.generate("normal", (1, 2, 96, 32), seed=3)
    spec = "fp32,tile=64x32"
    calls = []

    def exp(x):
        calls.append(len(x))
        # numpy's own np.exp where it is the modelled AVX-512 code, else the model's values.
        return np.exp(x) if _numpy_avx512() else simprec.device_function("numpy", "exp", x)[0]

    hooked = simprec.attention(g["q"], g["k"], g["v"], numerics=spec, reference=False,
                               device_functions={"exp": exp, "log": np.log})
    said = simprec.attention(g["q"], g["k"], g["v"], numerics=spec + ",device_math=numpy",
                             reference=False)
    plain = simprec.attention(g["q"], g["k"], g["v"], numerics=spec, reference=False)
    assert calls and all(n > 0 for n in calls)
    assert (hooked.o == said.o).all() and (hooked.lse == said.lse).all()
    # numpy's exp is not correctly rounded, and these inputs show it.
    assert (hooked.lse != plain.lse).any()


def test_bad_hooks_are_refused():
    g = simprec.generate("normal", (1, 1, 16, 8), seed=1)
    with pytest.raises(ValueError, match="unknown device function 'sqrt'"):
        simprec.attention(g["q"], g["k"], g["v"], numerics="fp32", device_functions={"sqrt": np.sqrt})
    with pytest.raises(TypeError, match="expected a callable"):
        simprec.attention(g["q"], g["k"], g["v"], numerics="fp32", device_functions={"exp": 2})
    with pytest.raises(ValueError, match="returned 1 values"):
        simprec.attention(g["q"], g["k"], g["v"], numerics="fp32", reference=False,
                          device_functions={"exp": lambda x: np.float32([1])})
    with pytest.raises(ValueError, match="unknown device function"):
        simprec.device_function("numpy", "sqrt", np.float32([1]))
