"""simprec.gemm against GEMMs recorded on an H200 (tests/data/gemm: cuBLAS through torch.matmul
and torch._scaled_mm, PyTorch 2.11): the expected bits are the GPU's. Each test also shows the
part of the model it rests on: without it the same recording is missed."""

import os

import numpy as np
import pytest

from simprec.gemm import gemm
from simprec.recordings import compare_gemm, gemm_cases
from simprec.recordings.bits import format_bits

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "gemm")
SUMMARY, ARRAYS = compare_gemm.load(DATA)
SEED = SUMMARY["seed"]


def recorded(name, rows_kept):
    """The case's summary entry, the first `rows_kept` stored rows' indices and their bits."""
    entry = SUMMARY["cases"][name]
    m, n, _ = entry["shape"]
    rows = gemm_cases.kept_rows(m, n)[:rows_kept]
    return entry, rows, ARRAYS[name][:len(rows)]


def emulated_bits(entry, rows, **settings):
    a, w = compare_gemm.case_inputs(entry, SEED)
    fmt = compare_gemm.out_format(entry)
    return format_bits(gemm(np.ascontiguousarray(a[rows]), np.ascontiguousarray(w.T),
                            out_format=fmt, **settings), fmt)


@pytest.mark.parametrize("name,split_k,wrong_split_k", [
    ("matmul.bf16.on.256x256x256", None, None),
    ("matmul.fp16.off.64x64x16384", 1408, None),
    ("matmul.bf16.on.128x128x32768", 2048, 1408),
])
def test_cublas_matmul_with_its_split_k(name, split_k, wrong_split_k):
    entry, rows, want = recorded(name, 4)
    assert compare_gemm.split_k_length(entry) == split_k
    model = f"tc:sm90-wgmma-{entry['dtype']}"
    np.testing.assert_array_equal(emulated_bits(entry, rows, model=model, split_k=split_k), want)
    if split_k:  # one chain over K, or other pieces, miss the recording
        missed = emulated_bits(entry, rows, model=model, split_k=wrong_split_k)
        assert np.mean(missed == want) < 0.999


def test_cublaslt_without_split_k_runs_one_chain_over_k():
    # allow_splitk=False (cuBLASLt backend): an sm80 mma.sync kernel, K never split; the pieces
    # cuBLAS cut this K into with split-K allowed miss it.
    summary, arrays = compare_gemm.load(os.path.join(DATA, "nosplitk"))
    name = "matmul.fp16.off-nosplitk.128x128x32768"
    entry = summary["cases"][name]
    rows = gemm_cases.kept_rows(128, 128)[:2]
    want = arrays[name][:len(rows)]
    assert compare_gemm.split_k_length(entry) is None and compare_gemm.instruction(entry) == "mma"
    np.testing.assert_array_equal(emulated_bits(entry, rows, model="tc:sm90-mma-fp16"), want)
    missed = emulated_bits(entry, rows, model="tc:sm90-mma-fp16", split_k=2368)
    assert np.mean(missed == want) < 0.999


@pytest.mark.parametrize("scaling,out", [("tensor", "bf16"), ("tensor", "fp32"),
                                         ("row", "bf16"), ("row", "fp32")])
def test_scaled_mm_promotes_every_128_elements_without_fast_accumulation(scaling, out):
    name = f"scaled_mm.e4m3-e4m3.{scaling}.{out}.promoted.128x128x1024"
    entry, rows, want = recorded(name, 4)
    sa, sb = gemm_cases.scales(entry, SEED)
    settings = dict(model="tc:sm90-wgmma-e4m3", scale_a=sa if sa.ndim == 0 else sa[rows],
                    scale_b=sb, scale_order="alpha" if scaling == "tensor" else "b-then-a")
    np.testing.assert_array_equal(emulated_bits(entry, rows, promote_every=128, **settings), want)
    for other in (None, 256):  # no promotion, or a longer interval, misses
        assert np.mean(emulated_bits(entry, rows, promote_every=other, **settings) == want) < 0.99
    assert not np.array_equal(emulated_bits(entry, rows, promote_every=64, **settings), want)


@pytest.mark.parametrize("name", [
    "scaled_mm.e5m2-e4m3.tensor.bf16.fast.128x128x256",
    "scaled_mm.e5m2-e4m3.row.fp32.fast.64x128x4096",
    "scaled_mm.e5m2-e4m3.tensor.fp32.promoted.128x128x1024",
    "scaled_mm.e5m2-e4m3.row.bf16.promoted.256x512x2048",
])
def test_scaled_mm_with_one_e5m2_operand_runs_the_mixed_wgmma(name):
    # A e5m2, B e4m3 (uint8 encodings): each decoded in its own format by
    # tc:sm90-wgmma-e5m2-e4m3, on the e4m3 wgmma's arithmetic. A's encodings read as e4m3 values
    # (the single-format model) miss the recording.
    entry, rows, want = recorded(name, 4)
    sa, sb = gemm_cases.scales(entry, SEED)
    settings = dict(scale_a=sa if sa.ndim == 0 else sa[rows], scale_b=sb,
                    scale_order="alpha" if entry["scaling"] == "tensor" else "b-then-a",
                    promote_every=None if entry["fast_accum"] else 128)
    np.testing.assert_array_equal(
        emulated_bits(entry, rows, model="tc:sm90-wgmma-e5m2-e4m3", **settings), want)
    missed = emulated_bits(entry, rows, model="tc:sm90-wgmma-e4m3", **settings)
    assert np.mean(missed == want) < 0.1


@pytest.mark.parametrize("scaling,order,wrong_order", [("tensor", "alpha", "b-then-a"),
                                                       ("row", "b-then-a", "alpha")])
def test_scaled_mm_epilogue_order_with_fast_accumulation(scaling, order, wrong_order):
    entry, rows, want = recorded(f"scaled_mm.e4m3-e4m3.{scaling}.fp32.fast.128x128x256", 8)
    sa, sb = gemm_cases.scales(entry, SEED)
    settings = dict(model="tc:sm90-wgmma-e4m3", scale_a=sa if sa.ndim == 0 else sa[rows],
                    scale_b=sb)
    np.testing.assert_array_equal(emulated_bits(entry, rows, scale_order=order, **settings), want)
    missed = emulated_bits(entry, rows, scale_order=wrong_order, **settings)
    assert np.mean(missed == want) < 0.9


def test_recorded_runs_were_deterministic_and_inputs_are_drawn_again():
    cases = [e for e in SUMMARY["cases"].values() if "error" not in e]
    assert len(cases) == 180 and all(e["run_to_run"] == 1.0 for e in cases)
    entry = SUMMARY["cases"]["matmul.bf16.on.64x64x1024"]
    compare_gemm.case_inputs(entry, SEED)  # raises if the digest differs
    with pytest.raises(compare_gemm.RecordingError, match="inputs drawn again differ"):
        compare_gemm.case_inputs(entry, SEED + 1)


@pytest.mark.parametrize("settings,message", [
    (dict(out_format="fp8"), "out_format: 'fp8'"),
    (dict(split_k=0), "split_k: 0"),
    (dict(promote_every=2.5), "promote_every: 2.5"),
    (dict(scale_order="a-then-b"), "scale_order: 'a-then-b'"),
    (dict(scale_a=np.ones(3, np.float32)), "scale_a: 3 values; expected 1 .* or 2"),
])
def test_bad_settings_are_named(settings, message):
    a = np.zeros((2, 32), np.uint8)
    b = np.zeros((32, 4), np.uint8)
    with pytest.raises(ValueError, match=message):
        gemm(a, b, model="tc:sm90-wgmma-e4m3", **settings)


def test_scales_may_be_numbers_numpy_scalars_or_lists():
    a = np.full((2, 32), 0x38, np.uint8)  # e4m3 1.0: each output is 32
    b = np.full((32, 3), 0x38, np.uint8)
    d = gemm(a, b, model="tc:sm90-wgmma-e4m3", scale_a=np.float32(1.5), scale_b=[1, 2, 3])
    np.testing.assert_array_equal(d, [[48, 96, 144], [48, 96, 144]])
    d = gemm(a, b, model="tc:sm90-wgmma-e4m3", scale_a=[1, 2], scale_b=0.5,
             scale_order="b-then-a")
    np.testing.assert_array_equal(d, [[16] * 3, [32] * 3])


def test_mismatched_operands_are_named():
    with pytest.raises(ValueError, match=r"a \(2, 32\) and b \(16, 4\)"):
        gemm(np.zeros((2, 32), np.uint8), np.zeros((16, 4), np.uint8), model="tc:sm90-wgmma-e4m3")


def test_compare_prints_a_row_per_gemm_and_names_bad_input(capsys):
    assert compare_gemm.main(["--only", "matmul.fp16.on.64x64x16384", DATA]) == 0
    lines = capsys.readouterr().out.splitlines()
    row = next(line for line in lines if line.startswith("cuBLASLt"))
    assert row.split() == ["cuBLASLt", "fp16", "none", "(flag", "on)", "-", "fp16",
                           "64×64×16384", "1408", "fit", "100.000", "-"]
    assert lines[-1] == "fitting set: lowest 100.000%, 1/1 cases at 100%"
    # --whole: all 1,024 rows emulated (the recording keeps 64), against the whole's digest.
    assert compare_gemm.main(["--only", "matmul.fp16.off.1024x64x512", "--whole", DATA]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines()
               if line.startswith("cuBLASLt"))
    assert row.split()[-2:] == ["100.000", "equal"]
    with pytest.raises(SystemExit, match="no recorded case holds 'nothing'"):
        compare_gemm.main(["--only", "nothing", DATA])
    with pytest.raises(SystemExit, match="/nowhere: not a GEMM recording"):
        compare_gemm.main(["/nowhere"])
