#!/usr/bin/env python3
"""The Python package's overhead, each beside its C++ baseline measured in the same run:

1. emulated attention, B = H = 1, N = 1024, d = 64, preset fa2 (bf16), the same work both ways
   (emulation, fp64 reference, metrics, standard-attention baseline): `simprec attention` on
   .npy files (process start and file I/O included) against simprec.attention on the same
   arrays; target: at most 5% slower.
2. rounding 2^24 normally distributed float32 into bf16 (nearest-even and stochastic) on one
   thread: simprec.round(..., encode=True, threads=1) against the C++ bulk API as
   build/bin/rounding_bench measures it (encodings/bf16 rne and sr, mean time per call), into an array
   allocated once as the C++ benchmark does (also reported: with a new array per call);
   target: within 1.2x. Readings alternate between the two, medians of --rounds.

Usage: PYTHONPATH=build/python /usr/bin/python3 bench/python_bench.py [BUILD_DIR] [--rounds N]
"""

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

import simprec


def median_seconds(function, rounds):
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def attention_overhead(build, rounds):
    g = simprec.generate("normal", (1, 1, 1024, 64), seed=1)
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        for name in "qkv":
            np.save(folder / f"{name}.npy", g[name].astype(np.float32))
        command = [str(build / "bin" / "simprec"), "attention", "--preset", "fa2", "--threads",
                   "1", "--out", str(folder / "out")]
        for name in "qkv":
            command += [f"--{name}", str(folder / f"{name}.npy")]
        q, k, v = (np.load(folder / f"{name}.npy") for name in "qkv")
        cli_times, python_times = [], []
        for _ in range(rounds):  # alternating, so that load changes hit both alike
            start = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True)
            cli_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            simprec.attention(q, k, v, numerics="fa2", threads=1)
            python_times.append(time.perf_counter() - start)
    cli, python = statistics.median(cli_times), statistics.median(python_times)
    return {"case": "attention fa2 bf16 N=1024 d=64, one thread", "cli_ms": 1e3 * cli,
            "python_ms": 1e3 * python, "ratio": python / cli, "target": "<= 1.05"}


def cpp_round_seconds(build, case):
    """One reading of the C++ bulk API: rounding_bench's mean time per call of round_to_bits into
    encodings (its benchmark `encodings/CASE`). The JSON goes to a file: rounding_bench prints a
    table of its own after the benchmarks on stdout."""
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "rounding_bench.json"
        subprocess.run(
            [str(build / "bin" / "rounding_bench"), f"--benchmark_filter=^encodings/{case}/",
             f"--benchmark_out={report}", "--benchmark_out_format=json"], check=True,
            capture_output=True, text=True)
        runs = [b for b in json.loads(report.read_text())["benchmarks"]
                if b.get("run_type") == "iteration"]
    if not runs:
        raise SystemExit(f"rounding_bench has no benchmark encodings/{case}")
    run = runs[0]
    unit = {"ms": 1e-3, "us": 1e-6, "ns": 1e-9, "s": 1.0}
    return run["real_time"] * unit[run["time_unit"]]


def rounding_overhead(build, rounds):
    rng = np.random.default_rng(42)
    x = rng.normal(0.0, 4.0, size=1 << 24).astype(np.float32)
    out = np.empty(x.shape, dtype=np.uint16)
    rows = []
    for case, mode in (("bf16 rne", "rne"), ("bf16 sr", "sr")):
        cpp_times, python_times, python_new_times = [], [], []
        for _ in range(rounds):  # alternating, so that load changes hit both alike
            cpp_times.append(cpp_round_seconds(build, case))
            python_times.append(median_seconds(
                lambda: simprec.round(x, "bf16", mode, seed=1, encode=True, out=out, threads=1),
                5))
            python_new_times.append(median_seconds(
                lambda: simprec.round(x, "bf16", mode, seed=1, encode=True, threads=1), 5))
        cpp, python = statistics.median(cpp_times), statistics.median(python_times)
        rows.append({"case": f"round 2^24 float32 -> bf16 {mode}, one thread",
                     "cpp_ms": 1e3 * cpp, "python_ms": 1e3 * python,
                     "python_new_array_ms": 1e3 * statistics.median(python_new_times),
                     "ratio": python / cpp, "target": "<= 1.2"})
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("build", nargs="?", default="build")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    build = Path(args.build)
    print(json.dumps(attention_overhead(build, args.rounds)), flush=True)
    for row in rounding_overhead(build, args.rounds):
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
