#!/usr/bin/env python3
"""Reads the JSON lines of flash_bench and scripts/torch_sdpa_bench.py (one run, one machine) and
prints a markdown table of TFLOP/s with the ratios the targets are stated in: simprec's forward
and forward+backward against PyTorch's flash backend, and each mitigation's cost against the
unmitigated kernel.

    python3 scripts/flash_bench_table.py bench.jsonl
"""
import json
import sys


def main():
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
    rows = [r for r in rows if "ms" in r]
    torch = {(r["kernel"], r["pass"]): r for r in rows if r["source"] == "torch"}
    flash_fwd = torch.get(("flash", "forward"))
    flash_both = torch.get(("flash", "forward+backward"))
    # Inputs: "uniform" random values, or "repeated-keys" (flash_bench --repeated-keys); PyTorch's
    # lines and older flash_bench lines have none (uniform).
    inputs = lambda r: r.get("inputs", "uniform")
    plain = {(r["kernel"], inputs(r)): r for r in rows
             if r["source"] == "simprec" and r["mitigation"] == "none"}
    print("| source | kernel | pass | inputs | mitigation | ms | TFLOP/s | vs PyTorch flash | "
          "vs unmitigated |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        versus = {"forward": flash_fwd, "forward+backward": flash_both}.get(r["pass"])
        ratio = f"{versus['ms'] / r['ms']:.0%}" if versus and r["source"] == "simprec" else ""
        base = plain.get((r["kernel"], inputs(r)))
        cost = ""
        if r["source"] == "simprec" and r["mitigation"] != "none" and base:
            cost = f"{r['ms'] / base['ms'] - 1:+.1%}"
        print(f"| {r['source']} | {r['kernel']} | {r['pass']} | {inputs(r)} | {r['mitigation']} | "
              f"{r['ms']:.3f} | {r['tflops']:.0f} | {ratio} | {cost} |")


if __name__ == "__main__":
    main()
