"""The recorded linear layers (tests/data/linear) against simprec.gemm, bit by bit.

    PYTHONPATH=build/python python3 scripts/compare_linear_recordings.py [DATA] [--only S]
        [--markdown]

For every recorded F.linear case it draws x, W, the bias and dY again (linear_cases; checked
against the recorded digest) and emulates the three GEMMs PyTorch ran, each with cuBLAS's preset
for the dtype (docs/gemm.md) and, where its kernel split K, the piece length the launch ran (its
recorded grid):

    y  = x · Wᵀ + b   (M x N, K summed; the bias in the kernel's epilogue: nvjet ..._bias_...)
    dX = dY · W       (M x K, N summed)
    dW = dYᵀ · x      (N x K, M summed)

and the bias's gradient as the sum of dY's rows in fp32, rounded to nearest even (PyTorch's
reduce_kernel sums in another order: not an emulation). It prints the share of the stored elements equal bit for bit.
"""

import argparse
import os

import numpy as np

from simprec.recordings import linear_cases
from simprec.recordings.bits import format_bits, format_values, sha256, share_equal
from simprec.recordings.compare_gemm import RecordingError, piece_length, pieces_of_launch
from simprec.recordings.compare_gemm import load as load_recording
from simprec.recordings.table import percent, render

DATA = os.path.join("tests", "data", "linear")


def load(data):
    """(summary, arrays) of a linear-layer recording folder."""
    return load_recording(data, "linear.npz", "linear-layer")


def _gemm_launch(launches, layout):
    """The launch of the GEMM kernel whose layout suffix (TNT, NNT, NT?) is `layout`'s."""
    for name, grid, _ in launches:
        if "nvjet" in name and name.rsplit("_", 1)[-1].startswith(layout):
            return name, grid
    raise RecordingError(f"no nvjet kernel with layout {layout} among "
                         f"{[name[:60] for name, _, _ in launches]}")


def split_length(launch, rows, cols, k):
    """The elements of K per piece the launch ran (None without split-K), for a rows x cols
    output (compare_gemm.pieces_of_launch, piece_length)."""
    name, grid = launch
    if "splitK" not in name:
        return None
    return piece_length(k, pieces_of_launch(name, grid, rows, cols), 2)


def emulate(entry, seed):
    """{output: emulated bits of the stored rows} for a case."""
    import simprec
    from simprec.gemm import gemm
    fmt = entry["dtype"]
    m, k, n = entry["shape"]
    x_bits, w_bits, b_bits, dy_bits = linear_cases.operands(seed, entry)
    inputs = [x_bits, w_bits, dy_bits] + ([] if b_bits is None else [b_bits])
    if sha256(*inputs) != entry["digest_inputs"]:
        raise RecordingError(f"{entry['shape']}: the inputs drawn again differ from the recorded")
    x, w, dy = (format_values(b, fmt) for b in (x_bits, w_bits, dy_bits))
    spec = f"cublas-{fmt}"

    def run(a, b, rows, cols, kk, launch, bias=None):
        length = split_length(launch, rows, cols, kk)
        numerics = spec + ("" if length is None else f",split_k=length:{length}")
        return gemm(np.ascontiguousarray(a), np.ascontiguousarray(b), numerics=numerics,
                    bias=bias)

    forward = _gemm_launch(entry["launches_forward"], "TN")
    grad_input = _gemm_launch(entry["launches_backward"], "NN")
    grad_weight = _gemm_launch(entry["launches_backward"], "NT")
    ry, rx, rw = (linear_cases.kept_rows(m, n), linear_cases.kept_rows(m, k),
                  linear_cases.kept_rows(n, k))
    bias = None if b_bits is None else format_values(b_bits, fmt)
    out = {
        "y": format_bits(run(x[ry], w.T, m, n, k, forward, bias), fmt),
        "dx": format_bits(run(dy[rx], w, m, k, n, grad_input), fmt),
        "dw": format_bits(run(dy.T[rw], x, n, k, m, grad_weight), fmt),
    }
    if b_bits is not None:
        out["db"] = format_bits(simprec.round(dy.sum(axis=0, dtype=np.float32), fmt), fmt)
    return out


def compare(data, only=""):
    summary, arrays = load(data)
    results = []
    for name, entry in summary["cases"].items():
        if only not in name or "error" in entry:
            continue
        got = emulate(entry, summary["seed"])
        shares = {o: share_equal(bits.reshape(arrays[f"{name}.{o}"].shape),
                                 arrays[f"{name}.{o}"], entry["dtype"])
                  for o, bits in got.items()}
        results.append({"name": name, "entry": entry, "shares": shares})
        print(f"{name}: " + ", ".join(f"{o} {percent(s)}" for o, s in shares.items()), flush=True)
    return results


def table(results, markdown):
    head = ["dtype", "bias", "M×K×N", "set", "y %", "dX %", "dW %", "db % (not emulated)"]
    rows = []
    for r in results:
        e, s = r["entry"], r["shares"]
        rows.append([e["dtype"], "yes" if e["bias"] else "no", "×".join(map(str, e["shape"])),
                     "held out" if e["held_out"] else "fit", percent(s["y"]), percent(s["dx"]),
                     percent(s["dw"]), percent(s["db"]) if "db" in s else "-"])
    return render(head, rows, markdown)


def main(argv=None, repository="."):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data", nargs="?", default=os.path.join(repository, DATA))
    parser.add_argument("--only", default="", help="the cases whose name holds this")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    try:
        results = compare(args.data, args.only)
    except RecordingError as error:
        raise SystemExit(f"compare_linear: {error}")
    if not results:
        raise SystemExit(f"compare_linear: no recorded case holds {args.only!r}")
    print("\n".join(table(results, args.markdown)))
    return 0
