"""torch-flash and torch-efficient against PyTorch's own kernels, recorded on an H100
(tests/data/torch_kernels, scripts/record_torch_attention.py): a few small shapes that cover
the dispatch (one key block, split-KV with 2 splits, head dimensions 64 and 96, Sq != Sk), each
in well under a second. The expected bits are the recordings; the floors are the shares this
branch measured (docs/torch_kernels.md) rounded down, so that a change that loses agreement
fails here."""

import json

import pytest

from conftest import SOURCE_DIR
from simprec.recordings import compare_torch as compare
from simprec.recordings import inputs
from simprec.recordings.layout import RecordingError

DATA = SOURCE_DIR / "tests" / "data" / "torch_kernels"

# (kernel, numerics, shape, {output: lowest share of identical elements}, whole-head O digest
# equal).
CASES = [
    # One key block: the non-split kernel, 128x128 tiles.
    ("flash", "torch-flash", "b1h1_n128_d64",
     {"o": 1.0, "lse": 1.0, "dq": 1.0, "dk": 1.0, "dv": 1.0}, True),
    # Split-KV: 2 splits of one 64x256 tile each, merged by the combine kernel (libdevice's
    # expf and logf).
    ("flash", "torch-flash", "b1h1_n512_d64",
     {"o": 1.0, "lse": 1.0, "dq": 1.0, "dk": 1.0, "dv": 1.0}, True),
    # d = 96, split-KV: the fp32 softmax scale in the LSE and the backward pass.
    ("flash", "torch-flash", "b1h1_n512_d96",
     {"o": 1.0, "lse": 1.0, "dq": 1.0, "dk": 1.0, "dv": 1.0}, True),
    # Sq > Sk with one key block: no split.
    ("flash", "torch-flash", "b1h1_q1024_k256_d64",
     {"o": 1.0, "lse": 1.0, "dq": 1.0, "dk": 1.0, "dv": 1.0}, True),
    # 64 heads, one split, 8 key blocks per query block: the row sum's rescale contracted into
    # its next addition (rowsum_rescale=fma) decides the LSE's last bits. dQ is accumulated
    # with atomics: PyTorch's own runs agree on 99.994% of it.
    ("flash", "torch-flash", "b4h16_n1024_d64",
     {"o": 1.0, "lse": 1.0, "dq": 0.999, "dk": 1.0, "dv": 1.0}, True),
    # d = 128, 16 key blocks of 128: every O and LSE value of the head.
    ("flash", "torch-flash", "b1h1_n2048_d128",
     {"o": 1.0, "lse": 1.0, "dq": 0.999, "dk": 1.0, "dv": 1.0}, True),
    # The CUTLASS kernels with libdevice's expf (backward P) and logf (LSE).
    ("efficient", "torch-efficient", "b1h1_n128_d64",
     {"o": 1.0, "lse": 1.0, "dq": 1.0, "dk": 1.0, "dv": 1.0}, True),
    # d = 96: 64x128 forward tiles, 128x128 backward tiles, the scores scaled then times log2 e.
    ("efficient", "torch-efficient", "b1h1_n512_d96",
     {"o": 1.0, "lse": 1.0, "dq": 1.0, "dk": 1.0, "dv": 1.0}, True),
    # Low-rank inputs, whose dK cancels strongly: bit-identical too.
    ("efficient", "torch-efficient", "b2h2_n512_d96_lowrank",
     {"o": 1.0, "lse": 1.0, "dq": 1.0, "dk": 1.0, "dv": 1.0}, True),
]


@pytest.fixture(scope="module")
def summary():
    with open(DATA / "summary_sdpa.json") as f:
        return json.load(f)


def compare_shape(shape, kernel, numerics, summary):
    return compare.compare_shape(shape, kernel, numerics, str(DATA), summary, recorded_lse=True)


@pytest.mark.parametrize("kernel,numerics,shape,floors,digest", CASES,
                         ids=[f"{c[0]}-{c[2]}" for c in CASES])
def test_preset_predicts_the_recorded_kernel(kernel, numerics, shape, floors, digest, summary):
    r = compare_shape(shape, kernel, numerics, summary)
    for output, floor in floors.items():
        assert r[output] >= floor, f"{shape} {output}: {r[output]:.6f} of elements identical"
    assert r["digest_o"] == digest


def test_without_the_dispatch_the_kernels_are_missed(summary):
    # Controls: the agreement above comes from modelling the dispatch. One split where the
    # kernel ran two, or key blocks first to last where it runs them last to first, loses
    # O bits on most rows.
    split = compare_shape("b1h1_n512_d64", "flash", "torch-flash,kv_splits=1", summary)
    assert split["o"] < 0.9
    # 64 heads: one split, 8 key blocks of 128 per query block.
    order = compare_shape("b4h16_n1024_d64", "flash", "torch-flash,key_order=ascending", summary)
    assert order["o"] < 0.9
    # l * alpha rounded before the block's first term is added: the LSE loses its last bit on
    # about 2% of the rows.
    separate = compare_shape("b4h16_n1024_d64", "flash", "torch-flash,rowsum_rescale=mul", summary)
    assert separate["lse"] < 0.99


def test_split_keys_add_dq_higher_key_block_first(summary):
    # The memory-efficient backward with split keys: the key blocks that reach a query block at
    # the same step take a lock to add their dQ, in an order the hardware decides. With one
    # query block (Sq = 64, 16 key blocks) all of them do; the higher key block first (the
    # preset's split_ties=descending) gives 99.817% of dQ, above the kernel's own run-to-run
    # 99.622%; the lower first 99.548%, below each of 40 shuffled orders (99.573-99.792%).
    def dq(shape, numerics):
        return compare.compare_shape(shape, "efficient", numerics, str(DATA), summary)
    assert dq("b1h1_q64_k2048_d128", "torch-efficient")["dq"] >= 0.998
    assert dq("b1h1_q64_k2048_d128", "torch-efficient,split_ties=ascending")["dq"] < 0.996
    # 2 query blocks, 5 key blocks: the whole head's dQ is the recorded run's.
    r = dq("b1h1_q200_k600_d128", "torch-efficient")
    assert r["dq"] == 1.0 and r["digest_dq"]


def test_a_changed_input_is_refused(summary, monkeypatch):
    # The inputs are checked against the recording's digest before anything is compared.
    real = inputs.head_inputs

    def shifted(*args):
        q, k, v, do = real(*args)
        q[0, 0] += 1.0
        return q, k, v, do
    monkeypatch.setattr(inputs, "head_inputs", shifted)
    with pytest.raises(RecordingError, match="digest"):
        compare.compare_shape("b1h1_n128_d64", "flash", "torch-flash", str(DATA), summary)
