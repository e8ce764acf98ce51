"""run_experiment: the same records, report and verdict as `simprec run` on the same file."""

import json

import pytest

import simprec

EXPERIMENT = """
name = "python_check"

[inputs.normal]
generator = "normal"
shape = [2, 1, 64, 16]
seed = 3

[implementations.flash]
preset = "flash-lp"

[implementations.standard]
preset = "baseline-lp"

[analysis]
baseline = "standard"

[sweep]
format = ["bf16", "fp16"]
"""


def records(folder):
    out = []
    for line in (folder / "results.jsonl").read_text().splitlines():
        out.append(without_seconds(json.loads(line)))
    return sorted(out, key=lambda r: json.dumps(r, sort_keys=True))


def without_seconds(value):
    """The record without its timings, which differ from run to run (and without the line's
    checksum, which covers them)."""
    if isinstance(value, dict):
        return {k: without_seconds(v) for k, v in value.items()
                if "seconds" not in k and k not in ("elapsed_s", "crc32")}
    if isinstance(value, list):
        return [without_seconds(v) for v in value]
    return value


def test_run_experiment_gives_the_cli_records(cli, tmp_path):
    spec = tmp_path / "exp.toml"
    spec.write_text(EXPERIMENT)
    cli("run", spec, "--out", tmp_path / "cli", "--quiet", "-j", 1)
    r = simprec.run_experiment(spec, out=tmp_path / "py", threads=2)
    assert (r["total"], r["ran"], r["failed"]) == (4, 4, 0)
    assert records(tmp_path / "py") == records(tmp_path / "cli")
    assert r["verdict"] and (tmp_path / "py" / "report.md").exists()
    again = simprec.run_experiment(spec, out=tmp_path / "py")
    assert (again["skipped"], again["ran"]) == (4, 0)  # resumed: nothing left to run
    assert simprec.run_experiment(spec, check=True)["cases"] == 4


def test_experiment_errors_give_file_line_and_column(tmp_path):
    spec = tmp_path / "bad.toml"
    spec.write_text(EXPERIMENT.replace('generator = "normal"', 'generatr = "normal"'))
    with pytest.raises(ValueError, match=r"bad.toml:\d+:\d+.*generatr"):
        simprec.run_experiment(spec, check=True)
