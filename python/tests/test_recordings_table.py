"""The tables of simprec.recordings (the comparison's and the benchmark's) on crafted results,
against the expected text written out by hand."""

from simprec.recordings.bench_table import bench_table
from simprec.recordings.table import percent, render, results_table


def result(shape, dims, shares, digests, run_to_run, **extra):
    r = {"shape": shape, "dims": dims, "spec": "s", "run_to_run": run_to_run, **extra}
    r.update(zip(("o", "lse", "dq", "dk", "dv"), shares))
    r.update(("digest_" + g, d) for g, d in zip(("o", "dq", "dk", "dv"), digests))
    return r


RESULTS = [
    result("small", (1, 2, 128, 256, 64, False, "normal"), (1.0, 1.0, 0.5, 1.0, 1.0),
           (True, False, True, True), {"o": 1.0, "lse": 1.0, "dq": 0.99, "dk": 1.0, "dv": 1.0}),
    result("causal_one", (4, 8, 1024, 1024, 128, True, "low-rank"),
           (0.25, 2 / 3, 1.0, 1.0, 0.0), (False, True, True, False),
           {"o": None, "lse": None, "dq": None, "dk": None, "dv": None}),
]


def test_percent():
    assert [percent(x) for x in (None, 0.0, 1.0, 0.5, 2 / 3, 0.999994)] == [
        "n/a", "0.000", "100.000", "50.000", "66.667", "99.999"]


def test_plain_table_pads_columns_to_their_widest_cell():
    assert render(["a", "long head"], [["wide cell", "x"], ["y", "z"]], markdown=False) == [
        "a          long head",
        "wide cell  x        ",
        "y          z        ",
    ]


def test_results_table_in_markdown():
    assert results_table(RESULTS, markdown=True) == [
        "| shape | BxH | SqxSk | d | causal | inputs | O % | LSE % | dQ % | dK % | dV % "
        "| O digest | grad digests | run-to-run O/dQ/dK/dV % |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        "| small | 1x2 | 128x256 | 64 | no | normal | 100.000 | 100.000 | 50.000 | 100.000 "
        "| 100.000 | yes | nyy | 100.000/99.000/100.000/100.000 |",
        "| causal_one | 4x8 | 1024x1024 | 128 | yes | low-rank | 25.000 | 66.667 | 100.000 "
        "| 100.000 | 0.000 | no | yyn | n/a/n/a/n/a/n/a |",
        "\nlowest share over the shapes: o 25.000%, lse 66.667%, dq 50.000%, dk 100.000%, "
        "dv 0.000%; whole-head O digest equal on 1/2 shapes",
    ]


def test_results_table_in_plain_text_with_the_recorded_lse_column():
    with_lse = [dict(r, dq_from_lse=1.0, dk_from_lse=0.5, dv_from_lse=1.0) for r in RESULTS]
    lines = results_table(with_lse[:1], markdown=False)
    assert lines == [
        "shape  BxH  SqxSk    d   causal  inputs  O %      LSE %    dQ %    dK %     dV %     "
        "O digest  grad digests  run-to-run O/dQ/dK/dV %         "
        "from recorded LSE dQ/dK/dV %",
        "small  1x2  128x256  64  no      normal  100.000  100.000  50.000  100.000  100.000  "
        "yes       nyy           100.000/99.000/100.000/100.000  "
        "100.000/50.000/100.000      ",
        "lowest share over the shapes: o 100.000%, lse 100.000%, dq 50.000%, dk 100.000%, "
        "dv 100.000%; whole-head O digest equal on 1/1 shapes",
    ]


def test_bench_table_ratios():
    lines = [
        "flash_bench: B=4 H=16\n",  # not JSON: passed over
        '{"source": "torch", "kernel": "flash", "pass": "forward", "mitigation": "none", '
        '"ms": 2.0, "tflops": 400.4}\n',
        '{"source": "torch", "kernel": "flash", "pass": "forward+backward", '
        '"mitigation": "none", "ms": 8.0, "tflops": 350}\n',
        '{"source": "torch", "kernel": "flash", "determinism": {"dq": 0.99}}\n',  # no time
        '{"source": "simprec", "kernel": "fa2", "pass": "forward", "mitigation": "none", '
        '"ms": 4.0, "tflops": 200}\n',
        '{"source": "simprec", "kernel": "fa2", "pass": "forward", "mitigation": "sr", '
        '"ms": 5.0, "tflops": 160}\n',
        '{"source": "simprec", "kernel": "fa2", "pass": "forward", "mitigation": "sr", '
        '"inputs": "repeated-keys", "ms": 5.0, "tflops": 160}\n',
    ]
    assert bench_table(lines) == [
        "| source | kernel | pass | inputs | mitigation | ms | TFLOP/s | vs PyTorch flash "
        "| vs unmitigated |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        "| torch | flash | forward | uniform | none | 2.000 | 400 |  |  |",
        "| torch | flash | forward+backward | uniform | none | 8.000 | 350 |  |  |",
        "| simprec | fa2 | forward | uniform | none | 4.000 | 200 | 50% |  |",
        "| simprec | fa2 | forward | uniform | sr | 5.000 | 160 | 40% | +25.0% |",
        # No unmitigated run on these inputs: no cost.
        "| simprec | fa2 | forward | repeated-keys | sr | 5.000 | 160 | 40% |  |",
    ]
