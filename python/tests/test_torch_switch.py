"""simprec.torch.emulate_attention reaches PyTorch's own attention modules: an
nn.TransformerEncoderLayer under the switch gives the emulation's bits (checked against
simprec.attention called on the same Q, K, V), in training and on the eval-mode fast path, and
PyTorch's own results outside it."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import simprec
import simprec.torch as storch

E, HEADS, L, N = 16, 2, 24, 3
HEAD = E // HEADS
SPEC = dict(numerics="fa2", format="bf16")  # bf16 on float32 tensors: far from torch's own


def dyadic(shape, generator, bound=4, denominator=8):
    """Small multiples of 1/denominator: products and sums of a few of them are exact in fp32, so
    the projections give the same Q, K, V whatever order a GEMM sums in."""
    return torch.randint(-bound, bound + 1, shape, generator=generator).float() / denominator


def encoder_layer(seed=0):
    torch.manual_seed(seed)
    layer = torch.nn.TransformerEncoderLayer(E, HEADS, dim_feedforward=32, dropout=0.0,
                                             batch_first=True)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in layer.parameters():
            p.copy_(dyadic(p.shape, g))
        layer.norm1.weight.fill_(1.0)
        layer.norm2.weight.fill_(1.0)
    return layer


def inputs(seed=1):
    g = torch.Generator().manual_seed(seed)
    return dyadic((N, L, E), g, bound=8, denominator=16), torch.randn(N, L, E, generator=g)


def projected(layer, x):
    """Q, K, V (N, H, L, head) as float64 numpy arrays, computed here in float64 (exact)."""
    w = layer.self_attn.in_proj_weight.detach().double().numpy()
    b = layer.self_attn.in_proj_bias.detach().double().numpy()
    qkv = x.double().numpy() @ w.T + b
    return [qkv[..., i * E:(i + 1) * E].reshape(N, L, HEADS, HEAD).transpose(0, 2, 1, 3).copy()
            for i in range(3)]


def layer_after_attention(layer, x, o):
    """The rest of the layer (post-norm, ReLU) from the attention's output o (N, H, L, head),
    with PyTorch's functions on the layout nn.MultiheadAttention gives them."""
    o = o.permute(2, 0, 1, 3).reshape(L * N, E)
    sa = F.linear(o, layer.self_attn.out_proj.weight, layer.self_attn.out_proj.bias)
    y = layer.norm1(x + sa.view(L, N, E).transpose(0, 1))
    return layer.norm2(y + layer.linear2(F.relu(layer.linear1(y))))


def expected_forward(layer, x):
    q, k, v = projected(layer, x)
    r = simprec.attention(q, k, v, reference=False, baseline=False, **SPEC)
    return layer_after_attention(layer, x, torch.from_numpy(r.o).float())


def test_encoder_layer_forward_is_the_emulations_in_training_and_on_the_fast_path():
    layer = encoder_layer()
    x, _ = inputs()
    own = layer(x).detach()
    expected = expected_forward(layer, x).detach()
    with storch.emulate_attention(**SPEC):
        trained = layer(x).detach()
        layer.eval()
        with torch.no_grad():
            fast = layer(x)  # torch._transformer_encoder_layer_fwd's road
    assert torch.equal(trained, expected)
    assert torch.equal(fast, expected)
    assert not torch.equal(own, expected)
    # Outside the switch, PyTorch's own again (eval mode: its fast path).
    with torch.no_grad():
        assert torch.allclose(layer(x), own, atol=1e-5) and not torch.equal(layer(x), expected)
    layer.train()
    assert torch.equal(layer(x).detach(), own)


def test_encoder_layer_backward_is_the_emulations():
    layer = encoder_layer()
    x, weights = inputs()

    def grad_of_x(forward):
        xg = x.clone().requires_grad_(True)
        (forward(xg) * weights).sum().backward()
        return xg.grad

    def by_hand(xg):
        # The same layer written out, with the attention core through simprec.torch.attention.
        qkv = F.linear(xg.transpose(0, 1), layer.self_attn.in_proj_weight,
                       layer.self_attn.in_proj_bias)
        q, k, v = (t.reshape(L, N, HEADS, HEAD).permute(1, 2, 0, 3) for t in qkv.chunk(3, -1))
        return layer_after_attention(layer, xg, storch.attention(q, k, v, **SPEC))

    own = grad_of_x(layer)
    calls = []
    with storch.emulate_attention(on_backward=calls.append, **SPEC):
        switched = grad_of_x(layer)
    expected = grad_of_x(by_hand)
    assert torch.equal(switched, expected) and not torch.equal(switched, own)
    # The emulated backward ran on the Q, K, V and dO simprec.attention gives these gradients for.
    (call,) = calls
    q, k, v = projected(layer, x)
    assert np.array_equal(call.query.detach().double().numpy(), q)
    do = np.ascontiguousarray(call.grad_out.double().numpy())
    r = simprec.attention(q, k, v, do, reference=False,
                          baseline=False, **SPEC)
    assert np.array_equal(call.result.dq, r.dq) and np.array_equal(call.result.dv, r.dv)


def test_everything_is_put_back_even_after_an_exception():
    before = (F.multi_head_attention_forward, torch._native_multi_head_attention,
              torch._transformer_encoder_layer_fwd,
              getattr(F, "scaled_dot_product_attention", None))
    with pytest.raises(ZeroDivisionError):
        with storch.emulate_attention(**SPEC):
            assert F.multi_head_attention_forward is not before[0]
            1 / 0
    after = (F.multi_head_attention_forward, torch._native_multi_head_attention,
             torch._transformer_encoder_layer_fwd,
             getattr(F, "scaled_dot_product_attention", None))
    assert all(a is b for a, b in zip(before, after))


def _mha_by_hand(mha, x, **attention):
    """nn.MultiheadAttention's self-attention on x (L, N, E) written out: its projections around
    simprec.torch.attention called with `attention`."""
    q, k, v = (t.reshape(L, N, HEADS, HEAD).permute(1, 2, 0, 3)
               for t in F.linear(x, mha.in_proj_weight, mha.in_proj_bias).chunk(3, -1))
    o = storch.attention(q, k, v, **attention, **SPEC)
    return F.linear(o.permute(2, 0, 1, 3).reshape(L * N, E), mha.out_proj.weight,
                    mha.out_proj.bias).view(L, N, E)


def test_multihead_attention_with_a_causal_mask_and_what_is_refused():
    torch.manual_seed(3)
    mha = torch.nn.MultiheadAttention(E, HEADS)
    x = torch.randn(L, N, E)
    causal = torch.nn.Transformer.generate_square_subsequent_mask(L)
    with storch.emulate_attention(**SPEC):
        out, weights = mha(x, x, x, attn_mask=causal)
        assert weights.shape == (N, L, L)  # PyTorch's own softmax, beside the emulated output
        with pytest.raises(ValueError, match="attn_mask: shape \\(3, 3\\), expected"):
            mha(x, x, x, attn_mask=torch.zeros(3, 3))
    assert torch.equal(out, _mha_by_hand(mha, x, is_causal=True))


def test_multihead_attention_masks_run_as_the_bias_pytorch_adds():
    """Any attn_mask (boolean: True masks) and a key padding mask become the additive bias that
    nn.MultiheadAttention's own math adds to the scaled scores; the emulation takes it as SDPA's
    float attn_mask."""
    torch.manual_seed(4)
    mha = torch.nn.MultiheadAttention(E, HEADS)
    x = torch.randn(L, N, E)
    banned = torch.rand(L, L) < 0.2
    banned.fill_diagonal_(False)
    padding = torch.zeros(N, L, dtype=torch.bool)
    padding[0, -3:] = True
    with storch.emulate_attention(**SPEC):
        out, weights = mha(x, x, x, attn_mask=banned, key_padding_mask=padding)
    bias = torch.zeros(N, HEADS, L, L).masked_fill(banned, -math.inf).masked_fill(
        padding.view(N, 1, 1, L), -math.inf)
    assert torch.equal(out, _mha_by_hand(mha, x, attn_mask=bias))
    reference, _ = mha(x, x, x, attn_mask=banned, key_padding_mask=padding)  # PyTorch's own
    assert (out - reference).abs().max() < 0.05 and not torch.equal(out, reference)
    assert torch.all(weights[0, :, -3:] == 0)  # the padded keys get no weight


@pytest.mark.skipif(not hasattr(F, "scaled_dot_product_attention"),
                    reason="PyTorch before 2.0 has no F.scaled_dot_product_attention")
def test_scaled_dot_product_attention_is_replaced():
    g = torch.Generator().manual_seed(4)
    q, k, v = (torch.randn(1, 2, 16, 8, generator=g) for _ in range(3))
    attends = torch.ones(16, 16, dtype=torch.bool).tril()  # SDPA's boolean mask: True takes part
    with storch.emulate_attention(**SPEC):
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        assert torch.equal(F.scaled_dot_product_attention(q, k, v, attn_mask=attends), o)
        window = attends & ~torch.ones(16, 16, dtype=torch.bool).tril(-4)  # 4 keys back
        assert torch.equal(F.scaled_dot_product_attention(q, k, v, attn_mask=window),
                           storch.attention(q, k, v, attn_mask=window, **SPEC))
    assert torch.equal(o, storch.attention(q, k, v, is_causal=True, **SPEC))
    assert not torch.equal(F.scaled_dot_product_attention(q, k, v, is_causal=True), o)


def test_a_bad_spec_fails_on_entering():
    with pytest.raises(ValueError, match="numerics='fa3'"):
        with storch.emulate_attention("fa3"):
            pass
    assert not F.multi_head_attention_forward.__name__.endswith("_emulated")


def test_decoder_layer_self_and_cross_attention_are_routed_with_their_masks():
    torch.manual_seed(5)
    layer = torch.nn.TransformerDecoderLayer(E, HEADS, dim_feedforward=32, dropout=0.0,
                                             batch_first=True)
    g = torch.Generator().manual_seed(6)
    tgt, memory = torch.randn(N, L, E, generator=g), torch.randn(N, L + 8, E, generator=g)
    causal = torch.nn.Transformer.generate_square_subsequent_mask(L)
    own = layer(tgt, memory, tgt_mask=causal).detach()
    calls = []
    with storch.emulate_attention("fp32", on_backward=calls.append):
        near = layer(tgt, memory, tgt_mask=causal)
        near.sum().backward()
        again = layer(tgt, memory, tgt_mask=causal).detach()
    padded = torch.zeros(N, L + 8, dtype=torch.bool)
    padded[:, -5:] = True
    with storch.emulate_attention(**SPEC):
        far = layer(tgt, memory, tgt_mask=causal).detach()
        padded_far = layer(tgt, memory, tgt_mask=causal, memory_key_padding_mask=padded)
    padded_own = layer(tgt, memory, tgt_mask=causal, memory_key_padding_mask=padded).detach()
    assert torch.allclose(padded_far.detach(), padded_own, atol=0.1)  # bf16 against PyTorch's
    # fp32 emulation: PyTorch's own result to rounding, so the causal mask was honoured (without
    # it the self-attention differs by far more, below); bf16: visibly another arithmetic.
    assert len(calls) == 2  # self-attention and cross-attention, each differentiated once
    assert torch.allclose(near.detach(), own, atol=1e-4) and torch.equal(again, near.detach())
    assert not torch.allclose(far, own, atol=1e-3)
    unmasked = layer(tgt, memory).detach()
    assert not torch.allclose(unmasked, own, atol=1e-2)


def test_causal_masks_are_recognised_in_both_boolean_meanings():
    from simprec._torch_modules import causal_mask_of
    attends = torch.ones(6, 6, dtype=torch.bool).tril()  # SDPA: True takes part
    masked = ~attends  # nn.MultiheadAttention: True is masked out
    float_mask = torch.nn.Transformer.generate_square_subsequent_mask(6)
    assert causal_mask_of(attends, 6, 6, true_attends=True)
    assert not causal_mask_of(masked, 6, 6, true_attends=True)  # the future only, for SDPA
    assert causal_mask_of(masked, 6, 6, true_attends=False)
    assert not causal_mask_of(attends, 6, 6, true_attends=False)
    assert causal_mask_of(float_mask, 6, 6, True) and causal_mask_of(float_mask, 6, 6, False)
    assert not causal_mask_of(float_mask.T, 6, 6, False)
    assert not causal_mask_of(float_mask[:, :5], 6, 5, False)
