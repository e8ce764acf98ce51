"""Hostile calls from Python: thread counts and seeds out of range are refused with a message that
names the argument (never pybind11's signature dump, never the OpenMP runtime ending the
interpreter), attention beyond the memory bound is refused before it starts as the CLI refuses
it, and Ctrl-C stops a long call within seconds instead of when it ends. The slow paths run in
child interpreters under time limits, so that a regression fails rather than hangs."""

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import simprec

Q = np.random.default_rng(0).standard_normal((2, 8, 4))


def _threads_calls(threads):
    return {
        "attention": lambda: simprec.attention(Q, Q, Q, threads=threads),
        "matmul": lambda: simprec.matmul(np.zeros((4, 4), np.float32),
                                         np.zeros((4, 4), np.float32), threads=threads),
        "round": lambda: simprec.round(np.zeros(3), "bf16", threads=threads),
    }


@pytest.mark.parametrize("threads", [100000, 1025, -1, 2**70])
def test_thread_counts_out_of_range_are_refused(threads):
    for name, call in _threads_calls(threads).items():
        with pytest.raises(ValueError) as e:
            call()
        assert str(e.value) == (f"threads={threads}: expected an integer from 0 (every core) "
                                "to 1024 threads"), name


@pytest.mark.parametrize("threads, type_name", [("x", "str"), (1.5, "float"), (True, "bool")])
def test_thread_counts_that_are_not_integers_are_refused(threads, type_name):
    for name, call in _threads_calls(threads).items():
        with pytest.raises(TypeError) as e:
            call()
        assert str(e.value) == (f"threads={threads!r}: expected an integer from 0 (every core) "
                                f"to 1024 threads, got {type_name}"), name


@pytest.mark.parametrize("seed", [-1, 2**64, 2**70])
def test_seeds_out_of_range_are_refused(seed):
    calls = {
        "attention": lambda: simprec.attention(Q, Q, Q, seed=seed),
        "round": lambda: simprec.round(np.zeros(3), "bf16", "sr", seed=seed),
        "add": lambda: simprec.add(np.zeros(3), np.zeros(3), "bf16", "sr", seed=seed),
        "generate": lambda: simprec.generate("normal", (1, 1, 4, 4), seed=seed),
    }
    for name, call in calls.items():
        with pytest.raises(ValueError) as e:
            call()
        assert str(e.value) == f"seed={seed}: expected an integer from 0 to 2**64 - 1", name


def test_a_seed_that_is_not_an_integer_is_refused():
    with pytest.raises(TypeError) as e:
        simprec.round(np.zeros(3), "bf16", "sr", seed="7")
    assert str(e.value) == "seed='7': expected an integer from 0 to 2**64 - 1, got str"


def test_numpy_integers_and_the_largest_values_are_accepted():
    r = simprec.round(np.full(3, 1 / 3), "bf16", "sr", seed=np.uint64(2**64 - 1),
                      threads=np.int32(1024))
    assert r.shape == (3,)


def test_attention_beyond_the_memory_bound_is_refused_before_it_starts():
    # The fp64 reference alone holds N x N doubles per head: 32 GiB at N = 65536.
    q = np.zeros((1, 65536, 8), np.float32)
    start = time.monotonic()
    with pytest.raises(MemoryError) as e:
        simprec.attention(q, q, q, max_memory="16G")
    assert time.monotonic() - start < 10
    message = str(e.value)
    assert message.startswith("attention on shape B=1 H=1 Nq=65536 Nk=65536 d=8 dv=8 needs an "
                              "estimated "), message
    assert "more than 16 GiB (max_memory='16G')" in message, message


def test_the_memory_bound_is_the_clis(cli, tmp_path):
    """The CLI and Python refuse the same problem with the same estimate."""
    q = np.zeros((1, 2, 4096, 64), np.float32)
    for name in "qkv":
        np.save(tmp_path / f"{name}.npy", q)
    # The threads given: a problem in flight on each, and the default may differ between the
    # two processes (torch, imported by other tests, sets the interpreter's).
    r = subprocess.run([os.environ["SIMPREC_CLI"], "attention", "--q", tmp_path / "q.npy",
                        "--k", tmp_path / "k.npy", "--v", tmp_path / "v.npy", "--threads", "2",
                        "--max-memory", "64M", "--out", tmp_path / "out"],
                       capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    cli_estimate = r.stderr.split("needs an estimated ")[1].split(" of memory")[0]
    with pytest.raises(MemoryError) as e:
        simprec.attention(q, q, q, threads=2, max_memory="64M")
    assert f"needs an estimated {cli_estimate} of memory, more than 64 MiB" in str(e.value)


def test_run_experiment_checks_the_memory_bound_of_simprec_run(tmp_path):
    experiment = tmp_path / "big.toml"
    experiment.write_text('name = "big"\n[inputs.a]\ngenerator = "normal"\n'
                          'shape = [1, 1, 4096, 64]\n[implementations.flash]\npreset = "fa2"\n')
    r = subprocess.run([os.environ["SIMPREC_CLI"], "run", experiment, "--check",
                        "--max-memory", "64M"], capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    cli_message = r.stderr.removeprefix("simprec: error: ").strip()
    assert " needs an estimated " in cli_message, cli_message
    for check in (True, False):
        with pytest.raises(MemoryError) as e:
            simprec.run_experiment(experiment, out=tmp_path / "out", check=check,
                                   max_memory="64M")
        assert str(e.value) == (cli_message.replace("--max-memory 64M", "max_memory='64M'") +
                                "; max_memory= sets the limit")
    assert not (tmp_path / "out").exists()


def test_max_memory_must_be_a_size():
    with pytest.raises(ValueError) as e:
        simprec.attention(Q, Q, Q, max_memory="lots")
    assert str(e.value).startswith("max_memory 'lots' is not a memory size"), str(e.value)


CTRL_C_CHILD = r"""
import numpy as np, simprec
# 400 heads one after the other on one thread, each a few tens of milliseconds in the
# site-by-site engine (p_cast=bf16:rtz keeps the float fast path out): tens of seconds in all.
q = np.random.default_rng(0).standard_normal((400, 256, 64)).astype(np.float32)
print("started", flush=True)
simprec.attention(q, q, q, numerics="fa2,p_cast=bf16:rtz", threads=1)
print("finished", flush=True)
"""


def test_ctrl_c_stops_a_long_attention_call():
    child = subprocess.Popen([sys.executable, "-c", CTRL_C_CHILD], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "started"
        time.sleep(1.0)  # well inside the call
        child.send_signal(signal.SIGINT)
        # Generous: the call stops at the next head, a fraction of a second; uninterrupted it
        # runs on for tens of seconds.
        out, err = child.communicate(timeout=20)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert "finished" not in out, "the call ran to its end: " + err
    assert child.returncode != 0
    assert "KeyboardInterrupt" in err, err


@pytest.mark.parametrize("call", [
    lambda huge: simprec.attention(Q, Q, Q, numerics="fa2," + huge),
    lambda huge: simprec.attention(Q, Q, Q, format=huge),
    lambda huge: simprec.canonical_numerics("fa2," + huge),
    lambda huge: simprec.matmul(np.zeros((4, 4), np.float32), np.zeros((4, 4), np.float32),
                                model=huge),
])
def test_a_huge_argument_is_quoted_in_part(call):
    # Each error quotes an excerpt of the text, and no message passes the bound the command-line
    # tool keeps (4096 bytes and the count of what was cut).
    with pytest.raises(ValueError) as e:
        call("x" * 120000)
    assert len(str(e.value)) < 5000
    assert "bytes" in str(e.value)
