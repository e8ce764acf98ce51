"""The recorded GEMMs (tests/data/gemm) against the emulation, bit by bit.

    PYTHONPATH=build/python python3 scripts/compare_gemm_recordings.py [DATA]
        [--emulation baseline|model|both] [--only SUBSTRING] [--grouped] [--whole] [--markdown]

For every recorded case it draws the inputs again (gemm_cases; checked against the recorded
digest), emulates the stored output rows and prints the share of outputs equal bit for bit, per
case (library, dtype, scaling, fast accumulation, shape, set) and the lowest share per set; with
--grouped, one row per setting with the lowest share over its fitting and its held-out shapes;
with --whole, every output row is emulated and the whole output's recorded digest checked.

Two emulations:
  baseline  simprec.matmul as it was before the GEMM model: the wgmma model chained over the whole
            of K, the scales' product applied exactly and the result rounded once (nearest even)
            into the output format.
  model     simprec.gemm with the GEMM preset of the case's settings (docs/gemm.md; numerics()):
            cuBLAS's matmul presets, _scaled_mm's (FP8 promoted every 128 elements of K unless
            fast accumulation is on, tensor-wise scales as fl(scale_a * scale_b), row-wise ones
            scale_b first, then scale_a); where the recorded kernel split K, split_k=length:L
            with the pieces its launch ran (its recorded grid), or, for a recording without
            grids, split_k=cublas-sm90 with the kernel's tile and cluster.

--split-rule compares no outputs: it prints how often cublas-sm90's piece length equals the
one each recorded split-K launch ran.

Cases with one e5m2 operand (e5m2 x e4m3) run the mixed wgmma model, tc:sm90-wgmma-e5m2-e4m3.
"""

import argparse
import json
import math
import os
import re

import numpy as np

from simprec.recordings import gemm_cases
from simprec.recordings.bits import format_bits, sha256, share_equal
from simprec.recordings.table import percent, render

DATA = os.path.join("tests", "data", "gemm")
_NVJET = re.compile(r"nvjet_sm90_[a-z]+_(\d+)x(\d+)_\d+x\d+_(\d+)x(\d+)_")


class RecordingError(Exception):
    """A recording that is missing or does not fit the cases drawn again here."""


def load(data, arrays_file="gemm.npz", what="GEMM"):
    """(summary, arrays) of a recording folder: summary.json and the arrays of arrays_file."""
    try:
        with open(os.path.join(data, "summary.json")) as f:
            summary = json.load(f)
        arrays = dict(np.load(os.path.join(data, arrays_file)))
    except (OSError, ValueError) as error:
        raise RecordingError(f"{data}: not a {what} recording ({error})") from error
    for entry in summary.get("cases", {}).values():
        if "launches" in entry:  # the kernels' names in launch order, grids beside them
            entry["kernels"] = [name for name, _, _ in entry["launches"]]
    return summary, arrays


def _kernel_tile_and_cluster(kernel):
    """(tile_n, tile_m, cluster_n, cluster_m) of an nvjet kernel, read off its name
    (nvjet_sm90_..._TNxTM_..._CxC_...: cuBLAS's m is the output's N, as PyTorch passes row-major
    operands)."""
    match = _NVJET.search(kernel)
    if not match:
        raise RecordingError(f"kernel {kernel!r}: splits K but its tile cannot be read")
    return tuple(int(x) for x in match.groups())


def _tile_and_cluster(entry):
    """_kernel_tile_and_cluster of a recorded case's kernel."""
    return _kernel_tile_and_cluster(entry["kernels"][0])


def output_slots(kernel, rows, cols):
    """The thread blocks one piece of K takes in a launch of `kernel` for a rows x cols output:
    the output tiles, each dimension rounded up to whole clusters (a cluster launches whole,
    tiles past the output included)."""
    tile_n, tile_m, c1, c2 = _kernel_tile_and_cluster(kernel)
    return (math.ceil(math.ceil(cols / tile_n) / c1) * c1) * (
        math.ceil(math.ceil(rows / tile_m) / c2) * c2)


def pieces_of_launch(kernel, grid, rows, cols):
    """The pieces of K a launch of `kernel` with `grid` ran for a rows x cols output: its thread
    blocks over the output slots."""
    ctas, slots = grid[0] * grid[1] * grid[2], output_slots(kernel, rows, cols)
    if ctas % slots:
        raise RecordingError(f"{kernel[:60]}: a grid of {ctas} thread blocks is not a whole "
                             f"number of pieces of {slots} output slots")
    return ctas // slots


def piece_length(k, pieces, element_bytes):
    """The elements of K per piece when K is cut into `pieces`: whole 128-byte K tiles, as even as
    the pieces allow (the last piece shorter)."""
    tile = 128 // element_bytes
    return math.ceil(k / pieces / tile) * tile


def _output_slots(entry):
    """output_slots of a recorded case."""
    m, n, _ = entry["shape"]
    return output_slots(entry["kernels"][0], m, n)


def launched_pieces(entry):
    """The pieces of K the recorded launch ran (pieces_of_launch of its first kernel)."""
    name, grid, _ = entry["launches"][0]
    m, n, _ = entry["shape"]
    return pieces_of_launch(name, grid, m, n)


def launched_length(entry):
    """The elements of K per piece of the recorded launch (piece_length)."""
    k = entry["shape"][2]
    return piece_length(k, launched_pieces(entry), 2 if entry["family"] == "matmul" else 1)


def rule_split(entry):
    """",split_k=cublas-sm90,tile=MxN,cluster=C,problem=MxN" for a recorded split-K kernel (its
    tile and cluster read off its name; problem: the whole GEMM, since only some rows of it may
    be emulated)."""
    tile_n, tile_m, c1, c2 = _tile_and_cluster(entry)
    m, n, _ = entry["shape"]
    return f",split_k=cublas-sm90,tile={tile_m}x{tile_n},cluster={c1 * c2},problem={m}x{n}"


def kernel_split(entry):
    """The split_k items of a recorded case: none where its kernel did not split K, the length
    its launch ran where the recording has the grid, else cublas-sm90's rule (rule_split)."""
    if "splitK" not in entry["kernels"][0]:
        return ""
    if "launches" in entry:
        return f",split_k=length:{launched_length(entry)}"
    return rule_split(entry)


def numerics(entry, split=None):
    """The GEMM numerics spec (docs/gemm.md) of a recorded case: the preset of its settings,
    the output format where it is not the preset's, and the split_k items `split` (default: the
    kernel's, kernel_split)."""
    fmt = out_format(entry)
    if entry["family"] == "matmul":
        spec = "cublaslt-fp16-sm80" if instruction(entry) == "mma" else f"cublas-{entry['dtype']}"
    else:
        a_format, b_format = entry["a_format"], entry["b_format"]
        spec = "scaled-mm-" + (a_format if a_format == b_format else f"{a_format}-{b_format}")
        spec += ("-rowwise" if entry["scaling"] == "row" else "") + (
            "-fast" if entry["fast_accum"] else "")
        spec += "" if fmt == "bf16" else f",out={fmt}"
    return spec + (kernel_split(entry) if split is None else split)


def split_k_length(entry):
    """The elements of K per piece when the recorded kernel split K (None when it did not), as
    the model runs it (kernel_split)."""
    from simprec.gemm import split_k_length as length
    if not kernel_split(entry):
        return None
    m, n, k = entry["shape"]
    return length(numerics(entry), m, n, k)


def instruction(entry):
    """The tensor-core instruction the recorded kernel runs: mma (mma.sync) for the sm80 kernels
    cuBLASLt also dispatches on sm_90 (named ..._tensor16x8x16_...), else wgmma."""
    return "mma" if entry["kernels"][0].startswith("sm80_") else "wgmma"


def case_inputs(entry, seed):
    """A (M x K) and W (N x K) encodings of a case, checked against the recorded digest."""
    fa = entry.get("dtype") or entry["a_format"]
    fb = entry.get("dtype") or entry["b_format"]
    a = gemm_cases.operand_bits(seed, tuple(entry["shape"]), "a", fa)
    w = gemm_cases.operand_bits(seed, tuple(entry["shape"]), "w", fb)
    if sha256(a, w) != entry["digest_inputs"]:
        raise RecordingError(f"{entry['shape']}: the inputs drawn again differ from the "
                             "recorded ones (another numpy stream or seed?)")
    return a, w


def out_format(entry):
    return entry.get("dtype") or entry["out_dtype"]


def emulate(entry, seed, emulation, rows, split=None):
    """The emulated output rows `rows` as bit patterns (uint16 bf16/fp16, uint32 fp32); the
    model with the split_k items `split` (default: the kernel's, kernel_split)."""
    import simprec
    from simprec.gemm import gemm
    a, w = case_inputs(entry, seed)
    a, b = np.ascontiguousarray(a[rows]), np.ascontiguousarray(w.T)
    fmt = out_format(entry)
    if entry["family"] == "matmul":
        model = f"tc:sm90-{instruction(entry)}-{entry['dtype']}"
        settings = {}
    else:
        a_format, b_format = entry["a_format"], entry["b_format"]
        model = f"tc:sm90-wgmma-{a_format}" + ("" if a_format == b_format else f"-{b_format}")
        sa, sb = gemm_cases.scales(entry, seed)
        sa = sa if sa.ndim == 0 else sa[rows]
        settings = {"scale_a": sa, "scale_b": sb}
    if emulation == "baseline":
        d = simprec.matmul(a, b, model=model).astype(np.float64)
        if settings:
            d = d * np.asarray(settings["scale_a"], np.float64) * np.asarray(
                settings["scale_b"], np.float64)
        values = d.astype(np.float32) if fmt == "fp32" else simprec.round(d, fmt)
    else:
        values = gemm(a, b, numerics=numerics(entry, split), **settings)
    return format_bits(values, fmt)


def library(entry):
    """Which library the recorded kernels come from, by their names."""
    names = " ".join(entry["kernels"])
    if "nvjet" in names or "cublas" in names.lower() or "xmma" in names:
        return "cuBLASLt"
    return "CUTLASS" if "cutlass" in names.lower() else "other"


def compare(data, emulation, only="", whole=False):
    """One result dict per recorded case whose name holds `only`. whole=True emulates every
    output row, not only the stored ones, and checks the whole output's recorded digest
    ("whole": True or False; None without whole, or where no model applies)."""
    summary, arrays = load(data)
    results = []
    for name, entry in summary["cases"].items():
        if only not in name or "error" in entry:
            continue
        if name not in arrays:
            raise RecordingError(f"{name}: in summary.json but not in gemm.npz")
        m, n, _ = entry["shape"]
        kept = gemm_cases.kept_rows(m, n, summary.get("outputs_kept", gemm_cases.OUTPUTS_KEPT))
        rows = np.arange(m) if whole else kept
        bits = emulate(entry, summary["seed"], emulation, rows)
        share = equal = None
        if bits is not None:
            share = share_equal(bits[kept] if whole else bits, arrays[name], out_format(entry))
            equal = sha256(bits) == entry["digest_output"] if whole else None
        results.append({"name": name, "entry": entry, "share": share, "whole": equal,
                        "split_k": split_k_length(entry) if emulation == "model" else None})
        print(f"{name}: {percent(share)}" +
              ("" if equal is None else f", whole output {'equal' if equal else 'differs'}"),
              flush=True)
    return results


def settings_cells(entry):
    """(library, dtype, scaling, fast accumulation, out) cells of a case."""
    if entry["family"] == "matmul":
        dtype, scaling, fast = entry["dtype"], f"none (flag {entry['reduction']})", "-"
    else:
        dtype = f"{entry['a_format']}×{entry['b_format']}"
        scaling = entry["scaling"] + "-wise"
        fast = "yes" if entry["fast_accum"] else "no"
    return [library(entry), dtype, scaling, fast, out_format(entry)]


def lowest(shares):
    """The lowest share, "n/a" when no case has a model, "-" when there is no case."""
    if not shares:
        return "-"
    known = [s for s in shares if s is not None]
    return percent(min(known)) if known else "n/a"


def grouped_table(by_emulation, markdown):
    """One row per setting (every cell but the shape): the lowest share of each emulation over
    the fitting and the held-out shapes."""
    head = ["library", "dtype", "scaling", "fast acc.", "out", "cases fit/held out"]
    for emulation in by_emulation:
        head += [f"{emulation} fit %", f"{emulation} held out %"]
    groups = {}
    for emulation, results in by_emulation.items():
        for r in results:
            key = tuple(settings_cells(r["entry"]))
            group = groups.setdefault(key, {})
            group.setdefault((emulation, r["entry"]["held_out"]), []).append(r["share"])
    rows = []
    for key, group in groups.items():
        first = next(iter(by_emulation))
        counts = f"{len(group.get((first, False), []))}/{len(group.get((first, True), []))}"
        cells = list(key) + [counts]
        for emulation in by_emulation:
            cells += [lowest(group.get((emulation, False), [])),
                      lowest(group.get((emulation, True), []))]
        rows.append(cells)
    return render(head, rows, markdown)


def table(results, markdown):
    head = ["library", "dtype", "scaling", "fast acc.", "out", "M×N×K", "split-K", "set",
            "bits equal %", "whole output"]
    rows = []
    for r in results:
        e = r["entry"]
        whole = {None: "-", True: "equal", False: "differs"}[r["whole"]]
        rows.append(settings_cells(e) + ["×".join(str(x) for x in e["shape"]),
                                         str(r["split_k"] or "-"),
                                         "held out" if e["held_out"] else "fit",
                                         percent(r["share"]), whole])
    lines = render(head, rows, markdown)
    for held_out in (False, True):
        shares = [r["share"] for r in results
                  if r["entry"]["held_out"] == held_out and r["share"] is not None]
        if shares:
            lines.append(("\n" if markdown else "") +
                         f"{'held-out' if held_out else 'fitting'} set: lowest "
                         f"{percent(min(shares))}%, {sum(s == 1.0 for s in shares)}/"
                         f"{len(shares)} cases at 100%")
    return lines


def split_rule_table(data, markdown):
    """How often cublas-sm90's piece length equals the one each recorded split-K launch ran, per
    family and set."""
    from simprec.gemm import split_k_length as length
    summary, _ = load(data)
    counts = {}
    for entry in summary["cases"].values():
        if "error" in entry or "launches" not in entry or "splitK" not in entry["kernels"][0]:
            continue
        m, n, k = entry["shape"]
        spec = numerics(entry, rule_split(entry))
        dtype = entry.get("dtype") or f"{entry['a_format']}×{entry['b_format']}"
        key = (entry["family"], dtype, "held out" if entry["held_out"] else "fit")
        hit, total = counts.get(key, (0, 0))
        counts[key] = (hit + (length(spec, m, n, k) == launched_length(entry)), total + 1)
    rows = [list(key) + [f"{hit}/{total}"] for key, (hit, total) in sorted(counts.items())]
    return render(["family", "dtype", "set", "rule = launched piece length"], rows, markdown)


def main(argv=None, repository="."):
    """The command line (scripts/compare_gemm_recordings.py); DATA defaults to tests/data/gemm
    under `repository`."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data", nargs="?", default=os.path.join(repository, DATA))
    parser.add_argument("--emulation", choices=("baseline", "model", "both"), default="model")
    parser.add_argument("--only", default="", help="the cases whose name holds this")
    parser.add_argument("--grouped", action="store_true",
                        help="one row per setting: the lowest share over its shapes, per set "
                             "(with --emulation both, for both emulations)")
    parser.add_argument("--whole", action="store_true",
                        help="emulate every output row and check the whole output's recorded "
                             "digest too (slower: FP8 runs the reference path)")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--split-rule", action="store_true",
                        help="no emulation: how often split_k=cublas-sm90 gives the piece length "
                             "each recorded split-K launch ran")
    args = parser.parse_args(argv)
    if args.split_rule:
        try:
            print("\n".join(split_rule_table(args.data, args.markdown)))
        except RecordingError as error:
            raise SystemExit(f"compare_gemm: {error}")
        return 0
    emulations = ("baseline", "model") if args.emulation == "both" else (args.emulation,)
    try:
        by_emulation = {e: compare(args.data, e, args.only, args.whole) for e in emulations}
    except RecordingError as error:
        raise SystemExit(f"compare_gemm: {error}")
    if not by_emulation[emulations[0]]:
        raise SystemExit(f"compare_gemm: no recorded case holds {args.only!r}")
    if args.grouped:
        print("\n".join(grouped_table(by_emulation, args.markdown)))
    else:
        for emulation, results in by_emulation.items():
            print(f"\n{emulation}:")
            print("\n".join(table(results, args.markdown)))
    return 0
