"""examples/python/paper_a_training.py: its measures against independent computations, and its
quick variant, killed and resumed, against an uninterrupted run."""

import json
import math
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
import torch

import simprec
from conftest import SOURCE_DIR
from paper_training.measures import delta_analysis, repeated_maxima, weight_distances
from paper_training.plots import plot_grid
from paper_training.verdict import (drift_line, mean_interval, paper_b_line, rms_ratio_interval,
                                    sign_test)

SCRIPT = SOURCE_DIR / "examples" / "python" / "paper_a_training.py"


class _Result:
    def __init__(self, delta, dq):
        self.delta, self.dq = delta, dq


def _torch_attention_gradients(q, k, v, do, scale):
    """O and dQ of causal attention by torch's autograd in fp64: an oracle that shares nothing
    with the analysis' hand-written backward."""
    tq, tk, tv = (torch.from_numpy(a).requires_grad_(True) for a in (q, k, v))
    n = q.shape[-2]
    s = (tq @ tk.transpose(-1, -2)) * scale
    mask = torch.ones(n, n, dtype=torch.bool).triu(1)
    o = torch.softmax(s.masked_fill(mask, float("-inf")), dim=-1) @ tv
    o.backward(torch.from_numpy(do))
    return o.detach().numpy(), tq.grad.numpy()


def test_delta_analysis_finds_no_error_in_the_fp64_emulation():
    g = simprec.generate("normal", (2, 3, 32, 8), seed=3, backward=True)
    q, k, v, do = (g[n] for n in ("q", "k", "v", "do"))
    x = np.random.default_rng(1).standard_normal((2, 32, 12))
    r = simprec.attention(q, k, v, do, numerics="fp64", format="fp64", causal=True,
                          reference=False, baseline=False)
    m = delta_analysis(q, k, v, do, r, x, 8 ** -0.5)
    for name in ("delta_error", "rank1_error", "rank1_error_from_delta"):
        assert np.max(np.abs(m[name])) < 1e-12, name


def test_rank1_error_is_minus_scale_times_the_delta_error_sum_along_x_and_pk():
    # Every token's layer input is a and every key row is c, so P K = c for any P and
    # R = sum_T x_T (P K)_T^T = (tokens) a c^T: rank 1, u1 = a/|a|, v1 = c/|c|. A delta error
    # eps then gives the dW_Q error -scale sum(eps) a c^T, whose component is
    # -scale sum(eps) |a| |c| (paper A, Sec. 3).
    rng = np.random.default_rng(7)
    b, h, n, d, width, scale = 2, 2, 16, 4, 6, 0.5
    q, v, do = (rng.standard_normal((b, h, n, d)) for _ in range(3))
    c = rng.standard_normal(d)
    k = np.broadcast_to(c, (b, h, n, d)).copy()
    a = rng.standard_normal(width)
    x = np.broadcast_to(a, (b, n, width)).copy()
    o, dq = _torch_attention_gradients(q, k, v, do, scale)
    eps = rng.standard_normal((b, h, n)) * 1e-3
    delta = np.einsum("bhqd,bhqd->bhq", do, o) + eps
    m = delta_analysis(q, k, v, do, _Result(delta, dq), x, scale)
    expected = -scale * eps.sum(axis=(0, 2)) * np.linalg.norm(a) * np.linalg.norm(c)
    assert np.allclose(m["delta_error"], eps.sum(axis=(0, 2)), rtol=0, atol=1e-12)
    assert np.allclose(m["rank1_error_from_delta"], expected, rtol=1e-9, atol=0)
    assert np.max(np.abs(m["rank1_error"])) < 1e-12  # dQ is torch's exact gradient


def test_repeated_maxima_of_a_hand_made_case():
    # q = 1, d = 1: row i's scores are k_0..k_i. Row 1 ties exactly (1, 1; keys of byte 5);
    # row 3's max 2 + 2^-12 ties with 2 only once rounded to bf16 (bytes 6 and 7); row 0 has one
    # key and is not counted.
    q = np.ones((1, 1, 4, 1))
    k = np.array([1.0, 1.0, 2.0, 2.0 + 2.0 ** -12]).reshape(1, 1, 4, 1)
    tokens = np.array([[5, 5, 6, 7]])
    m = repeated_maxima(q, k, tokens, "bf16", key_block=2)
    assert m["repeat_exact"].tolist() == [1 / 3]
    assert m["repeat_rounded"].tolist() == [2 / 3]
    assert m["repeat_rounded_same_token"].tolist() == [1 / 3]
    # (row, block) pairs with a key: 1 + 1 + 2 + 2. Two keys at the running max: block 0 of
    # rows 1, 2, 3 (1, 1 with max 1 so far) and block 1 of row 3 (2, 2 in bf16).
    assert m["repeat_block"].tolist() == [4 / 6]


def test_weight_distances_are_max_abs_difference_and_wasserstein_1():
    assert weight_distances(np.array([0.0, 1, 2]), np.array([1.0, 2, 3])) == (1.0, 1.0)
    # The same values in another order: the distributions agree, the weights do not.
    assert weight_distances(np.array([3.0, 1, 2]), np.array([1.0, 2, 3])) == (2.0, 0.0)
    with pytest.raises(ValueError, match="parameters"):
        weight_distances(np.zeros(2), np.zeros(3))


def _run(out, *extra, script=SCRIPT):
    r = subprocess.run([sys.executable, str(script), "--quick", "--out", str(out), *extra],
                       capture_output=True, text=True, env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_quick_training_killed_and_resumed_gives_the_uninterrupted_results(tmp_path):
    whole, resumed = tmp_path / "whole", tmp_path / "resumed"
    _run(whole)
    # Stopped after 5 steps of the first run: its last checkpoint is at step 3.
    assert "stopped after 5 steps" in _run(resumed, "--stop-after", "5")
    assert not (resumed / "results.json").exists()
    assert "paper-a: step 3 of 8" in _run(resumed)
    assert (whole / "results.json").read_bytes() == (resumed / "results.json").read_bytes()

    results = json.loads((whole / "results.json").read_text())
    assert set(results) == {"paper-a", "paper-a+beta-rowmax:2", "fp32", "flash-lp-fp16-s0",
                            "baseline-lp-fp16-s0"}

    def largest_delta_error(run):
        return max(abs(e) for rec in results[run]["records"] for layer in rec["layers"]
                   for e in layer["delta_error"])

    # fp32 rounds with 2^-24, bf16 with 2^-8: the fp32 run's delta errors are orders smaller.
    assert 0 < largest_delta_error("fp32") < 1e-3 * largest_delta_error("paper-a")
    report = (whole / "report.md").read_text()
    for heading in ("## Loss", "## Paper A: the delta error", "## Repeated maxima",
                    "rank-1 direction", "## Paper B, Sec. V"):
        assert heading in report
    for plot in ("loss", "delta_drift", "repeated_maxima", "rank1", "paper_b"):
        assert (whole / f"{plot}.png").stat().st_size > 1000
    # The report ends in its verdict; every line of it states its confidence.
    verdict = report.split("\n## ")[-1]
    assert verdict.startswith("Verdict\n"), verdict[:200]
    lines = [line for line in verdict.splitlines() if line.startswith("- ")]
    # The loss, a drift line per analysed run of the quick variant, their sizes, paper B.
    assert len(lines) == 1 + 3 + 1 + 1, lines
    for line in lines:
        assert ("Confidence:" in line or "95% interval" in line
                or "95% percentile bootstrap" in line), line


def test_bad_arguments_are_refused_with_the_value_and_what_was_expected(tmp_path):
    for args, message in ((["--steps", "0"], "--steps 0: expected an integer in [1, 100000]"),
                          (["--only", "nope"], "--only: unknown runs ['nope']")):
        r = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--out", str(tmp_path),
                            *args], capture_output=True, text=True, env=dict(os.environ))
        assert r.returncode == 2 and message in r.stderr, r.stderr


def test_mean_interval_is_students_t_across_the_entries():
    # 1..5: mean 3, standard error sqrt(2.5 / 5); t(0.975, 4 degrees of freedom) = 2.7764451.
    mean, low, high, z = mean_interval([1.0, 2.0, 3.0, 4.0, 5.0])
    half = 2.7764451 * math.sqrt(0.5)
    assert mean == 3.0 and z == pytest.approx(3 / math.sqrt(0.5), rel=1e-12)
    assert (low, high) == (pytest.approx(3 - half, rel=1e-7), pytest.approx(3 + half, rel=1e-7))


def test_sign_test_is_the_two_sided_binomial_test():
    # 9 of 10 positive: p = 2 (C(10,9) + C(10,10)) / 2^10 = 22 / 1024; zeros are left out.
    assert sign_test([1.0] * 9 + [-1.0, 0.0]) == (9, 10, 22 / 1024)
    assert sign_test([0.0, 0.0]) == (0, 0, 1.0)


def test_rms_ratio_interval_of_a_scaled_copy_is_the_scale():
    reference = np.random.default_rng(3).standard_normal((40, 2, 4))
    point, low, high = rms_ratio_interval(2 * reference, reference)
    assert point == pytest.approx(2) and low == pytest.approx(2) and high == pytest.approx(2)
    point, low, high = rms_ratio_interval(
        reference + 0.5 * np.random.default_rng(4).standard_normal((40, 2, 4)), reference)
    assert low < point < high and high - low > 0.05


def _states(name, delta_errors):
    """A run whose per-step delta errors are `delta_errors` (steps, layers, heads)."""
    records = [{"layers": [{"delta_error": list(layer)} for layer in step]}
               for step in delta_errors]
    return {name: {"records": records}}


def test_the_drift_verdict_finds_a_drift_and_not_noise():
    class Run:
        name = "r"

    rng = np.random.default_rng(5)
    noise = rng.standard_normal((200, 2, 4)) * 1e-5
    # A mean of 1e-5 per step and head against noise of 1e-5: z about 28 over 200 steps.
    assert "**r: a drift of consistent sign**" in drift_line(Run, _states("r", noise + 1e-5))
    line = drift_line(Run, _states("r", noise))
    assert "**r: no drift of consistent sign detected**" in line
    assert "95% interval" in line and "sign test p = " in line and "is excluded at 95%" in line


def test_the_paper_b_verdict_reads_the_factor_against_two_to_five():
    # W1's factor inside 2-5 at every snapshot of both seeds (medians 2.2 and 2.5); max |dw|'s
    # under 2 (medians 1.2 and 1.5) except one snapshot of seed 1.
    line = paper_b_line({"0": {"W1": {10: 2.0, 20: 2.2, 30: 3.0},
                               "max |dw|": {10: 1.0, 20: 1.2, 30: 1.3}},
                         "1": {"W1": {10: 2.5, 20: 2.5, 30: 4.0},
                               "max |dw|": {10: 1.5, 20: 1.5, 30: 2.5}}})
    assert ("for W1 it holds by the median factor over the snapshots (2.20 for seed 0, 2.50 for "
            "seed 1); the factor goes from 2 at step 10 to 3 at step 30 (seed 0) and from 2.5 "
            "at step 10 to 4 at step 30 (seed 1);") in line, line
    assert ("for max |dw| it does not hold (under 2x) by the median factor over the snapshots "
            "(1.20 for seed 0, 1.50 for seed 1); the factor goes from 1 at step 10 to 1.3 at "
            "step 30 (seed 0) and from 1.5 at step 10 to 2.5 at step 30 (seed 1), on both sides "
            "of 2-5 during the run, so the reading depends on the step.") in line, line
    assert "2 seeds are the only independent replicates" in line


def test_the_cumulative_panels_share_one_labelled_scale(tmp_path):
    class Run:
        def __init__(self, name):
            self.name = name

    states = {**_states("bf16", np.full((20, 2, 4), 1e-5)),
              **_states("fp32", np.full((20, 2, 4), 1e-10))}
    label, limits = plot_grid(tmp_path / "grid.png", [Run("bf16"), Run("fp32")], states,
                              "delta_error", "cumulative delta error", "nats", pooled=True)
    # One scale for all six panels, so that fp32's errors, 1e5 times smaller, look flat; the
    # unit in the label, in the power of ten of the largest sum: 20 steps x 8 heads x 1e-5.
    assert len(limits) == 6 and len(set(limits)) == 1, limits
    assert label == "cumulative delta error (1e-3 nats)", label
    assert (tmp_path / "grid.png").stat().st_size > 1000


FP8_SCRIPT = SOURCE_DIR / "examples" / "python" / "fp8_training.py"


def _run_fp8(out, *extra):
    return _run(out, "--fp8-format", "e4m3", "--only", "fp8-e4m3-promoted", *extra,
                script=FP8_SCRIPT)


def test_fp8_training_killed_and_resumed_keeps_its_scaling_state(tmp_path):
    whole, resumed = tmp_path / "whole", tmp_path / "resumed"
    _run_fp8(whole)
    # The fp32 run (first) is taken finished; the FP8 run stops after 5 steps: its checkpoint
    # at step 3 holds the amax histories and scales the next steps quantize with.
    shutil.copytree(whole / "runs" / "fp32", resumed / "runs" / "fp32")
    assert "stopped after 5 steps" in _run_fp8(resumed, "--stop-after", "5")
    assert "fp8-e4m3-promoted: step 3 of 8" in _run_fp8(resumed)
    assert (whole / "results.json").read_bytes() == (resumed / "results.json").read_bytes()
    checkpoint = torch.load(whole / "runs" / "fp8-e4m3-promoted" / "checkpoint.pt")
    scales = checkpoint["linear"]["blocks.0.qkv.weight"]
    assert set(scales) == {"input", "weight", "grad_output"}
    assert all(s["quantizations"] == 8 and s["scale"] != 1.0 for s in scales.values())
    report = (whole / "report.md").read_text()
    verdict = report.split("\n## ")[-1]
    assert verdict.startswith("Verdict\n")
    assert "**fp8-e4m3-promoted: loss" in verdict and "95% interval" in verdict
    assert (whole / "loss.png").stat().st_size > 1000
