"""Keeps one head of scripts/record_held_out_attention.py's recordings for the tests:

    PYTHONPATH=python python3 scripts/extract_held_out_attention.py CAPTURE_DIR \\
        tests/data/torch_held_out

writes held_out.npz: per case (KERNEL.KIND.causalC) the first run's outputs of head (b, h) =
HEAD, the sha256 of each whole output of that run, and the share of that head's elements the two
runs agree on (the bound where the kernel is not deterministic).
"""

import argparse
import hashlib
import os

import numpy as np

from simprec.recordings.held_out import HEAD, KERNELS, capture_file


def kept_head(capture):
    """The arrays of held_out.npz from the captures (one dict of arrays per kernel)."""
    kept = {}
    for z in capture:
        for key in sorted(z):
            if ".run0." not in key:
                continue
            first, second = z[key], z[key.replace(".run0.", ".run1.")]
            case, output = key.replace(".run0.", ".").rsplit(".", 1)
            kept[f"{case}.{output}"] = first[HEAD]
            kept[f"{case}.{output}.sha256"] = np.array(hashlib.sha256(first.tobytes()).hexdigest())
            kept[f"{case}.{output}.run_to_run"] = np.array(np.mean(first[HEAD] == second[HEAD]))
    return kept


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("capture", help="the folder record_held_out_attention.py wrote")
    parser.add_argument("out", help="where held_out.npz goes")
    args = parser.parse_args(argv)
    captures = []
    for kernel in KERNELS:
        path = os.path.join(args.capture, capture_file(kernel))
        if not os.path.exists(path):
            raise SystemExit(f"{path}: missing (expected the folder "
                             "scripts/record_held_out_attention.py wrote)")
        with np.load(path) as z:
            captures.append({key: z[key] for key in z.files})
    os.makedirs(args.out, exist_ok=True)
    np.savez_compressed(os.path.join(args.out, "held_out.npz"), head=np.array(HEAD),
                        **kept_head(captures))
    return 0
