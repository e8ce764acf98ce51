"""simprec.discover_gemm on a GEMM recorded on an H200 (tests/data/gemm_discover, from
tests/data/gemm): torch._scaled_mm e5m2 x e4m3 with row-wise scales, fp32 out and
use_fast_accum=False, whose promotion every 128 and scale_b-then-scale_a order the recording
shows (docs/gemm.md); the same search as `simprec discover --gemm`
(tests/gemm_discover_cli_test.cpp has the other recordings)."""

import os

import numpy as np
import pytest

import simprec

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "gemm_discover")


def fixture(name="e5m2_e4m3_rowwise"):
    return {key: np.load(os.path.join(DATA, f"{name}.{key}.npy"))
            for key in ("a", "b", "d", "scale_a", "scale_b")}


def search(f, **kwargs):
    return simprec.discover_gemm(f["a"], f["b"], f["d"], scale_a=f["scale_a"],
                                 scale_b=f["scale_b"], family="scaled-mm-e5m2-e4m3", **kwargs)


def test_finds_the_recorded_promotion_and_scale_order():
    r = search(fixture())
    assert r.bit_exact and not r.stopped, r.text
    assert r.spec == "scaled-mm-e5m2-e4m3-rowwise,out=fp32"
    assert (r.outputs, r.differing, r.first_miss) == (4096, 0, None)
    assert r.lines[-1] == "spec " + r.spec
    assert not any("scale_order=alpha" in t or "promote=" in t for t in r.ties), r.ties


def test_an_altered_output_is_named_with_both_values():
    f = fixture()
    recorded = f["d"][3, 9]
    f["d"][3, 9] = np.nextafter(recorded, np.float32(-np.inf))
    r = search(f)
    assert not r.bit_exact
    assert r.differing == 1
    assert r.first_miss == (3, 9, f["d"][3, 9], recorded)
    assert r.spec == "scaled-mm-e5m2-e4m3-rowwise,out=fp32"


def test_bad_input_is_named():
    f = fixture()
    with pytest.raises(ValueError, match=r"D \(32, 127\): expected \(32, 128\)"):
        simprec.discover_gemm(f["a"], f["b"], f["d"][:, :127].copy())
    with pytest.raises(ValueError, match="did you mean 'scaled-mm-e5m2-e4m3'"):
        simprec.discover_gemm(f["a"], f["b"], f["d"], family="scaled-mm-e5m2-e3m4")
