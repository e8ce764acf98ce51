"""attention: outputs, metrics, traces and attribution bit-identical to `simprec attention`."""

import json

import numpy as np
import pytest

import simprec


def cli_attention(cli, out, *args):
    cli("attention", *args, "--out", out)
    stats = json.loads((out / "stats.json").read_text())
    return stats


def decoded(path, fmt):
    array = np.load(path)
    return simprec.decode(array, fmt) if array.dtype.kind == "u" else array.astype(np.float64)


def same_bits(a, b):
    return a.shape == b.shape and np.array_equal(a.view(np.uint64), b.view(np.uint64))


def without_timing(stats):
    return {k: v for k, v in stats.items() if k not in ("seconds", "inputs")}


@pytest.mark.parametrize("preset,extra", [
    ("fa2", []),
    ("paper-a", ["--mitigation", "beta-rowmax:2"]),
    ("flash-lp", ["--set", "pv_acc=bf16:sr", "--tile", "32x16", "--causal"]),
])
def test_generated_inputs_backward_match_the_cli(cli, tmp_path, preset, extra):
    stats = cli_attention(cli, tmp_path, "--generate", "repeated-max", "--shape", "3,2,64,32",
                          "--seed", 5, "--backward", "--preset", preset, "--trace",
                          "--attribute", *extra)
    g = simprec.generate("repeated-max", (3, 2, 64, 32), seed=5, backward=True)
    sets = [extra[i + 1] for i, x in enumerate(extra) if x == "--set"]
    mitigations = [extra[i + 1] for i, x in enumerate(extra) if x == "--mitigation"]
    tile = (32, 16) if "--tile" in extra else None
    r = simprec.attention(g["q"], g["k"], g["v"], g["do"], numerics=preset, seed=5, set=sets,
                          mitigations=mitigations, tile=tile, causal="--causal" in extra,
                          trace=True, attribute=True)
    assert same_bits(r.o, decoded(tmp_path / "o.npy", r.o_format))
    for name in ("dq", "dk", "dv"):
        assert same_bits(getattr(r, name), decoded(tmp_path / f"{name}.npy", r.grad_format))
    assert without_timing(r.stats) == without_timing(stats)
    assert r.attribution_table and r.attribution == stats["attribution"]
    assert r.trace == stats["trace"]


def test_input_files_forward_match_the_cli(cli, tmp_path):
    rng = np.random.default_rng(8)
    q, k, v = (rng.normal(size=(2, 96, 64)).astype(np.float32) for _ in range(3))
    for name, array in (("q", q), ("k", k), ("v", v)):
        np.save(tmp_path / f"{name}.npy", array)
    stats = cli_attention(cli, tmp_path / "out", "--q", tmp_path / "q.npy", "--k",
                          tmp_path / "k.npy", "--v", tmp_path / "v.npy", "--preset", "fa2",
                          "--format", "fp16")
    r = simprec.attention(q, k, v, numerics="fa2", format="fp16")
    assert same_bits(r.o, decoded(tmp_path / "out" / "o.npy", "fp16"))
    assert without_timing(r.stats) == without_timing(stats)
    assert r.o.shape == (2, 96, 64) and r.lse.shape == (2, 96)


def test_encodings_as_inputs_give_the_same_results():
    g = simprec.generate("normal", (1, 2, 32, 16), seed=1)
    bits = {n: simprec.round(g[n], "bf16", encode=True) for n in "qkv"}
    values = {n: simprec.decode(bits[n], "bf16") for n in "qkv"}
    a = simprec.attention(bits["q"], bits["k"], bits["v"], input_format="bf16")
    b = simprec.attention(values["q"], values["k"], values["v"])
    assert same_bits(a.o, b.o) and same_bits(a.lse, b.lse)


def test_backward_from_a_given_forward_equals_the_full_run():
    g = simprec.generate("normal", (2, 1, 48, 16), seed=2, backward=True)
    full = simprec.attention(g["q"], g["k"], g["v"], g["do"], reference=False)
    given = simprec.attention(g["q"], g["k"], g["v"], g["do"], reference=False, o=full.o,
                              lse=full.lse)
    for name in ("dq", "dk", "dv"):
        assert same_bits(getattr(full, name), getattr(given, name))
    assert full.metrics is None


def test_fp64_preset_is_close_to_an_independent_numpy_reference():
    g = simprec.generate("normal", (1, 1, 40, 8), seed=3)
    q, k, v = g["q"][0, 0], g["k"][0, 0], g["v"][0, 0]
    s = q @ k.T / np.sqrt(8)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    expected = (p / p.sum(axis=1, keepdims=True)) @ v
    r = simprec.attention(g["q"], g["k"], g["v"], numerics="fp64", format="fp64")
    assert np.max(np.abs(r.o[0, 0] - expected)) < 1e-12


def test_attention_errors_name_the_argument():
    q = np.zeros((2, 16, 8))
    with pytest.raises(ValueError, match="shape mismatch: Q"):
        simprec.attention(q, np.zeros((2, 16, 4)), q)
    with pytest.raises(TypeError, match="k: dtype int64 is not accepted"):
        simprec.attention(q, np.zeros((2, 16, 8), dtype=np.int64), q)
    with pytest.raises(TypeError, match="v: dtype uint8 is not accepted"):
        simprec.attention(np.zeros((2, 16, 8), np.uint16), np.zeros((2, 16, 8), np.uint16),
                          np.zeros((2, 16, 8), np.uint8), input_format="bf16")
    with pytest.raises(ValueError, match="q: expected a C-contiguous array"):
        simprec.attention(np.zeros((2, 8, 16)).transpose(0, 2, 1), q, q)
    with pytest.raises(ValueError, match="numerics='fa3'.*fa2"):
        simprec.attention(q, q, q, numerics="fa3")
    with pytest.raises(ValueError, match="tile=\\(0, 64\\)"):
        simprec.attention(q, q, q, tile=(0, 64))
    with pytest.raises(ValueError, match="o: shape \\(2, 16\\), expected \\(2, 16, 8\\)"):
        simprec.attention(q, q, q, q, o=np.zeros((2, 16)), lse=np.zeros((2, 16)))
    with pytest.raises(ValueError, match="attribution target 'dq' needs dO"):
        simprec.attention(q, q, q, attribute=True, attribute_target="dq")
    with pytest.raises(ValueError, match="unknown|kind"):
        simprec.generate("uniformish", (1, 1, 8, 8))
    with pytest.raises(ValueError, match="shape: expected \\(B, H, N, d\\)"):
        simprec.generate("normal", (8, 8))


def test_numerics_specs_match_the_cli(cli, tmp_path):
    spec = "torch-math,format=fp16,p_cast=fp16:rtz,beta-rowmax:2"
    stats = cli_attention(cli, tmp_path, "--generate", "peaky", "--shape", "2,1,32,16",
                          "--seed", 4, "--numerics", spec)
    g = simprec.generate("peaky", (2, 1, 32, 16), seed=4)
    r = simprec.attention(g["q"], g["k"], g["v"], numerics=spec, seed=4)
    assert r.numerics == stats["numerics"] == cli("numerics", spec).strip()
    assert same_bits(r.o, decoded(tmp_path / "o.npy", r.o_format))
    assert without_timing(r.stats) == without_timing(stats)
    again = simprec.attention(g["q"], g["k"], g["v"], numerics=r.numerics, seed=4)
    assert same_bits(again.o, r.o)
    config = simprec.attention_config(spec)
    assert config["sites"]["p_cast"] == {"format": "fp16", "rounding": "rtz"}
    with pytest.raises(ValueError, match="out_format"):
        simprec.attention(g["q"], g["k"], g["v"], numerics="torch-math,out_format=bf16")
