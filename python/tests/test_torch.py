"""simprec.torch: SDPA's signature, DLPack in and out, the emulated backward through autograd,
and training a small model on the CPU."""

import numpy as np
import pytest
import torch

import simprec
import simprec.torch as storch


def bf16_inputs(shape=(2, 2, 48, 16), seed=0, backward=True):
    g = simprec.generate("normal", shape, seed=seed, backward=backward)
    return {n: torch.from_numpy(g[n]).to(torch.bfloat16) for n in g}


def test_forward_and_backward_equal_simprec_attention_bit_for_bit():
    t = bf16_inputs()
    q, k, v = (t[n].clone().requires_grad_(True) for n in "qkv")
    o = storch.attention(q, k, v, numerics="fa2", is_causal=True)
    assert o.dtype == torch.bfloat16 and o.shape == q.shape
    o.backward(t["do"])
    bits = {n: t[n].view(torch.int16).numpy().view(np.uint16) for n in ("q", "k", "v", "do")}
    r = simprec.attention(bits["q"], bits["k"], bits["v"], bits["do"], input_format="bf16",
                          causal=True)
    assert np.array_equal(o.detach().double().numpy(), r.o)
    for grad, name in ((q.grad, "dq"), (k.grad, "dk"), (v.grad, "dv")):
        assert grad.dtype == torch.bfloat16
        assert np.array_equal(grad.double().numpy(), getattr(r, name))


def test_float32_tensors_and_non_contiguous_views_work_as_in_sdpa():
    g = simprec.generate("normal", (1, 16, 2, 8), seed=4)
    q = torch.from_numpy(g["q"]).float().transpose(1, 2)  # (B, H, N, d) view, not contiguous
    assert not q.is_contiguous()
    o = storch.attention(q, q, q, numerics="fp32", format="fp32")
    assert o.dtype == torch.float32
    x = q.double()
    expected = torch.softmax(x @ x.transpose(-1, -2) / np.sqrt(8), dim=-1) @ x
    assert torch.max(torch.abs(o.double() - expected)) < 1e-5


def test_fp64_numerics_agree_with_torch_sdpa_and_its_gradients():
    g = simprec.generate("normal", (1, 2, 24, 8), seed=6, backward=True)
    q, k, v = (torch.from_numpy(g[n]).requires_grad_(True) for n in "qkv")
    o = storch.attention(q, k, v, numerics="fp64", format="fp64", scale=0.3)
    o.backward(torch.from_numpy(g["do"]))
    q2, k2, v2 = (torch.from_numpy(g[n]).requires_grad_(True) for n in "qkv")
    s = (q2 @ k2.transpose(-1, -2)) * 0.3
    o2 = torch.softmax(s, dim=-1) @ v2
    o2.backward(torch.from_numpy(g["do"]))
    assert torch.max(torch.abs(o - o2)) < 1e-12
    for a, b in ((q.grad, q2.grad), (k.grad, k2.grad), (v.grad, v2.grad)):
        assert torch.max(torch.abs(a - b)) < 1e-12


def test_a_small_model_trains_with_emulated_attention():
    torch.manual_seed(0)

    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = torch.nn.Linear(16, 48)
            self.out = torch.nn.Linear(16, 1)

        def forward(self, x):
            q, k, v = self.qkv(x).unsqueeze(1).chunk(3, dim=-1)
            h = storch.attention(q, k, v, numerics="fa2", format="bf16", is_causal=True)
            return self.out(h.squeeze(1)).mean(dim=1)

    model = Tiny()
    x = torch.randn(8, 32, 16)
    y = x[:, :, 0].mean(dim=1, keepdim=True)
    optimiser = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for _ in range(40):
        optimiser.zero_grad()
        loss = torch.mean((model(x) - y) ** 2)
        loss.backward()
        optimiser.step()
        losses.append(loss.item())
    assert model.qkv.weight.grad is not None and torch.all(torch.isfinite(model.qkv.weight.grad))
    # Deterministic (fixed seeds, bit-exact emulation): the fit improves by far more than noise.
    assert losses[-1] < 0.5 * losses[0]


def test_dlpack_round_trip_keeps_torch_tensors_without_copies():
    x = torch.randn(1000)
    r = simprec.round(x, "bf16")
    assert isinstance(r, torch.Tensor) and r.dtype == torch.float32
    assert torch.equal(r, x.to(torch.bfloat16).float())  # torch's own RNE conversion
    out = torch.empty(1000)
    simprec.round(x, "bf16", out=out.numpy())
    assert torch.equal(out, r)
    # Encodings come back as a signed torch dtype of their width (torch 1.13 has no uint16).
    bits = simprec.round(x, "bf16", encode=True)
    assert bits.dtype == torch.int16 and torch.equal(bits.view(torch.bfloat16).float(), r)


def test_bad_torch_input_raises_naming_the_argument():
    t = bf16_inputs(backward=False)
    with pytest.raises(ValueError, match="attn_mask and is_causal=True together"):
        storch.attention(t["q"], t["k"], t["v"], attn_mask=torch.ones(48, 48, dtype=torch.bool),
                         is_causal=True)
    with pytest.raises(TypeError, match="attn_mask: expected a boolean or floating-point"):
        storch.attention(t["q"], t["k"], t["v"], attn_mask=torch.ones(48, 48, dtype=torch.int32))
    with pytest.raises(ValueError, match="dropout_p=0.1"):
        storch.attention(t["q"], t["k"], t["v"], dropout_p=0.1)
    with pytest.raises(ValueError, match="query: expected a CPU tensor.*meta"):
        storch.attention(t["q"].to("meta"), t["k"], t["v"])
    with pytest.raises(TypeError, match="key: expected a floating-point tensor"):
        storch.attention(t["q"], torch.zeros(2, 2, 48, 16, dtype=torch.int32), t["v"])
    with pytest.raises(TypeError, match="value: expected a torch.Tensor"):
        storch.attention(t["q"], t["k"], [1.0])
    with pytest.raises(ValueError, match="shape mismatch"):
        storch.attention(t["q"], t["k"][..., :8], t["v"])


def test_on_backward_receives_the_emulated_backward_and_its_delta():
    t = bf16_inputs()
    q, k, v = (t[n].clone().requires_grad_(True) for n in "qkv")
    calls = []
    o = storch.attention(q, k, v, numerics="paper-a", is_causal=True, on_backward=calls.append)
    o.backward(t["do"])
    assert len(calls) == 1 and isinstance(calls[0], storch.BackwardCall)
    call = calls[0]
    assert torch.equal(call.grad_out, t["do"]) and call.query is not None
    bits = {n: t[n].view(torch.int16).numpy().view(np.uint16) for n in ("q", "k", "v", "do")}
    r = simprec.attention(bits["q"], bits["k"], bits["v"], bits["do"], input_format="bf16",
                          numerics="paper-a", causal=True)
    # delta = rowsum(dO o O) of the emulated O, as the CLI computes it; dq is the gradient.
    assert np.array_equal(call.result.delta, r.delta)
    assert np.array_equal(call.result.dq, q.grad.double().numpy())
    with pytest.raises(TypeError, match="on_backward: expected a callable, got int"):
        storch.attention(q, k, v, on_backward=3)
