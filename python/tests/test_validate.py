"""simprec.validate on Python kernels: the report of `simprec validate`, PASS when the kernel
computes the numerics bit for bit, FAIL when a bit differs."""

import numpy as np
import pytest
import torch

import simprec
import simprec.torch as storch


def emulated_kernel(q, k, v, is_causal=False, scale=None):
    return storch.attention(q, k, v, is_causal=is_causal, scale=scale, numerics="fa2")


def test_a_kernel_that_computes_the_numerics_passes_forward_and_backward():
    report = simprec.validate(emulated_kernel, numerics="fa2", generate="repeated-max",
                              shape=(2, 2, 64, 32), seed=3, backward=True, causal=True,
                              verbose=False)
    assert report.passed and report.bit_exact
    lines = report.text.splitlines()
    assert lines[0].startswith("validate plugin=python kernel=emulated_kernel "
                               "kind=attention_backward model=fa2,format=bf16")
    assert lines[1] == "numerics fa2,format=bf16"
    assert "input Q format=bf16 shape=[2,2,64,32]" in lines
    names = [o["name"] for o in report.outputs]
    assert names == ["O", "dQ", "dK", "dV"]
    for o in report.outputs:
        assert o["bitwise_equal"] == o["values"]
        assert o["kernel_mean_signed_error"] == o["emulation_mean_signed_error"]
    assert lines[-1] == "result PASS bit-exact as claimed"


def test_one_ulp_off_fails_with_its_histogram():
    def off_by_one_ulp(q, k, v):
        o = emulated_kernel(q, k, v)
        bits = o.view(torch.int16).clone()
        bits.view(-1)[5] += 1
        return bits.view(torch.bfloat16)

    report = simprec.validate(off_by_one_ulp, generate="normal", shape=(1, 2, 32, 16),
                              verbose=False)
    assert not report.passed
    o = report.outputs[0]
    assert o["values"] - o["bitwise_equal"] == 1
    assert o["ulp_histogram"] == [(0, 0, o["values"] - 1), (1, 1, 1)]
    assert report.text.splitlines()[-1].startswith("result FAIL")


def test_numpy_kernels_and_given_inputs():
    g = simprec.generate("normal", (1, 1, 32, 8), seed=2)

    def numpy_attention(q, k, v):
        s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
        p = np.exp(s - s.max(axis=-1, keepdims=True))
        return (p / p.sum(axis=-1, keepdims=True)) @ v

    report = simprec.validate(numpy_attention, numerics="fp64", format="fp64",
                              inputs=(g["q"], g["k"], g["v"]), require_bit_exact=False,
                              verbose=False)
    o = report.outputs[0]
    assert report.passed  # no bit-exact claim
    # Plain double attention is close to the exact reference: within 2^12 ulps of fp64 (1e-12
    # relative) at N = 32.
    assert 0 < o["max_abs_ulps"] < 2**12
    assert "reference kernel-mean-signed-error" in report.text


def test_validate_errors():
    with pytest.raises(ValueError, match="give inputs=.* or generate=KIND"):
        simprec.validate(emulated_kernel)
    with pytest.raises(TypeError, match="kernel output O: dtype float32, expected uint16"):
        simprec.validate(lambda q, k, v: emulated_kernel(q, k, v).float(), generate="normal",
                         shape=(1, 1, 16, 8), verbose=False)
    with pytest.raises(ValueError, match="kernel output O: shape"):
        simprec.validate(lambda q, k, v: emulated_kernel(q, k, v)[..., :4], generate="normal",
                         shape=(1, 1, 16, 8), verbose=False)


def test_a_device_exp2_replaces_the_correctly_rounded_one():
    calls = []

    def exp2_one_percent_high(x):
        calls.append(len(x))
        return (np.exp2(x.astype(np.float64)) * 1.01).astype(np.float32)

    plain = simprec.validate(emulated_kernel, generate="normal", shape=(1, 1, 64, 16),
                             verbose=False)
    shifted = simprec.validate(emulated_kernel, generate="normal", shape=(1, 1, 64, 16),
                               exp2=exp2_one_percent_high, verbose=False)
    assert plain.bit_exact and calls and not shifted.bit_exact


def test_given_torch_inputs_with_do_are_used_as_given():
    g = simprec.generate("low-rank", (1, 2, 32, 16), seed=5, backward=True)
    q, k, v, do = (torch.from_numpy(g[n]).to(torch.bfloat16) for n in ("q", "k", "v", "do"))
    report = simprec.validate(emulated_kernel, inputs=(q, k, v, do), verbose=False)
    assert report.passed and [o["name"] for o in report.outputs] == ["O", "dQ", "dK", "dV"]
    with pytest.raises(ValueError, match=r"inputs: expected \(q, k, v\) or \(q, k, v, do\)"):
        simprec.validate(emulated_kernel, inputs=(q, k), verbose=False)


class _KernelWithItsOwnLse(torch.autograd.Function):
    """A stand-in kernel whose forward reports an LSE 1% off the emulation's in its first 8
    rows and whose backward, like a real backward kernel, reads that LSE."""

    @staticmethod
    def forward(ctx, q, k, v):
        r = simprec.attention(q, k, v, numerics="fa2", reference=False, baseline=False)
        lse = np.asarray(r.lse, dtype=np.float32).copy()
        lse[0, 0, :8] += np.float32(0.01)
        o = torch.from_numpy(np.asarray(r.o)).to(torch.bfloat16)
        ctx.save_for_backward(q, k, v)
        ctx.forward_pass = (np.asarray(r.o), lse.astype(np.float64))
        return o, torch.from_numpy(lse)

    @staticmethod
    def backward(ctx, d_o, d_lse):
        q, k, v = ctx.saved_tensors
        o, lse = ctx.forward_pass
        r = simprec.attention(q, k, v, d_o.to(torch.bfloat16), numerics="fa2", o=o, lse=lse,
                              reference=False, baseline=False)
        return tuple(torch.from_numpy(np.asarray(g)).to(torch.bfloat16)
                     for g in (r.dq, r.dk, r.dv))


def kernel_with_its_own_lse(q, k, v):
    o, lse = _KernelWithItsOwnLse.apply(q, k, v)
    return {"O": o, "LSE": lse}


def test_gradients_are_checked_from_the_kernels_own_forward_outputs():
    common = dict(numerics="fa2", generate="normal", shape=(1, 1, 64, 32), seed=4,
                  backward=True, require_bit_exact=False, verbose=False)
    fed = simprec.validate(kernel_with_its_own_lse, **common)
    agreement = {o["name"]: o["bitwise_equal"] / o["values"] for o in fed.outputs}
    assert agreement["O"] == 1 and agreement["LSE"] == 56 / 64
    assert agreement["dQ"] == agreement["dK"] == agreement["dV"] == 1
    assert "parameter backward_from=kernel" in fed.text.splitlines()
    own = simprec.validate(kernel_with_its_own_lse, backward_from="emulation", **common)
    assert "parameter backward_from=emulation" in own.text.splitlines()
    assert min(o["bitwise_equal"] / o["values"] for o in own.outputs if o["name"][0] == "d") < 1
    with pytest.raises(ValueError, match="backward_from: expected 'auto', 'kernel' or 'emulation'"):
        simprec.validate(kernel_with_its_own_lse, backward_from="own", **common)


def test_auto_differentiates_the_emulation_where_the_backward_reads_a_base2_lse():
    # torch-flex keeps m + log2(l) for its backward pass; a kernel's returned natural LSE does
    # not give it back, so "auto" takes the emulation's own forward there, and the kernel's
    # O and LSE for numerics whose backward reads the natural LSE.
    common = dict(generate="normal", shape=(1, 1, 64, 32), seed=4, backward=True,
                  require_bit_exact=False, verbose=False)
    flex = simprec.validate(kernel_with_its_own_lse, numerics="torch-flex", **common)
    assert "parameter backward_from=emulation" in flex.text.splitlines()
    fa2 = simprec.validate(kernel_with_its_own_lse, numerics="fa2", **common)
    assert "parameter backward_from=kernel" in fa2.text.splitlines()


def test_locate_names_the_tile_a_description_gets_wrong():
    def kernel_in_key_blocks_of_32(q, k, v):
        return storch.attention(q, k, v, numerics="fa2,tile=64x32")

    report = simprec.validate(kernel_in_key_blocks_of_32, numerics="fa2,tile=64x64",
                              generate="normal", shape=(1, 2, 96, 16), seed=1, backward=True,
                              locate=True, require_bit_exact=False, verbose=False)
    located = report.locate
    # The first differing element of O, found again from the outputs.
    g = simprec.generate("normal", (1, 2, 96, 16), seed=1)
    q, k, v = (torch.from_numpy(g[n]).to(torch.bfloat16) for n in ("q", "k", "v"))
    kernel_o = kernel_in_key_blocks_of_32(q, k, v).float().numpy()
    differs = np.flatnonzero(kernel_o.ravel() != report.emulated["O"].ravel())
    first = located["differences"][0]
    assert first["output"] == "O" and first["index"] == differs[0]
    assert (first["h"], first["row"], first["column"]) == np.unravel_index(differs[0], (2, 96, 16))
    assert first["differing"] == len(differs)
    assert [d["output"] for d in located["differences"]] == ["O", "dQ", "dK"]  # dV agrees
    # The emulation's forward pass of that row: key blocks of 64, its O as the emulation wrote it.
    probe = located["probe"]
    assert [(b["first_key"], b["keys"]) for b in probe["blocks"]] == [(0, 64), (64, 32)]
    assert probe["o"] == list(report.emulated["O"][0, first["h"], first["row"]])
    tile = [a for a in located["alternatives"] if a["option"] == "tile" and a["value"] == "64x32"]
    assert len(tile) == 1 and tile[0]["kind"] == "parameter" and tile[0]["row_agrees"]
    assert tile[0]["outputs"] == {name: (96, 96) for name in ("O", "dQ", "dK", "dV")}
    assert "locate best parameter=tile value=64x32 rows-agreeing=96/96" in report.text.splitlines()
    # Roundings at a site are tried as well, as a spec writes them; none makes the row agree.
    p_cast = {a["value"] for a in located["alternatives"]
              if a["kind"] == "site" and a["option"] == "p_cast"}
    assert p_cast == {"bf16:rna", "bf16:rtz", "bf16:rup", "bf16:rdn", "bf16:rto"}
    assert not any(a["row_agrees"] for a in located["alternatives"] if a["kind"] == "site")


def test_locate_takes_the_forward_outputs_where_they_differ():
    report = simprec.validate(kernel_with_its_own_lse, numerics="fa2", generate="normal",
                              shape=(1, 1, 64, 32), seed=4, backward=True, locate=True,
                              require_bit_exact=False, verbose=False)
    located = report.locate
    assert [(d["output"], d["row"], d["differing"]) for d in located["differences"]] == \
        [("LSE", 0, 8)]
    assert located["row"]["rows"] == "query" and located["probe"] is not None
    # No choice of the numerics moves an LSE by 1%.
    assert not any(a["row_agrees"] for a in located["alternatives"])
    assert "locate best none" in report.text.splitlines()
    agreeing = simprec.validate(emulated_kernel, generate="normal", shape=(1, 1, 32, 16),
                                locate=True, verbose=False)
    assert agreeing.locate["differences"] == [] and agreeing.locate["row"] is None
    assert "locate none every output agrees" in agreeing.text.splitlines()


def test_locate_runs_with_the_supplied_device_functions():
    def exp2_one_percent_high(x):
        return (np.exp2(x.astype(np.float64)) * 1.01).astype(np.float32)

    functions = {"exp2": exp2_one_percent_high}

    def kernel_in_key_blocks_of_32(q, k, v):
        r = simprec.attention(*(t.float().numpy() for t in (q, k, v)), numerics="fa2,tile=64x32",
                              device_functions=functions, reference=False, baseline=False)
        return torch.from_numpy(r.o).to(torch.bfloat16)

    def tile_64x32(device_functions):
        report = simprec.validate(kernel_in_key_blocks_of_32, numerics="fa2,tile=64x64",
                                  generate="normal", shape=(1, 2, 96, 16), seed=1,
                                  device_functions=device_functions, locate=True,
                                  require_bit_exact=False, verbose=False)
        return [a for a in report.locate["alternatives"]
                if a["option"] == "tile" and a["value"] == "64x32"]

    # The search's runs take the kernel's exp2: key blocks of 32 then make every row agree.
    tile = tile_64x32(functions)
    assert len(tile) == 1 and tile[0]["row_agrees"]
    assert tile[0]["outputs"] == {"O": (96, 96)}
    # Without it, exp2 correctly rounded, they do not.
    assert tile_64x32(None)[0]["outputs"]["O"][0] < 96
