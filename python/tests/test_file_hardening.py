"""Files under hostile input from Python (issue 32): a .npy header of 40 KB crashed the
interpreter (signal 11 in the header parser), and out="" was not refused as empty. Each call runs
in a child interpreter, so that a crash fails the test instead of ending the suite."""

import os
import struct
import subprocess
import sys
import textwrap

import numpy as np


def run_child(code, cwd):
    # The child runs in `cwd`: a relative PYTHONPATH is made absolute for it.
    path = os.pathsep.join(os.path.abspath(p)
                           for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd,
                       capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PYTHONPATH=path))
    assert r.returncode == 0, f"exit {r.returncode}: {r.stderr[-2000:]}"
    return r.stdout


def write_long_header_npy(path, shape):
    header = ("{'descr':" + " " * 40000 + "'<f4', 'fortran_order': False, 'shape': "
              + repr(tuple(shape)) + ", }").encode()
    header += b" " * ((64 - (12 + len(header) + 1) % 64) % 64) + b"\n"
    data = np.full(shape, 0.25, dtype=np.float32).tobytes()
    path.write_bytes(b"\x93NUMPY\x02\x00" + struct.pack("<I", len(header)) + header + data)


def test_long_npy_header_is_read_not_crashed_on(tmp_path):
    for name in "qkv":
        write_long_header_npy(tmp_path / f"{name}.npy", (1, 1, 16, 8))
    (tmp_path / "e.toml").write_text('[inputs.f]\nq = "q.npy"\nk = "k.npy"\nv = "v.npy"\n'
                                     '[implementations.x]\npreset = "fa2"\n')
    out = run_child("""
        import simprec
        print(simprec.run_experiment("e.toml", check=True)["cases"])
    """, tmp_path)
    assert out.strip() == "1"


def test_empty_out_is_refused_naming_it(tmp_path):
    (tmp_path / "g.toml").write_text('[inputs.g]\ngenerator = "normal"\nshape = [1, 1, 8, 8]\n'
                                     'backward = false\n[implementations.x]\npreset = "fa2"\n'
                                     'tile = "8x8"\n')
    out = run_child("""
        import simprec
        try:
            simprec.run_experiment("g.toml", out="")
            print("ran")
        except ValueError as e:
            print("ValueError:", e)
    """, tmp_path)
    assert "ValueError: out '' is empty (expected a file or folder name)" in out
    assert sorted(os.listdir(tmp_path)) == ["g.toml"]


def test_results_folder_links_are_not_written_through(tmp_path):
    (tmp_path / "g.toml").write_text('[inputs.g]\ngenerator = "normal"\nshape = [1, 1, 8, 8]\n'
                                     'backward = false\n[implementations.x]\npreset = "fa2"\n'
                                     'tile = "8x8"\n')
    target = tmp_path / "target.txt"
    target.write_text("precious\n")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "run.lock").symlink_to(target)
    out = run_child("""
        import simprec
        try:
            simprec.run_experiment("g.toml", out="out", force=True)
            print("ran")
        except RuntimeError as e:
            print("RuntimeError:", e)
    """, tmp_path)
    assert "run.lock: cannot open: it is a symbolic link" in out
    assert target.read_text() == "precious\n"
