"""Reads the JSON lines of flash_bench and scripts/torch_sdpa_bench.py (one run, one machine) and
prints a markdown table of TFLOP/s with the ratios the targets are stated in: simprec's forward
and forward+backward against PyTorch's flash backend, and each mitigation's cost against the
unmitigated kernel.

    PYTHONPATH=python python3 scripts/flash_bench_table.py bench.jsonl
"""

import argparse
import json

from simprec.recordings.table import render

HEAD = ["source", "kernel", "pass", "inputs", "mitigation", "ms", "TFLOP/s", "vs PyTorch flash",
        "vs unmitigated"]


def inputs(row):
    """The inputs a timing ran on: "uniform" random values, or "repeated-keys" (flash_bench
    --repeated-keys); PyTorch's lines and older flash_bench lines have none (uniform)."""
    return row.get("inputs", "uniform")


def bench_table(lines):
    """The markdown table's lines from the lines of a bench.jsonl (lines that are not JSON
    objects, and objects without a time, are passed over)."""
    rows = [json.loads(line) for line in lines if line.startswith("{")]
    rows = [r for r in rows if "ms" in r]
    torch = {(r["kernel"], r["pass"]): r for r in rows if r["source"] == "torch"}
    flash = {"forward": torch.get(("flash", "forward")),
             "forward+backward": torch.get(("flash", "forward+backward"))}
    plain = {(r["kernel"], inputs(r)): r for r in rows
             if r["source"] == "simprec" and r["mitigation"] == "none"}
    cells = []
    for r in rows:
        versus = flash.get(r["pass"])
        ratio = f"{versus['ms'] / r['ms']:.0%}" if versus and r["source"] == "simprec" else ""
        base = plain.get((r["kernel"], inputs(r)))
        cost = ""
        if r["source"] == "simprec" and r["mitigation"] != "none" and base:
            cost = f"{r['ms'] / base['ms'] - 1:+.1%}"
        cells.append([r["source"], r["kernel"], r["pass"], inputs(r), r["mitigation"],
                      f"{r['ms']:.3f}", f"{r['tflops']:.0f}", ratio, cost])
    return render(HEAD, cells, markdown=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("bench", help="the JSON lines of flash_bench and torch_sdpa_bench.py")
    args = parser.parse_args(argv)
    try:
        with open(args.bench) as f:
            lines = f.readlines()
    except OSError as error:
        raise SystemExit(f"{args.bench}: {error.strerror}") from None
    print("\n".join(bench_table(lines)))
    return 0
