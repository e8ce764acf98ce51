"""The Triton example kernel (examples/python/triton_flash_forward.py) against its numerics spec
(TRITON_FLASH_FORWARD_SPEC): the kernel's O and LSE as recorded on an H100
(tests/data/triton_example, scripts/record_triton_example.py: Triton 3.6) are the oracle. Each
case regenerates the recorded inputs (checked against the recorded digest), runs the emulation
and requires every bit of O (bf16) and of the LSE (float32) to equal the recording."""

import sys

import pytest

from conftest import SOURCE_DIR

sys.path.insert(0, str(SOURCE_DIR / "scripts"))
import compare_triton_example as recording  # noqa: E402

import simprec  # noqa: E402


@pytest.mark.parametrize("case", list(recording.CASES))
def test_spec_reproduces_every_recorded_bit(case):
    r = recording.compare_case(case, simprec)
    for out in ("o", "lse"):
        assert r[out] == 1.0, f"{case} {out}: {100 * r[out]:.3f}% of the bits equal, expected 100%"
