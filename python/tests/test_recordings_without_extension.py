"""The recorders run on a GPU machine where simprec's C++ extension may not import: every module
of simprec.recordings imports without it, and what needs it says so when called. Also the
recorder's pieces that run without a GPU."""

import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from simprec.recordings import record_torch

# Runs in a fresh interpreter where importing simprec._simprec fails (a None in sys.modules
# makes `import` raise ImportError), as on a machine it was not built for.
WITHOUT_EXTENSION = """
import importlib, pkgutil, sys
sys.modules["simprec._simprec"] = None
import simprec.recordings
for module in pkgutil.iter_modules(simprec.recordings.__path__):
    importlib.import_module("simprec.recordings." + module.name)
print("imported", len(list(pkgutil.iter_modules(simprec.recordings.__path__))))
try:
    simprec.attention(None, None, None)
except ImportError as error:
    print(error)
from simprec.recordings import record_held_out  # its inputs need the extension: it says so
try:
    record_held_out.main([sys.argv[1]])
except SystemExit as error:
    print(error)
"""


def test_every_recordings_module_imports_without_the_extension(tmp_path):
    r = subprocess.run([sys.executable, "-c", WITHOUT_EXTENSION, str(tmp_path / "out")],
                       capture_output=True, text=True, env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    imported, error, refused = r.stdout.splitlines()
    assert int(imported.split()[1]) >= 20
    assert error.startswith("simprec: attention needs the C++ extension simprec._simprec, "
                            "which did not import (")
    assert "build the target simprec_python" in error
    assert refused.startswith("record_held_out_attention: the inputs come from simprec's "
                              "generator, which needs the C++ extension; it did not import (")
    assert not (tmp_path / "out").exists()


def test_run_to_run_agreement_is_the_lowest_over_the_runs():
    first = (torch.zeros(2, 4, dtype=torch.bfloat16), torch.zeros(4, dtype=torch.float32),
             *(torch.ones(8, dtype=torch.bfloat16) for _ in range(3)))
    again = [tuple(t.clone() for t in first) for _ in range(2)]
    again[0][0][0, 0] = 1.0  # 1 of O's 8 elements
    again[1][0][1, :2] = -0.0  # 2 of O's elements: -0 is not +0's bits
    again[1][1][3] = 2.0  # 1 of the LSE's 4
    again[0][3][:4] = 2.0  # half of dK
    agreement = record_torch.run_to_run_agreement(first, again)
    assert agreement == pytest.approx({"o": 6 / 8, "lse": 3 / 4, "dq": 1.0, "dk": 0.5,
                                       "dv": 1.0})


def test_recorder_refuses_unknown_shapes(capsys):
    with pytest.raises(SystemExit):
        record_torch.parse_arguments(["out", "--shape-set", "held-out", "--shapes",
                                      "b4h8_n1536_d128,b1h1_n128_d64"])
    assert "unknown shapes ['b1h1_n128_d64'] in set held-out" in capsys.readouterr().err
    args = record_torch.parse_arguments(["out", "--shape-set", "held-out"])
    assert args.names[0] == "b4h8_n1536_d128" and len(args.names) == 8


class FakeKernel:
    """Stands in for the GPU kernels: fixed outputs of a [B, H, S, d] problem, the second call
    with one element of O changed."""

    def __init__(self, b, h, sq, sk, d):
        g = torch.Generator().manual_seed(11)
        self.outputs = (torch.randn(b, h, sq, d, generator=g).to(torch.bfloat16),
                        torch.randn(b, h, sq, generator=g),
                        *(torch.randn(b, h, n, d, generator=g).to(torch.bfloat16)
                          for n in (sq, sk, sk)))
        self.calls = 0

    def __call__(self, kernel, q, k, v, do, causal):
        self.calls += 1
        outputs = tuple(t.clone() for t in self.outputs)
        if self.calls == 2:
            outputs[0][0, 0, 0, 0] += 1
        return outputs

    def dispatch(self, kernel, inputs, causal):
        return ["the_kernel"]


NO_INPUTS = (None,) * 4  # q, k, v, dO: the fake kernel takes none


def bf16_bits_of(tensor):
    # bf16 -> float32 is exact: its bits are the bf16 bits followed by 16 zeros.
    return (tensor.float().numpy().view(np.uint32) >> 16).astype(np.uint16)


def test_record_kernel_keeps_the_last_head(tmp_path, monkeypatch):
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    shape = (2, 3, 200, 100, 4, False, "normal")
    run = FakeKernel(2, 3, 200, 100, 4)
    record = record_torch.record_kernel(run, "flash", "s", shape, NO_INPUTS, "inputs digest", 2,
                                        str(tmp_path))
    assert record["dispatch"] == ["the_kernel"] and record["seconds"] >= 0
    assert record["run_to_run_agreement"] == pytest.approx(
        {"o": 1 - 1 / (2 * 3 * 200 * 4), "lse": 1.0, "dq": 1.0, "dk": 1.0, "dv": 1.0})
    z = np.load(tmp_path / "flash" / "s.npz")
    o, lse, dq, dk, dv = (t[1, 2] for t in run.outputs)  # b = B-1, h = H-1
    assert len(z["o_rows"]) == 128 and len(z["k_rows"]) == 100
    np.testing.assert_array_equal(z["o"], bf16_bits_of(o)[z["o_rows"]])
    np.testing.assert_array_equal(z["dv"], bf16_bits_of(dv))
    np.testing.assert_array_equal(z["lse"], lse.numpy())
    assert str(z["digest_dq"]) == hashlib.sha256(bf16_bits_of(dq).tobytes()).hexdigest()
    assert str(z["digest_inputs"]) == "inputs digest"


def test_record_kernel_keeps_an_error_and_goes_on(tmp_path, capsys):
    def failing(*args):
        raise RuntimeError("No available kernel")
    record = record_torch.record_kernel(failing, "flash", "s", (1, 1, 8, 8, 4, True, "normal"),
                                        NO_INPUTS, "", 3, str(tmp_path))
    assert record == {"error": "RuntimeError: No available kernel"}
    assert "s flash: ERROR RuntimeError: No available kernel" in capsys.readouterr().out
    assert not (tmp_path / "flash").exists()
