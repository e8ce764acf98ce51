"""The examples that run a model through simprec: where a layer's rounding bias comes from, and a
small GPT with grouped-query attention, a sliding window and a soft-cap trained a few steps."""

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


def test_gqa_training_example_trains_and_reports(tmp_path):
    """Two steps of the GQA + window + soft-cap model through simprec.torch.flex_attention and
    with fp64 attention: both losses fall, and the report and results are written."""
    import json
    script = SOURCE_DIR / "examples" / "python" / "gqa_training.py"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SOURCE_DIR / "examples" / "python"),
                                         env.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, str(script), "--steps", "2", "--out", str(tmp_path)],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    results = json.loads((tmp_path / "results.json").read_text())
    for losses in results["loss"].values():
        assert len(losses) == 2 and losses[1] < losses[0]
    errors = results["first_step_relative_grad_error"].values()
    assert all(0 < e < 0.05 for e in errors)  # bf16 attention differs from fp64, a little
    assert "grouped-query attention" in (tmp_path / "report.md").read_text()
