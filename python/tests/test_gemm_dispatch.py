"""The split-K pieces of cuBLAS GEMMs recorded on an H200 with their launch grids
(tests/data/gemm/dispatch and the grids added to tests/data/gemm): the expected bits are the
GPU's. With the piece length the launch ran, simprec.gemm reproduces the output; with the one
split_k=cublas-sm90 predicts, where the two differ, it does not."""

import os

import numpy as np
import pytest

from simprec.gemm import split_k_length
from simprec.recordings import compare_gemm, gemm_cases, gemm_dispatch_cases

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "gemm")
DISPATCH, DISPATCH_ARRAYS = compare_gemm.load(os.path.join(ROOT, "dispatch"))
MAIN, MAIN_ARRAYS = compare_gemm.load(ROOT)


def kept(summary, arrays, name, rows_kept):
    entry = summary["cases"][name]
    m, n, _ = entry["shape"]
    rows = gemm_cases.kept_rows(m, n, summary["outputs_kept"])[:rows_kept]
    return entry, rows, arrays[name][:len(rows)]


def predicted_length(entry):
    m, n, k = entry["shape"]
    return split_k_length(compare_gemm.numerics(entry, compare_gemm.rule_split(entry)), m, n, k)


# Held-out shapes of the sweep where cuBLAS launched other pieces than cublas-sm90 predicts.
@pytest.mark.parametrize("name,launched,length,predicted", [
    ("matmul.fp16.on.32x64x24576", 19, 1344, 1408),
    ("matmul.fp16.on.128x256x32768", 14, 2368, 2752),
    ("matmul.fp16.on.96x96x24576", 17, 1472, 1408),
    ("scaled_mm.e4m3-e4m3.tensor.bf16.fast.384x128x24576", 5, 4992, 6144),
])
def test_the_launched_pieces_reproduce_the_output(name, launched, length, predicted):
    entry, rows, want = kept(DISPATCH, DISPATCH_ARRAYS, name, 4)
    assert entry["held_out"]
    assert compare_gemm.launched_pieces(entry) == launched
    assert compare_gemm.launched_length(entry) == length
    assert predicted_length(entry) == predicted
    got = compare_gemm.emulate(entry, DISPATCH["seed"], "model", rows)
    np.testing.assert_array_equal(got.reshape(want.shape), want)
    # The same model with the predicted pieces misses: the pieces are what the output rests on.
    missed = compare_gemm.emulate(entry, DISPATCH["seed"], "model", rows,
                                  f",split_k=length:{predicted}")
    assert not np.array_equal(missed.reshape(want.shape), want)


def test_the_held_out_miss_of_the_first_recording_ran_the_pieces_its_grid_shows():
    # fp16 192x192x24576 ran 11 pieces (a 64x64 tile, no cluster: 9 slots, a grid of 99).
    entry, rows, want = kept(MAIN, MAIN_ARRAYS, "matmul.fp16.on.192x192x24576", 1)
    assert compare_gemm.launched_pieces(entry) == 11
    got = compare_gemm.emulate(entry, MAIN["seed"], "model", rows)
    np.testing.assert_array_equal(got.reshape(want.shape), want)


def test_launched_pieces_count_whole_clusters_of_output_tiles():
    # 96x96 on a 32x64 tile with 4x2 clusters: 3 x 2 tiles take 4 x 2 slots; 16 CTAs, 2 pieces.
    entry = DISPATCH["cases"]["scaled_mm.e4m3-e4m3.tensor.bf16.fast.96x96x6144"]
    assert compare_gemm._output_slots(entry) == 8
    assert compare_gemm.launched_pieces(entry) == 2


def test_a_grid_that_is_not_whole_pieces_is_refused():
    entry = dict(DISPATCH["cases"]["scaled_mm.e4m3-e4m3.tensor.bf16.fast.96x96x6144"])
    name, _, block = entry["launches"][0]
    entry["launches"] = [[name, [7, 2, 1], block], *entry["launches"][1:]]
    with pytest.raises(compare_gemm.RecordingError, match="not a whole number of pieces"):
        compare_gemm.launched_pieces(entry)


def test_the_sweep_holds_every_case_once_with_its_held_out_flag():
    cases = gemm_dispatch_cases.cases()
    assert sorted(c["name"] for c in cases) == sorted(DISPATCH["cases"])
    assert all(DISPATCH["cases"][c["name"]]["held_out"] == c["held_out"] for c in cases)
    assert all(e["run_to_run"] == 1.0 for e in DISPATCH["cases"].values())
