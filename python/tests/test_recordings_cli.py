"""The command lines of simprec.recordings: the comparisons on a small subset of the real
recordings (tests/data; the expected shares are the recordings' documented agreement,
docs/torch_kernels.md and docs/python.md, and their recorded run-to-run agreement), their
errors for bad input, the entry points in scripts/, and the tools on crafted files."""

import hashlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import SOURCE_DIR
from simprec.recordings import compare_torch, compare_triton, extract_held_out, npy_bits
from simprec.recordings.triton_example import TRITON_FLASH_FORWARD_SPEC

DATA = SOURCE_DIR / "tests" / "data"
ALL = "100.000"


def test_compare_torch_prints_the_table(capsys, tmp_path):
    out = tmp_path / "results.json"
    assert compare_torch.main(["--kernel", "flash", "--numerics", "torch-flash",
                               "--shapes", "b1h1_n128_d64", "--data",
                               str(DATA / "torch_kernels"), "--json", str(out)]) == 0
    captured = capsys.readouterr()
    # The shape's batch_heads (B * H = 1) and the recording's 132 SMs join the spec.
    assert captured.out.splitlines() == [
        "kernel flash, numerics torch-flash (per shape: torch-flash,batch_heads=1,sms=132 with "
        "that shape's batch_heads)",
        "shape          BxH  SqxSk    d   causal  inputs  O %      LSE %    dQ %     dK %     "
        "dV %     O digest  grad digests  run-to-run O/dQ/dK/dV %        ",
        f"b1h1_n128_d64  1x1  128x128  64  no      normal  {ALL}  {ALL}  {ALL}  {ALL}  {ALL}  "
        f"yes       yyy           {ALL}/{ALL}/{ALL}/{ALL}",
        f"lowest share over the shapes: o {ALL}%, lse {ALL}%, dq {ALL}%, dk {ALL}%, dv {ALL}%; "
        "whole-head O digest equal on 1/1 shapes",
    ]
    assert captured.err == f"# b1h1_n128_d64: o={ALL} lse={ALL} dq={ALL} dk={ALL} dv={ALL}\n"
    [saved] = json.loads(out.read_text())
    assert saved["dims"] == [1, 1, 128, 128, 64, False, "normal"]
    assert saved["spec"] == "torch-flash,batch_heads=1,sms=132"


def test_compare_torch_in_markdown_with_the_recorded_lse(capsys):
    # b2h2_n512_d96_lowrank, efficient: every element identical (docs/torch_kernels.md); the
    # recorded run-to-run agreement of dQ is the summary's.
    summary = json.loads((DATA / "torch_kernels" / "summary_sdpa.json").read_text())
    run = summary["shapes"]["b1h1_n128_d64"]["kernels"]["efficient"]["run_to_run_agreement"]
    assert run == {"o": 1.0, "lse": 1.0, "dq": 1.0, "dk": 1.0, "dv": 1.0}
    compare_torch.main(["--kernel", "efficient", "--numerics", "torch-efficient,batch_heads=1",
                        "--shapes", "b1h1_n128_d64", "--data", str(DATA / "torch_kernels"),
                        "--markdown", "--recorded-lse"])
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    # batch_heads set by the spec itself is not added again; sms is.
    assert lines[0] == ("kernel efficient, numerics torch-efficient,batch_heads=1 (per shape: "
                        "torch-efficient,batch_heads=1,sms=132 with that shape's batch_heads)")
    assert lines[1].endswith("| run-to-run O/dQ/dK/dV % | from recorded LSE dQ/dK/dV % |")
    assert lines[3] == (f"| b1h1_n128_d64 | 1x1 | 128x128 | 64 | no | normal | {ALL} | {ALL} | "
                        f"{ALL} | {ALL} | {ALL} | yes | yyy | {ALL}/{ALL}/{ALL}/{ALL} | "
                        f"{ALL}/{ALL}/{ALL} |")
    assert lines[4:] == ["", f"lowest share over the shapes: o {ALL}%, lse {ALL}%, dq {ALL}%, "
                             f"dk {ALL}%, dv {ALL}%; whole-head O digest equal on 1/1 shapes"]
    assert captured.err == ""  # markdown: no progress lines


@pytest.mark.parametrize("arguments, message", [
    (["--data", "/nonexistent/recording"], "/nonexistent/recording: no such recording folder"),
    (["--shapes", "b1h1_n128_d64,nope"], "unknown shape 'nope' (recorded: b1h1_n128_d64, "),
    # The flash backend refused this shape on the H100: no recording.
    (["--shapes", "b1h1_q256_k1024_d128_causal"],
     "b1h1_q256_k1024_d128_causal: no recording of kernel flash"),
])
def test_compare_torch_says_what_is_wrong(arguments, message):
    with pytest.raises(SystemExit) as exit:
        compare_torch.main(["--kernel", "flash", "--numerics", "torch-flash", "--data",
                            str(DATA / "torch_kernels"), *arguments])
    assert str(exit.value.code).startswith(message)


def test_compare_triton_prints_a_line_per_case(capsys):
    compare_triton.main(["--cases", "n256_d64_causal", "--data", str(DATA / "triton_example")])
    assert capsys.readouterr().out.splitlines() == [
        f"numerics: {TRITON_FLASH_FORWARD_SPEC}",
        f"n256_d64_causal          O {ALL}%  LSE {ALL}%",
    ]
    with pytest.raises(SystemExit, match="unknown case 'n9'"):
        compare_triton.main(["--cases", "n9"])
    with pytest.raises(SystemExit, match="nowhere/n256_d64.npz: no recording of case n256_d64"):
        compare_triton.main(["--cases", "n256_d64", "--data", "/nowhere"])


def test_entry_point_reads_the_repository_recordings_from_anywhere(tmp_path):
    # scripts/compare_triton_example.py run from another folder finds tests/data of its
    # checkout, with the package on PYTHONPATH and no path edits.
    path = os.pathsep.join(os.path.abspath(p) for p in os.environ["PYTHONPATH"].split(os.pathsep))
    r = subprocess.run([sys.executable, str(SOURCE_DIR / "scripts" / "compare_triton_example.py"),
                        "--cases", "n256_d64", "--numerics", "fa2,tile=64x64"],
                       capture_output=True, text=True, cwd=tmp_path,
                       env=dict(os.environ, PYTHONPATH=path))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "numerics: fa2,tile=64x64"
    # The earlier description misses the LSE on most rows (docs/findings.md: 20.1-56.6%).
    assert lines[1].startswith("n256_d64                 O ") and f"LSE {ALL}%" not in lines[1]


def test_npy_bits_compare(tmp_path, capsys):
    a = np.array([0x3F80, 0x3F81, 0x0001, 0x7FC0, 0x1234], dtype=np.uint16)
    b = np.array([0x3F80, 0x3F83, 0x8001, 0x7FC0, 0x1234], dtype=np.uint16)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    npy_bits.main([str(tmp_path / "a.npy"), str(tmp_path / "b.npy")])
    # 0x3F81 against 0x3F83: 2 ulps; +tiny against -tiny: 2; the NaN is not compared.
    assert capsys.readouterr().out == ("2/5 identical (40.00%), max ulp diff 2 "
                                       "(1 elements NaN on either side, not compared)\n")
    np.save(tmp_path / "short.npy", a[:3])
    with pytest.raises(SystemExit, match=r"holds \(5,\) elements, .*short.npy \(3,\)"):
        npy_bits.main([str(tmp_path / "a.npy"), str(tmp_path / "short.npy")])
    np.save(tmp_path / "float.npy", a.astype(np.float32))
    with pytest.raises(SystemExit, match="float32 elements, expected uint16"):
        npy_bits.main([str(tmp_path / "float.npy"), str(tmp_path / "a.npy")])


def test_extract_held_out_keeps_one_head(tmp_path):
    rng = np.random.default_rng(3)
    first = rng.integers(0, 2**16, (2, 4, 8, 2), dtype=np.uint16)
    second = first.copy()
    second[1, 3, 0, 0] ^= 1  # one of the kept head's 16 elements differs between the runs
    second[0, 0] ^= 1  # another head: not the kept one
    np.savez(tmp_path / "capture_flex.npz", **{"flex.normal.causal0.run0.O": first,
                                               "flex.normal.causal0.run1.O": second})
    np.savez(tmp_path / "capture_sdpa.npz", **{"sdpa.normal.causal1.run0.dQ": first,
                                               "sdpa.normal.causal1.run1.dQ": first})
    assert extract_held_out.main([str(tmp_path), str(tmp_path / "out")]) == 0
    z = np.load(tmp_path / "out" / "held_out.npz")
    assert tuple(z["head"]) == (1, 3)
    np.testing.assert_array_equal(z["flex.normal.causal0.O"], first[1, 3])
    assert float(z["flex.normal.causal0.O.run_to_run"]) == 15 / 16
    assert float(z["sdpa.normal.causal1.dQ.run_to_run"]) == 1.0
    assert str(z["sdpa.normal.causal1.dQ.sha256"]) == hashlib.sha256(first.tobytes()).hexdigest()
    with pytest.raises(SystemExit, match="capture_flex.npz: missing"):
        extract_held_out.main([str(tmp_path / "out"), str(tmp_path / "again")])
