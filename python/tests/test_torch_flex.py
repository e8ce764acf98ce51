"""The torch-flex preset against PyTorch's FlexAttention as recorded on an H100
(tests/data/torch_kernels/flex, scripts/record_torch_attention.py: PyTorch 2.11, Triton 3.6).
The recordings are the oracle: each test regenerates a recorded head's inputs (checked against
the recorded digest), runs the emulation and compares bit patterns with the recorded rows. The
floors are the agreement the preset reaches on these shapes (docs/torch_kernels.md, the flex
table), a little below it; issue 17's target is >= 99% of O and of dQ, dK, dV bits, 100% of O
(the kernels are deterministic)."""

import json

import pytest

from conftest import SOURCE_DIR
from simprec.recordings.compare_torch import compare_shape

DATA = SOURCE_DIR / "tests" / "data" / "torch_kernels"


# The recording script compiled one flex_attention for all its shapes: torch.compile compiled
# each graph's first call for its lengths (flex_compile=static: the two 128 x 128 shapes and the
# first causal one) and recompiled for symbolic lengths after (flex_compile=dynamic). torch-flex's
# flex_compile=automatic-dynamic is that policy; the comparison passes each shape's compiled_for
# as the recording's order of calls made it (simprec.recordings.flex_compile).
NUMERICS = "torch-flex"


def compare(shape, numerics=NUMERICS):
    summary = json.loads((DATA / "summary_flex.json").read_text())
    return compare_shape(shape, "flex", numerics, str(DATA), summary)


def test_one_key_block_is_bit_identical_everywhere():
    # 128 x 128, d = 64: one 128x128 tile, so no rescaling: every output bit-identical and the
    # whole head's O, dQ, dK, dV digests equal PyTorch's.
    r = compare("b1h1_n128_d64")
    for out in ("o", "lse", "dq", "dk", "dv"):
        assert r[out] == 1.0, out
    for out in ("o", "dq", "dk", "dv"):
        assert r["digest_" + out], out


def test_the_compilation_decides_the_exponent_arguments_last_bits():
    # Compiled for its lengths, the kernel contracts the exponent argument into an fma; the
    # same head with the uncontracted argument of a kernel compiled for symbolic lengths loses
    # LSE bits on a few rows (measured 97.656%).
    assert compare("b1h1_n128_d64", NUMERICS + ",flex_compile=dynamic")["lse"] < 0.99


ALL = {"o": 1.0, "lse": 1.0, "dq": 1.0, "dk": 1.0, "dv": 1.0}


@pytest.mark.parametrize("shape, floors", [
    # Measured: every sampled element of every output, and the whole head's O digest, on all
    # 32 recorded shapes (docs/torch_kernels.md).
    # d = 64, 128x128 tiles, four key blocks.
    ("b1h1_n512_d64", ALL),
    # d = 96: the 64x64 tile of tile_rule=flex-sm90.
    ("b1h1_n512_d96", ALL),
    # causal through the block mask: the diagonal block first (block_mask=diagonal-first).
    ("b1h1_n512_d64_causal", ALL),
    # causal, N = 777: the last query block's key blocks are all partial (create_block_mask
    # pads the mask with False), so that block visits them in increasing order.
    ("b1h1_n777_d96_causal", ALL),
    # d = 128 (128x64 tiles), Sq != Sk, lengths no tile divides.
    ("b1h1_q200_k600_d128", ALL),
    # 16 queries: the flex-decoding kernel's 16x64 tiles with two warps over the keys.
    ("b1h1_q16_k4096_d64", ALL),
    # Sq > Sk: O / l as Triton's div.full.f32 (norm=div-full), which a correctly rounded
    # division misses on one sampled element here.
    ("b1h1_q1024_k256_d64", ALL),
])
def test_agreement_with_the_recording(shape, floors):
    r = compare(shape)
    for out, floor in floors.items():
        assert r[out] >= floor, f"{shape} {out}: {r[out]:.5f} of the bits equal, expected >= {floor}"
    assert r["digest_o"], shape
