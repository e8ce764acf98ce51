"""Bitwise comparison of two .npy files of uint16 bit patterns (bf16 or fp16):

    PYTHONPATH=python python3 scripts/npy_bits_compare.py A.npy B.npy [--format bf16|fp16]

prints how many elements are identical (a NaN never is) and the largest difference in units of
the last place over the elements that are not NaN on either side (sign-magnitude order, so
values of opposite sign near zero count as far apart).
"""

import argparse

import numpy as np

from simprec.recordings.bits import is_nan, ulp_distance


def load_bits(path):
    """The uint16 array of a .npy file; exits saying why where it is not one."""
    try:
        array = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as error:
        raise SystemExit(f"{path}: not a readable .npy file ({error})") from None
    if array.dtype != np.uint16:
        raise SystemExit(f"{path}: {array.dtype} elements, expected uint16 bit patterns")
    return array


def describe_difference(a, b, format):
    """The line the command prints for two arrays of bit patterns of `format`."""
    if a.shape != b.shape:
        raise ValueError(f"shapes differ: {a.shape} against {b.shape}")
    nan = is_nan(a, format) | is_nan(b, format)
    same = int(np.count_nonzero((a == b) & ~nan))
    ulps = ulp_distance(a, b, format)[~nan]
    line = (f"{same}/{a.size} identical ({100 * same / a.size:.2f}%), max ulp diff "
            f"{int(ulps.max()) if ulps.size else 0}")
    if nan.any():
        line += f" ({int(np.count_nonzero(nan))} elements NaN on either side, not compared)"
    return line


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--format", choices=("bf16", "fp16"), default="bf16",
                        help="the format of the bit patterns (where a NaN is)")
    args = parser.parse_args(argv)
    a, b = load_bits(args.a), load_bits(args.b)
    if a.shape != b.shape:
        raise SystemExit(f"{args.a} holds {a.shape} elements, {args.b} {b.shape}: nothing to "
                         "compare element by element")
    if not a.size:
        raise SystemExit(f"{args.a}, {args.b}: no elements to compare")
    print(describe_difference(a, b, args.format))
    return 0
