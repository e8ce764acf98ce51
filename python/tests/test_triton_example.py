"""The Triton example kernel (examples/python/triton_flash_forward.py) against its numerics spec
(TRITON_FLASH_FORWARD_SPEC): the kernel's O and LSE as recorded on an H100
(tests/data/triton_example, scripts/record_triton_example.py: Triton 3.6) are the oracle. Each
case regenerates the recorded inputs (checked against the recorded digest), runs the emulation
and requires every bit of O (bf16) and of the LSE (float32) to equal the recording."""

import pytest

from conftest import SOURCE_DIR
from simprec.recordings.compare_triton import compare_case
from simprec.recordings.triton_example import CASES

DATA = SOURCE_DIR / "tests" / "data" / "triton_example"


@pytest.mark.parametrize("case", list(CASES))
def test_spec_reproduces_every_recorded_bit(case):
    r = compare_case(case, str(DATA))
    for out in ("o", "lse"):
        assert r[out] == 1.0, f"{case} {out}: {100 * r[out]:.3f}% of the bits equal, expected 100%"
