"""The progress line of long calls (issue 33): on stderr, only where stderr is a terminal, only
after 2 s, erased when the call ends, and off with --quiet or simprec.set_progress(False). The
command line and the package are run as a user runs them, with stderr on a pseudo-terminal."""

import os
import pty
import subprocess
import sys
import threading

import pytest

from conftest import CLI

# An attention problem that takes well over the 2 s delay on one thread (7.5 s of CPU on the
# development machine, most of it the fp64 reference), so that the line shows on a faster one.
SHAPE = "4,3,1024,64"
LONG_ATTENTION = ["attention", "--generate", "normal", "--shape", SHAPE, "--seed", "3",
                  "--threads", "1", "--no-baseline"]
PYTHON_LONG_ATTENTION = (
    "import simprec, sys\n"
    "{setup}\n"
    "g = simprec.generate('normal', ({shape}), seed=3)\n"
    "r = simprec.attention(g['q'], g['k'], g['v'], threads=1, baseline=False)\n"
    "print('done', r.o.shape)\n").replace("{shape}", SHAPE)


def run_with_terminal_stderr(argv, env=None):
    """Runs argv with stderr on a pseudo-terminal and stdout on a pipe: (exit status, stdout,
    what reached the terminal)."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=terminal, env=env)
    os.close(terminal)
    shown = []

    def drain():  # the terminal's buffer is small: read while the program runs
        while True:
            try:
                data = os.read(controller, 4096)
            except OSError:  # EIO: the program closed its end
                return
            if not data:
                return
            shown.append(data)

    reader = threading.Thread(target=drain)
    reader.start()
    stdout, _ = process.communicate(timeout=600)
    reader.join(timeout=60)
    os.close(controller)
    return process.returncode, stdout.decode(), b"".join(shown).decode(errors="replace")


def python_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return env


@pytest.fixture
def cli_path():
    if not CLI:
        pytest.fail("SIMPREC_CLI must name the built simprec executable (ctest sets it)")
    return CLI


def test_the_command_line_shows_progress_on_a_terminal(cli_path, tmp_path):
    status, stdout, shown = run_with_terminal_stderr(
        [cli_path, *LONG_ATTENTION, "--out", str(tmp_path / "a")])
    assert status == 0, shown
    assert "simprec attention: emulation" in shown or "simprec attention: fp64 reference" in shown
    assert shown.rstrip().endswith("\r\x1b[K"), repr(shown[-200:])  # erased at the end
    # stdout, the report, is the same as without a terminal.
    piped = subprocess.run([cli_path, *LONG_ATTENTION, "--out", str(tmp_path / "b")],
                           capture_output=True, text=True)
    assert piped.returncode == 0
    assert piped.stderr == ""
    assert stdout.replace(str(tmp_path / "a"), "OUT") == piped.stdout.replace(
        str(tmp_path / "b"), "OUT")


def test_quiet_shows_nothing_on_a_terminal(cli_path, tmp_path):
    status, _, shown = run_with_terminal_stderr(
        [cli_path, *LONG_ATTENTION, "--quiet", "--out", str(tmp_path / "a")])
    assert status == 0, shown
    assert shown == ""


def test_a_short_call_shows_nothing_on_a_terminal(cli_path, tmp_path):
    status, _, shown = run_with_terminal_stderr(
        [cli_path, "attention", "--generate", "normal", "--shape", "1,1,16,8",
         "--out", str(tmp_path / "a")])
    assert status == 0, shown
    assert shown == ""


def test_the_package_shows_progress_on_a_terminal():
    code = PYTHON_LONG_ATTENTION.replace("{setup}", "")
    status, stdout, shown = run_with_terminal_stderr([sys.executable, "-c", code], python_env())
    assert status == 0, shown
    assert stdout.startswith("done"), stdout
    assert "simprec: emulation" in shown or "simprec: fp64 reference" in shown, repr(shown)
    assert shown.rstrip().endswith("\r\x1b[K"), repr(shown[-200:])


def test_set_progress_false_turns_it_off():
    code = PYTHON_LONG_ATTENTION.replace("{setup}", "simprec.set_progress(False)")
    status, stdout, shown = run_with_terminal_stderr([sys.executable, "-c", code], python_env())
    assert status == 0, shown
    assert stdout.startswith("done"), stdout
    assert shown == ""
