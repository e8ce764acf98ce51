"""The recorded GEMMs' cases and inputs (simprec.recordings.gemm_cases): what the GPU recorder
and the CPU comparison both draw, so a change here would silently change the recordings'
inputs."""

import numpy as np

from simprec.recordings import gemm_cases


def test_fp8_codes_round_to_nearest_with_ties_to_even_and_saturate():
    x = np.array([0.0, 1.0, 1.0625, 1.1875, -3e-3, 1e-9, 500.0, -1e6, 2.0**-9])
    # 1.0625 lies between 1.0 (0x38) and 1.125 (0x39): the even code; 1.1875 between 1.125
    # (0x39) and 1.25 (0x3a): the even code again; 3e-3 is nearest 2 * 2^-9 (subnormal 0x02).
    want = [0x00, 0x38, 0x38, 0x3A, 0x82, 0x00, 0x7E, 0xFE, 0x01]
    assert gemm_cases.fp8_codes(x, "e4m3").tolist() == want
    # e5m2: 1.0 is 0x3c, the largest finite 57344 is 0x7b.
    assert gemm_cases.fp8_codes(np.array([1.0, 1e9, -1.0]), "e5m2").tolist() == [0x3C, 0x7B,
                                                                                  0xBC]


def test_operands_are_a_function_of_seed_and_shape():
    a = gemm_cases.operand_bits(1, (16, 32, 64), "a", "bf16")
    assert a.shape == (16, 64) and a.dtype == np.uint16
    np.testing.assert_array_equal(a, gemm_cases.operand_bits(1, (16, 32, 64), "a", "bf16"))
    assert not np.array_equal(a, gemm_cases.operand_bits(2, (16, 32, 64), "a", "bf16"))
    w = gemm_cases.operand_bits(1, (16, 32, 64), "w", "e4m3")
    assert w.shape == (32, 64) and w.dtype == np.uint8
    assert not np.any((w & 0x7F) == 0x7F)  # no NaN encodings


def test_kept_rows_hold_at_most_4096_outputs_with_the_first_and_last_row():
    assert gemm_cases.kept_rows(64, 64).tolist() == list(range(64))
    rows = gemm_cases.kept_rows(256, 2048)
    assert rows.tolist() == [0, 255]
    rows = gemm_cases.kept_rows(1024, 64)
    assert len(rows) == 64 and rows[0] == 0 and rows[-1] == 1023


def test_the_sets_are_fixed_and_every_case_is_named_once():
    cases = gemm_cases.cases()
    names = [c["name"] for c in cases]
    assert len(names) == len(set(names)) == 13 * 2 * 3 + 8 * 2 * 2 * 2 * 2
    held_out = {tuple(c["shape"]) for c in cases if c["held_out"]}
    assert (256, 2048, 256) in held_out and (64, 64, 16384) not in held_out
