"""The folder a recording of PyTorch's attention kernels is (record_torch writes it, compare_torch
reads it):

    DATA/summary.json        versions, the device, every shape with, per kernel, the dispatch,
                             the run-to-run agreement or the error (tests/data/torch_kernels,
                             recorded in two sweeps, has summary_sdpa.json and summary_flex.json)
    DATA/KERNEL/SHAPE.npz    one head (b = B-1, h = H-1) of a shape:
        o_rows, dq_rows     int64 indices of the query rows kept (at most ROWS_KEPT, drawn from a
                            seeded generator so that every position inside a tile is covered)
        k_rows              the key rows kept for dK and dV
        o, dq               uint16 bf16 bit patterns of those rows of O and dQ  [rows, d]
        dk, dv              uint16 bf16 bit patterns of the kept rows of dK, dV [rows, d]
        lse                 float32 LSE of every query row of the head, as the kernel returns it
        digest_*            SHA-256 (hex) of the head's whole O, dQ, dK, dV (bf16 bits, C order)
        digest_inputs       SHA-256 of the head's bf16 inputs q, k, v, dO
"""

import json
import os

import numpy as np

from simprec.recordings.bits import sha256
from simprec.recordings.inputs import SEED

OUTPUTS = ("o", "lse", "dq", "dk", "dv")
ROWS_OF = {"o": "o_rows", "dq": "dq_rows", "dk": "k_rows", "dv": "k_rows"}  # the rows kept
ROWS_KEPT = 128
SUMMARY = "summary.json"
KERNELS = ("flash", "efficient", "flex")


class RecordingError(Exception):
    """A recording that is missing, incomplete, or does not fit what is compared with it."""


def kept_rows(n, salt):
    """At most ROWS_KEPT sorted row indices out of n, from a fixed generator."""
    if n <= ROWS_KEPT:
        return np.arange(n, dtype=np.int64)
    rng = np.random.Generator(np.random.PCG64([SEED, n, salt]))
    return np.sort(rng.choice(n, ROWS_KEPT, replace=False)).astype(np.int64)


def write_head(out, kernel, name, o, lse, dq, dk, dv, digest_inputs):
    """Writes OUT/KERNEL/NAME.npz from one head's whole outputs: o, dq [Sq, d] and dk, dv
    [Sk, d] as uint16 bf16 bit patterns, lse [Sq] float32."""
    o_rows, k_rows = kept_rows(o.shape[0], 1), kept_rows(dk.shape[0], 2)
    os.makedirs(os.path.join(out, kernel), exist_ok=True)
    np.savez_compressed(
        os.path.join(out, kernel, name + ".npz"),
        o_rows=o_rows, dq_rows=o_rows, k_rows=k_rows,
        o=o[o_rows], dq=dq[o_rows], dk=dk[k_rows], dv=dv[k_rows], lse=lse.astype(np.float32),
        digest_o=sha256(o), digest_dq=sha256(dq), digest_dk=sha256(dk), digest_dv=sha256(dv),
        digest_inputs=digest_inputs)


def write_summary(out, summary):
    with open(os.path.join(out, SUMMARY), "w") as f:
        json.dump(summary, f, indent=1)


def load_summary(data, kernel):
    """The recording's summary: summary.json, or (tests/data/torch_kernels, recorded in two
    sweeps) summary_flex.json or summary_sdpa.json by kernel."""
    if not os.path.isdir(data):
        raise RecordingError(f"{data}: no such recording folder (expected a folder that "
                             "scripts/record_torch_attention.py wrote)")
    split = os.path.join(data, "summary_flex.json" if kernel == "flex" else "summary_sdpa.json")
    path = split if os.path.exists(split) else os.path.join(data, SUMMARY)
    if not os.path.exists(path):
        raise RecordingError(f"{data}: no {SUMMARY} (nor {os.path.basename(split)}): not a "
                             "recording of scripts/record_torch_attention.py")
    with open(path) as f:
        return json.load(f)


def shape_of(summary, name):
    """(B, H, Sq, Sk, d, causal, kind) of a recorded shape, as the recording's summary has it."""
    e = summary["shapes"][name]
    return e["B"], e["H"], e["Sq"], e["Sk"], e["d"], e["causal"], e["kind"]


def recorded(summary, name, kernel):
    """Whether the summary holds a recording of `kernel` on shape `name` (not an error)."""
    return "error" not in summary["shapes"][name]["kernels"].get(kernel, {"error": "absent"})


def select_shapes(summary, kernel, names=()):
    """The shapes to compare: `names` (each checked to be a recording of `kernel`), or, where
    none are given, every shape with a recording of `kernel`, in the summary's order."""
    for name in names:
        if name not in summary["shapes"]:
            raise RecordingError(f"unknown shape '{name}' (recorded: "
                                 f"{', '.join(summary['shapes'])})")
        if not recorded(summary, name, kernel):
            raise RecordingError(f"{name}: no recording of kernel {kernel}")
    return list(names) or [n for n in summary["shapes"] if recorded(summary, n, kernel)]


def load_head(data, kernel, name):
    """The arrays of DATA/KERNEL/NAME.npz."""
    path = os.path.join(data, kernel, name + ".npz")
    if not os.path.exists(path):
        raise RecordingError(f"{path}: missing, though the summary lists a recording of "
                             f"kernel {kernel} on {name}")
    return np.load(path)


def run_to_run(summary, name, kernel):
    """The recorded run-to-run agreement of each output (None where not recorded)."""
    agreement = summary["shapes"][name]["kernels"][kernel].get("run_to_run_agreement", {})
    return {out: agreement.get(out) for out in OUTPUTS}
