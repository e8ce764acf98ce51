"""The numerics registries reach Python whole: simprec.numerics_reference() lists every kernel
model file and every strategy file of the source tree, and the docstrings of simprec.attention
and simprec.torch.attention name each of them (they are generated from the registries, not
written by hand)."""

import os
import pathlib
import re

import numpy as np
import pytest

import simprec
import simprec.torch

SOURCE_DIR = pathlib.Path(os.environ.get("SIMPREC_SOURCE_DIR",
                                         pathlib.Path(__file__).resolve().parents[2]))


def model_files():
    return sorted(p.stem for p in (SOURCE_DIR / "lib/attention/models").glob("*.toml"))


def registered_strategy_names(source):
    """The names a strategy file registers, read from its source: the .name = "..." items."""
    return re.findall(r'\.name = "([^"]+)"', source.read_text())


def test_every_model_file_is_a_preset():
    presets = [p["name"] for p in simprec.numerics_reference()["presets"]]
    assert presets == model_files()
    for name in presets:
        fmt = "fp16" if name == "sage" else "bf16"  # sage models fp16 only
        assert simprec.canonical_numerics(name, fmt) == f"{name},format={fmt}"


def test_every_strategy_file_is_in_its_slot():
    slots = {s["key"]: {x["name"] for x in s["strategies"]}
             for s in simprec.numerics_reference()["slots"]}
    files = sorted((SOURCE_DIR / "lib/attention/strategies").glob("*/*.cpp"))
    assert files, "no strategy files found"
    for f in files:
        for name in registered_strategy_names(f):
            assert name in slots[f.parent.name], f"{f}: {name} not in slot {f.parent.name}"


@pytest.mark.parametrize("function", [simprec.attention, simprec.torch.attention])
def test_docstrings_name_every_preset_and_strategy(function):
    doc = function.__doc__
    reference = simprec.numerics_reference()
    for preset in reference["presets"]:
        assert preset["name"] in doc
    for slot in reference["slots"]:
        line = next(l for l in doc.splitlines() if l.strip().startswith(slot["key"] + ":"))
        for strategy in slot["strategies"]:
            assert strategy["name"] in line, (slot["key"], strategy["name"])


def test_a_spec_a_run_would_refuse_is_refused_when_read():
    with pytest.raises(ValueError, match="rescale=exp2-diff needs exp_impl"):
        simprec.canonical_numerics("torch-flash,exp_impl=natural")


@pytest.mark.parametrize("spec,reason", [
    ("fa2,tile=auto", "tile=auto needs a dispatch"),
    ("fa2,block_mask=diagonal-first,tile=64x48", "needs a tile that divides 128x128, not 64x48"),
    ("fa2,sr-p-tiled:8,sr-p:3", "tiled random bits at p_cast need a bit count that divides 32"),
])
def test_canonical_numerics_refuses_what_attention_refuses(spec, reason):
    # One check for both: a spec every run refuses is refused when read, by each.
    q = np.zeros((1, 1, 64, 16), dtype=np.float32)
    with pytest.raises(ValueError, match=re.escape(reason)):
        simprec.canonical_numerics(spec)
    with pytest.raises(ValueError, match=re.escape(reason)):
        simprec.attention(q, q, q, numerics=spec)
