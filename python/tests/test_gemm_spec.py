"""GEMM numerics specs through Python and the CLI (docs/gemm.md): the presets against GEMMs
recorded on an H200 (expected bits: the GPU's), one engine behind both the spec and the keyword
form and behind `simprec gemm`, and errors that name what is wrong."""

import os
import subprocess

import numpy as np
import pytest
from conftest import CLI

from simprec.gemm import canonical, gemm, numerics_reference, split_k_length, to_numerics
from simprec.recordings import compare_gemm, gemm_cases
from simprec.recordings.bits import format_bits

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "gemm")
SUMMARY, ARRAYS = compare_gemm.load(DATA)
SEED = SUMMARY["seed"]


# One fitted case per preset family, the spec as the comparison picks it (split-K: the piece
# length the recorded launch ran).
@pytest.mark.parametrize("name,spec", [
    ("matmul.bf16.on.256x256x256", "cublas-bf16"),
    ("matmul.fp16.off.64x64x16384", "cublas-fp16,split_k=length:1408"),
    ("matmul.bf16.on.128x128x32768", "cublas-bf16,split_k=length:2048"),
    ("scaled_mm.e4m3-e4m3.tensor.bf16.promoted.128x128x1024", "scaled-mm-e4m3"),
    ("scaled_mm.e4m3-e4m3.row.fp32.fast.128x128x256", "scaled-mm-e4m3-rowwise-fast,out=fp32"),
    ("scaled_mm.e5m2-e4m3.tensor.fp32.promoted.128x128x256", "scaled-mm-e5m2-e4m3,out=fp32"),
    ("scaled_mm.e5m2-e4m3.row.bf16.fast.64x128x4096", "scaled-mm-e5m2-e4m3-rowwise-fast"),
])
def test_presets_reproduce_recorded_gemms(name, spec):
    entry = SUMMARY["cases"][name]
    assert compare_gemm.numerics(entry) == spec
    m, n, _ = entry["shape"]
    rows = gemm_cases.kept_rows(m, n)[:4]
    a, w = compare_gemm.case_inputs(entry, SEED)
    settings = {}
    if entry["family"] == "scaled_mm":
        sa, sb = gemm_cases.scales(entry, SEED)
        settings = dict(scale_a=sa if sa.ndim == 0 else sa[rows], scale_b=sb)
    d = gemm(np.ascontiguousarray(a[rows]), np.ascontiguousarray(w.T), numerics=spec, **settings)
    np.testing.assert_array_equal(format_bits(d, compare_gemm.out_format(entry)),
                                  ARRAYS[name][:len(rows)])


def test_keyword_form_is_the_spec_form():
    assert to_numerics(model="tc:sm90-wgmma-e4m3", out_format="bf16", split_k=2816,
                       promote_every=128, scale_order="b-then-a", scaled=True, row_wise=True) == (
        "chain,instruction=tc:sm90-wgmma-e4m3,out=bf16,split_k=length:2816,promote=128,"
        "scaling=row,scale_order=b-then-a")
    assert canonical(to_numerics(model="tc:sm90-wgmma-e4m3", promote_every=128, scaled=True)) == (
        "chain,instruction=tc:sm90-wgmma-e4m3,promote=128,scaling=tensor")
    rng = np.random.default_rng(5)
    a = rng.integers(0, 256, (3, 300), dtype=np.uint8) & 0x77
    b = rng.integers(0, 256, (300, 5), dtype=np.uint8) & 0x77
    keyword = gemm(a, b, model="tc:sm90-wgmma-e4m3", promote_every=128, split_k=160,
                   scale_a=1.3, scale_b=0.7, out_format="bf16")
    spec = gemm(a, b, numerics="scaled-mm-e4m3,split_k=length:160", scale_a=1.3, scale_b=0.7)
    np.testing.assert_array_equal(keyword.view(np.uint32), spec.view(np.uint32))


def test_bias_is_added_before_the_cast():
    # 1 + 2^-8 ties to 1 in bf16; with 2^-9 added first it rounds up to 1 + 2^-7.
    a = np.array([[1.0, 2.0**-8]], np.float32)
    b = np.ones((2, 1), np.float32)
    assert gemm(a, b, numerics="cublas-bf16")[0, 0] == 1.0
    assert gemm(a, b, numerics="cublas-bf16", bias=[2.0**-9])[0, 0] == 1.0 + 2.0**-7


def test_split_k_length_is_the_engines():
    assert split_k_length("cublas-fp16-splitk,tile=32x64,cluster=2", 64, 64, 16384) == 1408
    assert split_k_length("chain,split_k=pieces:3", 8, 8, 100) == 34
    assert split_k_length("chain", 8, 8, 100) == 100
    # cuBLAS's cap weighs the whole GEMM's output tiles: 32 rows alone would allow 24 pieces.
    assert split_k_length("cublas-bf16-splitk,tile=32x64,cluster=2", 32, 128, 32768) == 1408
    assert split_k_length("cublas-bf16-splitk,tile=32x64,cluster=2,problem=128x128", 32, 128,
                          32768) == 2048


def test_reference_lists_presets_and_keys():
    ref = numerics_reference()
    names = [p["name"] for p in ref["presets"]]
    assert "scaled-mm-e5m2-e4m3" in names and "cublas-bf16-splitk" in names
    assert [k["key"] for k in ref["keys"]][:3] == ["instruction", "promote", "split_k"]
    assert {s["syntax"] for s in ref["split_k"]} == {"none", "pieces:N", "length:L",
                                                     "cublas-sm90"}


@pytest.mark.parametrize("kwargs,error,message", [
    (dict(numerics="scaled-mm-e4m4"), ValueError,
     "unknown GEMM preset 'scaled-mm-e4m4'; did you mean 'scaled-mm-e4m3'"),
    (dict(numerics="chain,promte=128"), ValueError, "did you mean 'promote'"),
    (dict(numerics="chain", model="tc:sm90-wgmma-e4m3"), TypeError,
     "numerics= and model= both given"),
    (dict(), TypeError, "needs numerics="),
    (dict(numerics="chain", scale_a=2.0), ValueError,
     "scale_a given, but the numerics have scaling=none"),
    (dict(numerics="cublas-bf16", bias=[1.0, 2.0]), ValueError, "bias: 2 values; expected 3"),
    (dict(numerics="scaled-mm-e4m3", scale_a=[1.0, 2.0]), ValueError,
     r"scale_a: 2 values; expected 1 \(tensor-wise\)$"),
])
def test_bad_arguments_are_named(kwargs, error, message):
    a = np.zeros((2, 32), np.float32)
    b = np.zeros((32, 3), np.float32)
    with pytest.raises(error, match=message):
        gemm(a, b, **kwargs)


def test_an_output_too_large_for_memory_is_refused_before_it_is_allocated(tmp_path):
    # A (2^20 x 1) and B (1 x 2^20) are 4 MiB each; D would be 2^40 floats. Both the Python call
    # and the CLI refuse it with the memory estimate instead of failing to allocate.
    a = np.ones((1 << 20, 1), np.float32)
    b = np.ones((1, 1 << 20), np.float32)
    with pytest.raises(ValueError, match=r"D \(1048576, 1048576\) needs an estimated .* of "
                                         r"memory, more than"):
        gemm(a, b, numerics="cublas-bf16")
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    r = subprocess.run([CLI, "gemm", "--numerics", "cublas-bf16", "--a", str(tmp_path / "a.npy"),
                        "--b", str(tmp_path / "b.npy"), "--out", str(tmp_path / "d.npy")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "needs an estimated" in r.stderr, r.stderr
    assert not (tmp_path / "d.npy").exists()


def test_cli_runs_the_same_engine(cli, tmp_path):
    entry = SUMMARY["cases"]["scaled_mm.e5m2-e4m3.row.fp32.promoted.128x128x256"]
    a, w = compare_gemm.case_inputs(entry, SEED)
    sa, sb = gemm_cases.scales(entry, SEED)
    b = np.ascontiguousarray(w.T)
    for name, array in (("a", a), ("b", b), ("sa", sa.ravel()), ("sb", sb.ravel()),
                        ("bias", np.linspace(-1, 1, 128, dtype=np.float32))):
        np.save(tmp_path / f"{name}.npy", array)
    spec = compare_gemm.numerics(entry)
    out = cli("gemm", "--numerics", spec, "--a", tmp_path / "a.npy", "--b", tmp_path / "b.npy",
              "--scale-a", tmp_path / "sa.npy", "--scale-b", tmp_path / "sb.npy", "--bias",
              tmp_path / "bias.npy", "--out", tmp_path / "d.npy")
    assert out.startswith("scaled-mm-e5m2-e4m3-rowwise,out=fp32: D (128, 128) float32")
    want = gemm(a, b, numerics=spec, scale_a=sa, scale_b=sb,
                bias=np.linspace(-1, 1, 128, dtype=np.float32))
    np.testing.assert_array_equal(np.load(tmp_path / "d.npy").view(np.uint32),
                                  want.view(np.uint32))
    r = subprocess.run([CLI, "gemm", "--numerics", "scaled-mm-e5m2-e4m4", "--a",
                        str(tmp_path / "a.npy"), "--b", str(tmp_path / "b.npy"), "--out",
                        str(tmp_path / "d.npy")], capture_output=True, text=True)
    assert r.returncode == 2
    assert "did you mean 'scaled-mm-e5m2-e4m3'" in r.stderr



def test_every_fitted_recording_with_its_preset():
    # The first stored row's first 16 outputs of every fitted case (matmul and _scaled_mm, both
    # operand pairs, both scalings, both outputs, fast accumulation on and off) against the GPU's
    # bits, with the spec compare_gemm picks: the presets keep 100% of the fitting set. (Columns
    # do not change the split: problem= gives cublas-sm90 the whole GEMM.)
    missed, inputs = [], {}
    cols = slice(0, 16)
    for name, entry in SUMMARY["cases"].items():
        if "error" in entry or entry["held_out"]:
            continue
        m, n, _ = entry["shape"]
        rows = gemm_cases.kept_rows(m, n)[:1]
        key = (tuple(entry["shape"]), entry["digest_inputs"])  # drawn once per shape and formats
        if key not in inputs:
            inputs[key] = compare_gemm.case_inputs(entry, SEED)
        a, w = inputs[key]
        settings = {}
        if entry["family"] == "scaled_mm":
            sa, sb = gemm_cases.scales(entry, SEED)
            settings = dict(scale_a=sa if sa.ndim == 0 else sa[rows],
                            scale_b=sb if sb.ndim == 0 else sb[:, cols])
        d = gemm(np.ascontiguousarray(a[rows]), np.ascontiguousarray(w[cols].T),
                 numerics=compare_gemm.numerics(entry), **settings)
        if not np.array_equal(format_bits(d, compare_gemm.out_format(entry)),
                              ARRAYS[name][:1, cols]):
            missed.append(name)
    assert not missed


def test_mxfp8_gemm_takes_what_simprec_quantize_gives():
    # Small integers, MXFP8-quantized along K by simprec.quantize (uint8 e4m3 elements, uint8 E8M0
    # scales): every dequantized value is the integer itself and every sum is exact in fp32, so
    # the block-scaled GEMM must give the integer product exactly (int64 oracle). B is quantized
    # as B.T, blocks along K, its scales transposed to (K / 32, N).
    import simprec
    rng = np.random.default_rng(9)
    # Blocks of K scaled differently (so are their E8M0 scales): a scale applied to another block,
    # row or column changes the sum.
    x = rng.integers(-8, 9, (3, 96)) * np.repeat([1, 4, 2], 32) * np.array([[1], [2], [1]])
    w = rng.integers(-8, 9, (96, 5)) * np.repeat([4, 1, 2], 32)[:, None] * np.array([1, 1, 2, 1, 1])
    qa = simprec.quantize(x.astype(np.float32), "mxfp8_e4m3")
    qb = simprec.quantize(np.ascontiguousarray(w.T).astype(np.float32), "mxfp8_e4m3")
    assert qa["scales"].dtype == np.uint8 and qa["scales"].shape == (3, 3)
    assert len(np.unique(qa["scales"])) > 1 and len(np.unique(qb["scales"])) > 1
    d = gemm(qa["elements"], np.ascontiguousarray(qb["elements"].T), numerics="mxfp8-e4m3,out=fp32",
             block_scale_a=qa["scales"], block_scale_b=np.ascontiguousarray(qb["scales"].T))
    np.testing.assert_array_equal(d, (x @ w).astype(np.float32))
    with pytest.raises(ValueError, match=r"block_scale_b \(5, 3\): expected \(3, 5\)"):
        gemm(qa["elements"], np.ascontiguousarray(qb["elements"].T), numerics="mxfp8-e4m3",
             block_scale_a=qa["scales"], block_scale_b=qb["scales"])
