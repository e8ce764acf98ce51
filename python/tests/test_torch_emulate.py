"""simprec.torch.emulate: a small model under the block gives, bit for bit, the output and
gradients of the same model written by hand with simprec.torch.linear and
simprec.torch.attention, and PyTorch's own arithmetic again after the block."""

import pytest
import torch
import torch.nn.functional as F

import simprec.torch as storch

E, HEADS, L, N = 32, 2, 16, 2
ATTENTION = dict(numerics="fa2", format="bf16")
BF16 = dict(model="tc:sm90-wgmma-bf16", out_format="bf16")


class Small(torch.nn.Module):
    """Linear, self-attention (nn.MultiheadAttention: its projections are F.linear calls with its
    own weights), feed-forward: every road emulate takes."""

    def __init__(self):
        super().__init__()
        self.inp = torch.nn.Linear(E, E)
        self.attn = torch.nn.MultiheadAttention(E, HEADS)
        self.up = torch.nn.Linear(E, 2 * E)
        self.down = torch.nn.Linear(2 * E, E, bias=False)

    def forward(self, x):
        h = self.inp(x)
        a, _ = self.attn(h, h, h, need_weights=False)
        return self.down(F.gelu(self.up(h + a)))


def by_hand(m, x, linear):
    """Small's forward with every GEMM and the attention written as simprec calls."""
    h = linear(x, m.inp.weight, m.inp.bias)
    q, k, v = linear(h, m.attn.in_proj_weight, m.attn.in_proj_bias).chunk(3, dim=-1)
    head = E // HEADS

    def heads(t):  # (L, N, E) -> (N, H, L, head)
        return t.reshape(L, N, HEADS, head).permute(1, 2, 0, 3)

    o = storch.attention(heads(q), heads(k), heads(v), **ATTENTION)
    o = o.permute(2, 0, 1, 3).reshape(L * N, E)
    a = linear(o, m.attn.out_proj.weight, m.attn.out_proj.bias).view(L, N, E)
    return linear(F.gelu(linear(h + a, m.up.weight, m.up.bias)), m.down.weight, None)


def outputs_and_gradients(m, x, run):
    m.zero_grad()
    x = x.clone().requires_grad_(True)
    y = run(x)
    y.backward(torch.linspace(-1, 1, y.numel()).reshape(y.shape))
    return [y.detach(), x.grad] + [p.grad.clone() for p in m.parameters()]


def same(a, b):
    return len(a) == len(b) and all(torch.equal(s, t) for s, t in zip(a, b))


@pytest.fixture
def model_and_input():
    torch.manual_seed(0)
    return Small(), torch.randn(L, N, E)


def test_the_model_under_emulate_is_the_hand_built_one(model_and_input):
    m, x = model_and_input
    own = outputs_and_gradients(m, x, m)
    with storch.emulate(m, linear="bf16", attention=ATTENTION) as emulated:
        assert emulated is m
        under = outputs_and_gradients(m, x, m)
    hand = outputs_and_gradients(m, x, lambda t: by_hand(
        m, t, lambda i, w, b: storch.linear(i, w, b, **BF16)))
    assert same(under, hand)
    assert not same(under, own)
    assert same(outputs_and_gradients(m, x, m), own)  # PyTorch's own after the block
    assert F.linear is torch._C._nn.linear and "forward" not in m.inp.__dict__


def test_a_recipe_runs_every_linear_layer(model_and_input):
    m, x = model_and_input
    recipe = storch.DelayedScaling(fp8_format="e4m3")
    with storch.emulate(m, linear=recipe, attention=ATTENTION):
        under = [outputs_and_gradients(m, x, m) for _ in range(2)]
    other = storch.DelayedScaling(fp8_format="e4m3")
    hand = [outputs_and_gradients(m, x, lambda t: by_hand(m, t, other.linear)) for _ in range(2)]
    assert same(under[0], hand[0]) and same(under[1], hand[1])
    assert len(recipe.state_dict(m)) == 5  # inp, in_proj, out_proj, up, down
    assert not same(under[0], under[1])  # the second step's scales come from the first's amaxes


def test_calls_with_other_weights_stay_pytorchs(model_and_input):
    m, x = model_and_input
    w = torch.randn(8, E)
    with storch.emulate(m, linear="bf16"):
        inside = F.linear(x, w)
    assert torch.equal(inside, torch._C._nn.linear(x, w))


def test_everything_is_put_back_after_an_exception(model_and_input):
    m, _ = model_and_input
    originals = (F.linear, F.multi_head_attention_forward, torch._native_multi_head_attention)
    with pytest.raises(RuntimeError, match="inside"):
        with storch.emulate(m, linear="bf16", attention="fa2"):
            raise RuntimeError("inside")
    assert (F.linear, F.multi_head_attention_forward,
            torch._native_multi_head_attention) == originals
    assert all("forward" not in layer.__dict__ for layer in (m.inp, m.up, m.down))


def test_the_fused_fast_path_is_refused_with_linear_alone():
    torch.manual_seed(1)
    m = torch.nn.MultiheadAttention(E, HEADS, batch_first=True).eval()  # its fast path's terms
    x = torch.randn(N, L, E)
    with torch.no_grad(), storch.emulate(m, linear="bf16"):
        with pytest.raises(ValueError, match="torch._native_multi_head_attention .* pass "
                                             "attention= as well"):
            m(x, x, x)
    with torch.no_grad(), storch.emulate(m, linear="bf16", attention=ATTENTION):
        fast = m(x, x, x)[0]  # routed through Python: the same as in training
    with storch.emulate(m, linear="bf16", attention=ATTENTION):
        trained = m(x, x, x)[0]
    assert torch.equal(fast, trained.detach())


@pytest.mark.parametrize("arguments, error, message", [
    (dict(model=torch.ones(2), linear="bf16"), TypeError,
     "model: expected a torch.nn.Module, got Tensor"),
    (dict(model=torch.nn.Linear(2, 2)), ValueError, "nothing to emulate"),
    (dict(model=torch.nn.Linear(2, 2), linear="bf61"), TypeError,
     "linear: unexpected keyword argument 'bf61' \\(did you mean 'bf16'\\?\\) \\(a preset"),
    (dict(model=torch.nn.Linear(2, 2), linear=3), TypeError,
     "linear=3: expected None, a preset \\(bf16, fp16\\)"),
    (dict(model=torch.nn.Linear(2, 2), linear={"modle": "x"}), TypeError,
     "did you mean 'model'"),
    (dict(model=torch.nn.Linear(2, 2), attention=3), TypeError,
     "attention=3: expected None, a numerics spec"),
    (dict(model=torch.nn.Linear(2, 2), linaer="bf16"), TypeError,
     "emulate: unexpected keyword argument 'linaer' \\(did you mean 'linear'\\?\\)"),
])
def test_bad_arguments_are_named(arguments, error, message):
    with pytest.raises(error, match=message):
        with storch.emulate(**arguments):
            pass
