"""This interpreter's numpy against the numpy measured in tests/data/device_math/
h200_function_digests.txt (numpy 2.5.2 on the H200's host), over every float32 argument the file
lists for np.exp and np.log: the same digests (tests/device_function_digests.hpp), summed and
compared. Since device_math_measured_test checks the numpy strategy against those digests, equal
sums mean this numpy's np.exp and np.log are the strategy's too. One line per function; exits 1
if any differs. A few minutes per function.

    /usr/bin/python3 scripts/device_functions/check_numpy.py [DATA_FILE]
"""
import os
import sys

import numpy as np

DATA = os.path.join(os.path.dirname(__file__), "../../tests/data/device_math/h200_function_digests.txt")
M1, M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)


def digest_sum(x, y):
    """The sum modulo 2^64 of mix64(x << 32 | y) over the arguments x and results y (uint32)."""
    y = np.where((y & 0x7FFFFFFF) > 0x7F800000, np.uint32(0x7FC00000), y)
    z = (x.astype(np.uint64) << np.uint64(32)) | y.astype(np.uint64)
    z ^= z >> np.uint64(30)
    z *= M1
    z ^= z >> np.uint64(27)
    z *= M2
    z ^= z >> np.uint64(31)
    return z.sum(dtype=np.uint64)


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else DATA
    features = np._core._multiarray_umath.__cpu_features__ if hasattr(np, "_core") else \
        np.core._multiarray_umath.__cpu_features__
    print(f"numpy {np.__version__}, CPU features " +
          " ".join(k for k in ("AVX2", "FMA3", "AVX512F", "AVX512_SKX") if features.get(k)))
    failed = False
    with open(path) as f:
        lines = [line.split() for line in f if line.startswith("function np_")]
    with np.errstate(all="ignore"):
        for _, measured, _, function, ranges, total in lines:
            chunks = []
            for r in ranges.split(","):  # FIRST-LAST or FIRST-LAST/STEP
                span, _, step = r.partition("/")
                first, last = map(int, span.split("-"))
                chunks += range(first, last + 1, int(step or 1))
            got = np.uint64(0)
            for start in range(0, len(chunks), 256):  # 2^24 arguments at a time
                x = np.concatenate([np.arange(c << 16, (c + 1) << 16, dtype=np.uint64)
                                    for c in chunks[start:start + 256]]).astype(np.uint32)
                y = getattr(np, function)(x.view(np.float32)).view(np.uint32)
                got += digest_sum(x, y)
            equal = int(got) == int(total, 16)
            failed = failed or not equal
            print(f"np.{function}: {len(chunks)} chunks ({len(chunks) << 16} arguments): "
                  + ("equal to the measured numpy" if equal else "DIFFERENT"), flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
