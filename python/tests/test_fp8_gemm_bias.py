"""examples/python/fp8_gemm_bias.py: its reference (the float64 product of e4m3 values) is exact,
as its docstring argues, and its quick variant writes the report."""

import os
import subprocess
import sys
from fractions import Fraction

import numpy as np

import simprec
from conftest import SOURCE_DIR

SCRIPT = SOURCE_DIR / "examples" / "python" / "fp8_gemm_bias.py"


def test_the_float64_reference_is_the_exact_sum_of_e4m3_products():
    # The extremes: 448 x 448 products beside 2^-9 x 2^-9 ones, K = 16384 (the study's largest),
    # and random e4m3 values; each sum against exact rationals.
    rng = np.random.default_rng(0)
    k = 16384
    values = simprec.decode(np.arange(256, dtype=np.uint8), "e4m3fn")
    finite = values[np.isfinite(values)]
    a = rng.choice(finite, size=(2, k))
    b = rng.choice(finite, size=(k, 1))
    a[0, :k // 2], b[:k // 2, 0] = 448.0, 448.0
    a[0, k // 2:], b[k // 2:, 0] = 2.0 ** -9, -(2.0 ** -9)
    got = a @ b
    for row in range(2):
        exact = sum(Fraction(float(x)) * Fraction(float(y)) for x, y in zip(a[row], b[:, 0]))
        assert Fraction(float(got[row, 0])) == exact


def test_quick_study_writes_its_report(tmp_path):
    r = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--out", str(tmp_path)],
                       capture_output=True, text=True, env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    report = (tmp_path / "report.md").read_text()
    for heading in ("## centred inputs", "## positive inputs"):
        assert heading in report
    assert "| 1024 |" in report and (tmp_path / "bias.png").stat().st_size > 1000
