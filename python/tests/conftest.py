"""Shared helpers of the Python tests: the command-line tool (SIMPREC_CLI, set by ctest) whose
outputs the package must reproduce bit for bit."""

import os
import subprocess
from pathlib import Path

import pytest

CLI = os.environ.get("SIMPREC_CLI")
SOURCE_DIR = Path(os.environ.get("SIMPREC_SOURCE_DIR", Path(__file__).resolve().parents[2]))


@pytest.fixture(scope="session")
def cli():
    """Runs `simprec ARGS` and returns its stdout; fails the test on a non-zero exit."""
    if not CLI or not Path(CLI).exists():
        raise RuntimeError("SIMPREC_CLI must name the built simprec executable (ctest sets it)")

    def run(*args, stdin=None, expect_exit=0):
        r = subprocess.run([CLI, *map(str, args)], input=stdin, capture_output=True, text=True)
        assert r.returncode == expect_exit, f"simprec {' '.join(map(str, args))}: {r.stderr}"
        return r.stdout
    return run
