"""Whether a GEMM or linear-layer recording made again gives the committed one's bits.

    PYTHONPATH=python python3 -m simprec.recordings.same_recordings COMMITTED NEW [NEW ...]

COMMITTED: a folder of tests/data (gemm, gemm/nosplitk, gemm/dispatch, linear); NEW: folders the
same recorder wrote (their cases merged). For every committed case without an error, the new
recording must hold the case with the same input digest and the same output digest(s). Prints
one line per differing or missing case and a count; exits 1 when any case differs."""

import json
import os
import sys


def digests(entry):
    """The output digests of a summary entry: digest_output (GEMMs) or digests (linear)."""
    return entry.get("digests") or {"output": entry.get("digest_output")}


def compare(committed, new_folders):
    with open(os.path.join(committed, "summary.json")) as f:
        old = json.load(f)["cases"]
    new = {}
    for folder in new_folders:
        with open(os.path.join(folder, "summary.json")) as f:
            new.update(json.load(f)["cases"])
    same, differing = 0, []
    for name, entry in old.items():
        if "error" in entry:
            continue
        other = new.get(name)
        if other is None or "error" in other:
            differing.append(f"{name}: {'missing' if other is None else other['error'][:100]}")
        elif other["digest_inputs"] != entry["digest_inputs"]:
            differing.append(f"{name}: other inputs (another seed or numpy stream?)")
        elif digests(other) != digests(entry):
            differing.append(f"{name}: other output bits")
        else:
            same += 1
    return same, differing


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) < 2:
        raise SystemExit(__doc__)
    same, differing = compare(argv[0], argv[1:])
    for line in differing:
        print(line)
    print(f"{argv[0]}: {same} cases with the committed bits, {len(differing)} differing or missing")
    return 1 if differing else 0


if __name__ == "__main__":
    raise SystemExit(main())
