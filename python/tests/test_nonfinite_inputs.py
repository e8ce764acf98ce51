"""NaN and infinite inputs go through as SDPA lets them through: the emulation computes with
them as its arithmetic does, counts them and warns, and at fp32 its NaNs sit where PyTorch's own
math SDPA puts them on the same inputs."""

import warnings

import numpy as np
import torch

import simprec
import simprec.torch as storch

B, H, N, D = 1, 2, 12, 8
NAN, INF = float("nan"), float("inf")


def torch_math_sdpa(q, k, v, causal=False):
    """PyTorch's own math implementation of SDPA (the reference of its backends)."""
    if hasattr(torch.ops.aten, "_scaled_dot_product_attention_math"):  # PyTorch 2
        return torch.ops.aten._scaled_dot_product_attention_math(q, k, v, is_causal=causal)[0]
    return torch.nn.functional._scaled_dot_product_attention(q, k, v, None, 0.0, False,
                                                             causal)[0]  # PyTorch 1.13


def inputs(seed=5):
    g = simprec.generate("normal", (B, H, N, D), seed=seed, backward=True)
    return {n: torch.from_numpy(g[n]).float() for n in g}


def emulated(t, causal=False):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        o = storch.attention(t["q"], t["k"], t["v"], is_causal=causal, numerics="torch-math")
    return o, [w for w in caught if issubclass(w.category, storch.NonFiniteInputWarning)]


def nan_positions_agree(t, causal=False):
    o, caught = emulated(t, causal)
    expected = torch_math_sdpa(t["q"], t["k"], t["v"], causal)
    assert torch.equal(torch.isnan(o), torch.isnan(expected))
    finite = torch.isfinite(expected)
    assert torch.allclose(o[finite], expected[finite], atol=1e-5)
    return o, caught


def test_a_nan_in_a_query_row_makes_that_row_nan():
    t = inputs()
    t["q"][0, 1, 3, 0] = NAN
    o, caught = nan_positions_agree(t)
    assert torch.isnan(o[0, 1, 3]).all() and torch.isnan(o).sum() == D
    assert len(caught) == 1 and "query 1 NaN and 0 infinite" in str(caught[0].message)


def test_a_nan_key_reaches_every_row_that_weighs_it():
    t = inputs()
    t["k"][0, 0, 5, 2] = NAN
    o, _ = nan_positions_agree(t)
    assert torch.isnan(o[0, 0]).all() and not torch.isnan(o[0, 1]).any()
    # Causal: the rows before key 5 never weigh it and stay finite, as in a flash kernel, which
    # skips masked keys. (PyTorch's math SDPA adds -inf to the NaN score instead, which stays
    # NaN: there those rows are NaN too.)
    o, _ = emulated(t, causal=True)
    assert torch.isnan(o[0, 0]).all(dim=-1).tolist() == [i >= 5 for i in range(N)]


def test_a_nan_value_makes_its_column_nan():
    t = inputs()
    t["v"][0, 0, 7, 4] = NAN
    o, _ = nan_positions_agree(t)
    assert torch.isnan(o[0, 0, :, 4]).all() and torch.isnan(o).sum() == N


def test_a_key_with_minus_infinite_scores_gets_probability_zero():
    t = inputs()
    t["q"][..., 0] = t["q"][..., 0].abs() + 0.5  # every query weighs dimension 0 positively
    t["k"][0, 0, 6, 0] = -INF  # so key 6's score is -inf in every row
    o, caught = nan_positions_agree(t)
    assert torch.isfinite(o).all()
    kept = [j for j in range(N) if j != 6]
    without = storch.attention(t["q"][:, :1], t["k"][:, :1, kept], t["v"][:, :1, kept],
                               numerics="torch-math")
    assert torch.equal(o[:, :1], without)
    assert "key 0 NaN and 1 infinite" in str(caught[0].message)


def test_an_infinite_value_gives_infinities_and_nans_as_the_arithmetic_does():
    t = inputs()
    t["v"][0, 1, 2, 3] = INF
    nan_positions_agree(t)


def test_every_score_minus_infinite_is_zero_over_zero():
    t = inputs()
    t["q"][..., 0] = t["q"][..., 0].abs() + 0.5
    t["k"][0, 0, :, 0] = -INF  # every score of head 0 is -inf
    o, _ = emulated(t)
    assert torch.isnan(o[0, 0]).all() and torch.isfinite(o[0, 1]).all()


def test_gradients_through_nan_inputs_are_nan_where_the_arithmetic_puts_them():
    t = inputs()
    t["q"][0, 0, 4, 1] = NAN
    q, k, v = (t[n].clone().requires_grad_(True) for n in "qkv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", storch.NonFiniteInputWarning)
        o = storch.attention(q, k, v, numerics="torch-math")
        o.backward(t["do"])
    q2, k2, v2 = (t[n].clone().requires_grad_(True) for n in "qkv")
    torch_math_sdpa(q2, k2, v2).backward(t["do"])
    for ours, theirs in ((q.grad, q2.grad), (k.grad, k2.grad), (v.grad, v2.grad)):
        assert torch.equal(torch.isnan(ours), torch.isnan(theirs))


def test_simprec_attention_counts_them_and_runs_its_reference():
    g = simprec.generate("normal", (B, H, N, D), seed=5)
    g["q"][0, 1, 3, 0] = np.nan
    g["v"][0, 0, 2, 1] = -np.inf
    r = simprec.attention(g["q"], g["k"], g["v"], numerics="fa2")
    assert r.nonfinite_inputs == {"q": {"nan": 1, "inf": 0}, "k": {"nan": 0, "inf": 0},
                                  "v": {"nan": 0, "inf": 1}}
    assert np.isnan(r.o[0, 1, 3]).all()
    # The NaN rule: where the reference is NaN too, the element agrees.
    assert r.metrics["o"]["nonfinite_mismatch"] == 0 and r.metrics["o"]["nan_count"] > 0

