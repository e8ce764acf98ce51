#!/usr/bin/env python3
"""Keeps one head of scripts/record_held_out_attention.py's recordings for the tests:

    python3 scripts/extract_held_out_attention.py CAPTURE_DIR tests/data/torch_held_out

writes held_out.npz: per case (KERNEL.KIND.causalC) the first run's outputs of head (b, h) =
HEAD, the sha256 of each whole output of that run, and the share of that head's elements the two
runs agree on (the bound where the kernel is not deterministic).
"""
import hashlib
import os
import sys

import numpy as np

HEAD = (1, 3)


def main():
    capture, out_dir = sys.argv[1], sys.argv[2]
    kept = {}
    for kernel in ("flex", "sdpa"):
        z = np.load(os.path.join(capture, f"capture_{kernel}.npz"))
        for key in sorted(z.files):
            if ".run0." not in key:
                continue
            first, second = z[key], z[key.replace(".run0.", ".run1.")]
            case, output = key.replace(".run0.", ".").rsplit(".", 1)
            kept[f"{case}.{output}"] = first[HEAD]
            kept[f"{case}.{output}.sha256"] = np.array(hashlib.sha256(first.tobytes()).hexdigest())
            kept[f"{case}.{output}.run_to_run"] = np.array(np.mean(first[HEAD] == second[HEAD]))
    os.makedirs(out_dir, exist_ok=True)
    np.savez_compressed(os.path.join(out_dir, "held_out.npz"), head=np.array(HEAD), **kept)


if __name__ == "__main__":
    main()
