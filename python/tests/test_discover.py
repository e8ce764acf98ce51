"""simprec.discover and simprec.discovery.agreement: the search's plumbing from Python, a time
limit that stops it, refused calls, and agreement counted as an independent comparison (the
emulation's outputs from simprec.attention against the GPU recording of the Triton stranger,
tests/data/triton_stranger) counts it."""

import sys

import numpy as np
import pytest

import simprec
from simprec.discovery import agreement
from simprec.recordings.discover_cases import stranger_triton_case

from conftest import SOURCE_DIR

RECORDING = SOURCE_DIR / "tests" / "data" / "triton_stranger"
SPEC = "fa2,format=fp16,exp_impl=exp2-fma,rescale=exp2-shift,tile=64x32"


def test_nothing_to_search_is_refused():
    with pytest.raises(ValueError, match="give a kernel to call or recorded cases"):
        simprec.discover()
    with pytest.raises(ValueError, match="input_format"):
        simprec.discover(lambda q, k, v: q)
    with pytest.raises(ValueError, match="'numpy' or 'torch'"):
        simprec.discover(lambda q, k, v: q, input_format="fp16", tensors="jax")


def test_time_limit_stops_with_a_spec():
    sys.path.insert(0, str(SOURCE_DIR / "examples" / "discover"))
    import numpy_kernels
    r = simprec.discover(numpy_kernels.flash_fp16, input_format="fp16", time_limit=1,
                         max_probes=0, verbose=False)
    assert r.stopped and not r.bit_exact
    assert r.lines[-1] == "spec " + r.spec and r.spec


@pytest.mark.parametrize("name", ["n128_d64", "n192_d64_causal"])
def test_agreement_counts_what_a_direct_comparison_counts(name):
    case = stranger_triton_case(str(RECORDING), name, "exp2")
    [a] = agreement(SPEC, [case])
    r = simprec.attention(case["q"], case["k"], case["v"], numerics=SPEC, input_format="fp16",
                          causal=case["causal"], scale=case["scale"], reference=False,
                          baseline=False)
    o_bits = np.asarray(r.o, dtype=np.float64).astype(np.float16).view(np.uint16)
    recorded = case["outputs"]["O"]
    equal = int(np.sum(o_bits.reshape(recorded.shape) == recorded))
    assert a["agreement"]["O"] == (equal, recorded.size)
    # Each row named differs, and the rows named hold every difference.
    differs = (o_bits.reshape(recorded.shape) != recorded)
    named = {(b, h, row) for b, h, row, _, _ in a["rows"]["O"]}
    assert named == {tuple(map(int, i)) for i in zip(*np.nonzero(differs.any(axis=3)))}
    assert sum(n for _, _, _, n, _ in a["rows"]["O"]) == recorded.size - equal
