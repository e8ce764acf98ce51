"""The example that finds where a model layer's rounding bias comes from runs and reports."""

import os
import subprocess
import sys

from conftest import SOURCE_DIR


def test_bias_of_a_model_layer_example_runs():
    script = SOURCE_DIR / "examples" / "python" / "bias_of_a_model_layer.py"
    r = subprocess.run([sys.executable, str(script), "--seq", "64", "--batch", "4", "--width",
                        "32", "--target", "dv"], capture_output=True, text=True,
                       env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    assert "error against the fp64 reference" in r.stdout
    for name in ("o", "dq", "dk", "dv", "delta"):
        assert f"\n  {name:5} rms " in r.stdout
    assert "pv_acc" in r.stdout or "p_cast" in r.stdout  # sites of the trace and attribution
