"""simprec.recordings.layout and flex_compile on crafted recording folders and summaries: which
shapes are compared, which summary is read, what a head's file holds, and how torch.compile
compiled FlexAttention for each shape."""

import hashlib
import json

import numpy as np
import pytest

from conftest import SOURCE_DIR
from simprec.recordings import layout
from simprec.recordings.flex_compile import compiled_for_of
from simprec.recordings.layout import RecordingError


def entry(sq, sk, d, causal, kernels):
    return {"B": 1, "H": 2, "Sq": sq, "Sk": sk, "d": d, "causal": causal, "kind": "normal",
            "kernels": kernels}


OK = {"run_to_run_agreement": {"o": 1.0, "lse": 1.0, "dq": 0.5, "dk": 1.0, "dv": 1.0}}
FAILED = {"error": "RuntimeError: No available kernel"}
SUMMARY = {"multiprocessors": 132, "shapes": {
    "a": entry(128, 128, 64, False, {"flash": OK, "flex": FAILED}),
    "b": entry(256, 256, 64, False, {"flash": FAILED}),
    "c": entry(512, 512, 64, True, {"efficient": {}}),
}}


def test_select_shapes_takes_every_recording_of_the_kernel_or_those_named():
    assert layout.select_shapes(SUMMARY, "flash") == ["a"]
    assert layout.select_shapes(SUMMARY, "efficient") == ["c"]
    assert layout.select_shapes(SUMMARY, "flex") == []
    assert layout.select_shapes(SUMMARY, "flash", ["a"]) == ["a"]
    with pytest.raises(RecordingError, match="b: no recording of kernel flash"):
        layout.select_shapes(SUMMARY, "flash", ["a", "b"])
    with pytest.raises(RecordingError, match="c: no recording of kernel flash"):
        layout.select_shapes(SUMMARY, "flash", ["c"])
    with pytest.raises(RecordingError, match=r"unknown shape 'z' \(recorded: a, b, c\)"):
        layout.select_shapes(SUMMARY, "flash", ["z"])


def test_shape_of_and_run_to_run():
    assert layout.shape_of(SUMMARY, "c") == (1, 2, 512, 512, 64, True, "normal")
    assert layout.run_to_run(SUMMARY, "a", "flash") == {"o": 1.0, "lse": 1.0, "dq": 0.5,
                                                        "dk": 1.0, "dv": 1.0}
    assert layout.run_to_run(SUMMARY, "c", "efficient") == dict.fromkeys(
        ("o", "lse", "dq", "dk", "dv"))


def write_json(path, value):
    path.write_text(json.dumps(value))


def test_load_summary_reads_the_split_sweeps_by_kernel(tmp_path):
    write_json(tmp_path / "summary.json", {"which": "both"})
    assert layout.load_summary(str(tmp_path), "flex") == {"which": "both"}
    write_json(tmp_path / "summary_sdpa.json", {"which": "sdpa"})
    write_json(tmp_path / "summary_flex.json", {"which": "flex"})
    assert layout.load_summary(str(tmp_path), "flash") == {"which": "sdpa"}
    assert layout.load_summary(str(tmp_path), "efficient") == {"which": "sdpa"}
    assert layout.load_summary(str(tmp_path), "flex") == {"which": "flex"}


def test_a_folder_that_is_no_recording_is_named(tmp_path):
    missing = tmp_path / "nothing"
    with pytest.raises(RecordingError, match=f"{missing}: no such recording folder"):
        layout.load_summary(str(missing), "flash")
    with pytest.raises(RecordingError, match=f"{tmp_path}: no summary.json"):
        layout.load_summary(str(tmp_path), "flash")
    with pytest.raises(RecordingError, match=r"flash/a\.npz: missing"):
        layout.load_head(str(tmp_path), "flash", "a")


def test_kept_rows_sample_long_heads_only():
    np.testing.assert_array_equal(layout.kept_rows(100, 1), np.arange(100))
    rows = layout.kept_rows(1000, 1)
    assert rows.dtype == np.int64 and len(rows) == 128
    assert np.all(np.diff(rows) > 0) and rows[0] >= 0 and rows[-1] < 1000
    np.testing.assert_array_equal(rows, layout.kept_rows(1000, 1))  # fixed, not drawn anew
    assert not np.array_equal(rows, layout.kept_rows(1000, 2))  # the key rows are others


def test_write_head_keeps_the_sampled_rows_and_digests_the_whole_head(tmp_path):
    rng = np.random.default_rng(7)
    o, dq = (rng.integers(0, 2**16, (300, 4), dtype=np.uint16) for _ in range(2))
    dk, dv = (rng.integers(0, 2**16, (50, 4), dtype=np.uint16) for _ in range(2))
    lse = rng.standard_normal(300)
    layout.write_head(str(tmp_path), "flash", "s", o, lse, dq, dk, dv, "abc")
    z = layout.load_head(str(tmp_path), "flash", "s")
    rows = z["o_rows"]
    assert len(rows) == 128 and set(rows) <= set(range(300))
    np.testing.assert_array_equal(z["dq_rows"], rows)
    np.testing.assert_array_equal(z["k_rows"], np.arange(50))
    np.testing.assert_array_equal(z["o"], o[rows])
    np.testing.assert_array_equal(z["dq"], dq[rows])
    np.testing.assert_array_equal(z["dv"], dv)
    assert z["lse"].dtype == np.float32 and np.array_equal(z["lse"], lse.astype(np.float32))
    assert str(z["digest_o"]) == hashlib.sha256(o.tobytes()).hexdigest()
    assert str(z["digest_dk"]) == hashlib.sha256(dk.tobytes()).hexdigest()
    assert str(z["digest_inputs"]) == "abc"


def test_compiled_for_is_each_graphs_first_shape():
    # Plain torch.compile: each graph (one without a mask, one with the causal block mask) is
    # first compiled for the lengths of its first call.
    summary = {"shapes": {
        "only_flash": entry(64, 64, 32, False, {"flash": OK}),  # no FlexAttention call
        "first": entry(128, 128, 64, False, {"flex": OK}),
        "longer": entry(256, 256, 64, False, {"flex": OK}),
        "wider": entry(128, 128, 128, False, {"flex": OK}),
        "first_causal": entry(512, 512, 64, True, {"flex": OK}),
        "causal_again": entry(512, 512, 64, True, {"flex": OK}),
        "causal_shorter": entry(256, 256, 64, True, {"flex": OK}),
        "first_sizes_again": entry(128, 128, 64, False, {"flex": OK}),
    }}
    expected = {"first": "128x128x64", "longer": "128x128x64", "wider": "128x128x64",
                "first_causal": "512x512x64", "causal_again": "512x512x64",
                "causal_shorter": "512x512x64", "first_sizes_again": "128x128x64"}
    assert {n: compiled_for_of(summary, n) for n in expected} == expected
    # Compiled for each shape (--flex-compile static): each its own.
    static = dict(summary, flex_compile="static")
    assert {compiled_for_of(static, n) for n in expected} == {"auto"}


def test_compiled_for_of_the_main_recording():
    # tests/test_torch_flex.py: the two 128 x 128 shapes and the first causal one ran on the
    # shape their graph was compiled for, every other on a recompilation.
    data = SOURCE_DIR / "tests" / "data" / "torch_kernels"
    summary = json.loads((data / "summary_flex.json").read_text())
    first = set()
    for n, e in summary["shapes"].items():
        if compiled_for_of(summary, n) == f"{e['Sq']}x{e['Sk']}x{e['d']}":
            first.add(n)
    assert first == {"b1h1_n128_d64", "b2h2_n128_d64", "b1h1_n512_d64_causal"}
