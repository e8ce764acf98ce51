"""The package as installed: its version is the project's, `python -m simprec` is the tool that
SIMPREC_CLI names, it is marked as typed, and (SIMPREC_INSTALLED_PREFIX, set by
scripts/package_check.sh) the copy imported is the installed one, not a build tree's."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import simprec
from conftest import CLI, SOURCE_DIR


def test_version_is_the_projects():
    # Read from CMakeLists.txt here, not through CMake: the text pyproject.toml's regex reads.
    text = (SOURCE_DIR / "CMakeLists.txt").read_text()
    project = re.search(r"project\(simprec VERSION ([0-9.]+)", text).group(1)
    assert simprec.__version__ == project


def test_python_m_simprec_is_the_tool(cli):
    # python -m simprec hands its arguments to the tool unchanged, and its exit status back.
    module = subprocess.run([sys.executable, "-m", "simprec", "--version"], capture_output=True,
                            text=True)
    assert module.returncode == 0, module.stderr
    assert module.stdout == cli("--version") == f"simprec {simprec.__version__}\n"
    wrong = [subprocess.run(command + ["no-such-command"], capture_output=True, text=True)
             for command in ([sys.executable, "-m", "simprec"], [CLI])]
    assert wrong[0].returncode == wrong[1].returncode == 2
    assert wrong[0].stderr == wrong[1].stderr != ""


def test_marked_typed():
    assert (Path(simprec.__file__).parent / "py.typed").is_file()


def test_imported_copy_is_the_installed_one():
    prefix = os.environ.get("SIMPREC_INSTALLED_PREFIX")
    if prefix is None:
        pytest.skip("SIMPREC_INSTALLED_PREFIX unset: the build tree's copy is the one tested")
    package = Path(simprec.__file__).resolve().parent
    assert Path(prefix).resolve() in package.parents, f"{package} is not under {prefix}"
    assert Path(CLI).resolve().parent == Path(prefix).resolve() / "bin"


def test_tool_finds_its_plugins_and_runner():
    # The built-in plugins beside the tool, found with no SIMPREC_PLUGIN_PATH, and a kernel of
    # one run out of process by the runner beside the tool.
    env = {k: v for k, v in os.environ.items()
           if k not in ("SIMPREC_PLUGIN_PATH", "SIMPREC_PLUGIN_RUNNER")}
    listing = subprocess.run([CLI, "plugins", "list"], capture_output=True, text=True, env=env)
    assert listing.returncode == 0, listing.stderr
    assert re.search(r"^plugin\b.*cpu_reference", listing.stdout, re.M), listing.stdout
    run = subprocess.run([CLI, "validate", "--plugin", "cpu_reference", "--kernel", "gemm_f32",
                          "--seed", "1"], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    assert "result PASS bit-exact as claimed" in run.stdout
