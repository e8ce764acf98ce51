"""Writes the .npy fixtures of tests/gemm_discover_cli_test.cpp from GEMMs recorded on an H200
(tests/data/gemm, tests/data/gemm/dispatch, and a linear layer's forward of tests/data/linear):

    PYTHONPATH=python python3 tests/data/gemm_discover/make_fixtures.py

For each case, A (the recorded rows of it: rows of a GEMM are independent), B = W^T, the scales
and D: the GPU's output bits as float32 values (what `simprec gemm` writes), drawn again from
the seed and shape (gemm_cases.operand_bits, checked against the recorded digest).
"""

import json
import os

import numpy as np

from simprec.recordings import compare_gemm, compare_linear, gemm_cases, linear_cases
from simprec.recordings.bits import format_values

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "gemm")
CASES = (
    # split-K bf16 matmul: cuBLAS launched 7 pieces of K (its grid), 1472 elements each
    ("dispatch", "matmul.bf16.on.16x16x10000", "bf16_splitk"),
    # FP8 _scaled_mm, tensor-wise scales, use_fast_accum=False: promoted every 128
    ("", "scaled_mm.e4m3-e4m3.tensor.bf16.promoted.128x128x1024", "e4m3_promoted"),
    # mixed FP8, row-wise scales, fp32 out, use_fast_accum=False
    ("", "scaled_mm.e5m2-e4m3.row.fp32.promoted.128x128x1024", "e5m2_e4m3_rowwise"),
)


def write(folder, name, prefix):
    summary, arrays = compare_gemm.load(os.path.join(DATA, folder))
    entry = summary["cases"][name]
    m, n, _ = entry["shape"]
    rows = gemm_cases.kept_rows(m, n, summary.get("outputs_kept", gemm_cases.OUTPUTS_KEPT))
    a, w = compare_gemm.case_inputs(entry, summary["seed"])
    out = {"a": np.ascontiguousarray(a[rows]), "b": np.ascontiguousarray(w.T),
           "d": format_values(arrays[name], compare_gemm.out_format(entry))}
    if entry["family"] == "scaled_mm":
        sa, sb = gemm_cases.scales(entry, summary["seed"])
        out["scale_a"] = (sa.reshape(1) if sa.ndim == 0 else sa[rows]).reshape(-1)
        out["scale_b"] = sb.reshape(-1)
    for key, value in out.items():
        np.save(os.path.join(HERE, f"{prefix}.{key}.npy"), value)
    facts = {"case": name, "recording": os.path.join("tests/data/gemm", folder),
             "rows": rows.tolist(), "kernel": entry["launches"][0]}
    if "splitK" in entry["kernels"][0]:
        facts["launched_pieces"] = compare_gemm.launched_pieces(entry)
        facts["launched_length"] = compare_gemm.launched_length(entry)
    return prefix, facts


def write_linear(name, prefix):
    """F.linear's forward y = x W^T + b (the bias in cuBLAS's epilogue): A = the recorded rows of
    x, B = W^T, the bias and y as float32 values."""
    summary, arrays = compare_linear.load(os.path.join(HERE, "..", "linear"))
    entry = summary["cases"][name]
    m, _, n = entry["shape"]
    x, w, bias, _ = linear_cases.operands(summary["seed"], entry)
    rows = linear_cases.kept_rows(m, n)
    fmt = entry["dtype"]
    out = {"a": np.ascontiguousarray(x[rows]), "b": np.ascontiguousarray(w.T),
           "bias": format_values(bias, fmt),
           "d": format_values(arrays[name + ".y"], fmt)}
    for key, value in out.items():
        np.save(os.path.join(HERE, f"{prefix}.{key}.npy"), value)
    return prefix, {"case": name, "recording": "tests/data/linear", "rows": rows.tolist(),
                    "kernel": entry["launches_forward"][0]}


if __name__ == "__main__":
    facts = dict(write(*case) for case in CASES)
    # F.linear bf16 with a bias, 256 x 256 x 256: no split-K kernel (a bias epilogue)
    facts.update([write_linear("linear.bf16.bias.256x256x256", "linear_bias")])
    with open(os.path.join(HERE, "cases.json"), "w") as f:
        json.dump(facts, f, indent=1)
        f.write("\n")
