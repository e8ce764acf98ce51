"""Messages off the happy path: every wrong argument of the public Python functions is named
with the value given and what was expected (never pybind11's list of signatures, never an
AttributeError from inside), double backward is refused where it is asked for, and a device
this PyTorch does not have is a ValueError."""

import numpy as np
import pytest
import torch

import simprec
import simprec.torch as storch

F32 = np.zeros((1, 8, 4))
T32 = torch.zeros(1, 1, 8, 4)


def test_double_backward_is_refused_by_name():
    g = simprec.generate("normal", (1, 1, 16, 8), seed=2)
    q, k, v = (torch.from_numpy(g[n]).float().requires_grad_(True) for n in "qkv")
    o = storch.attention(q, k, v)
    with pytest.raises(NotImplementedError,
                       match="simprec.torch.attention: double backward \\(create_graph=True"):
        torch.autograd.grad(o.square().sum(), (q, k, v), create_graph=True)
    # A plain backward still works, on a fresh graph.
    o = storch.attention(q, k, v)
    dq, = torch.autograd.grad(o.square().sum(), q)
    assert dq.shape == q.shape


def test_a_numpy_array_for_a_tensor_is_a_type_error_naming_it():
    with pytest.raises(TypeError, match="query: expected a torch.Tensor, got ndarray"):
        storch.attention(F32, F32, F32)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA tensors")
def test_cuda_tensors_are_the_documented_value_error():
    with pytest.raises(ValueError, match="query: expected a CPU tensor .* got one on cuda"):
        storch.attention(T32.cuda(), T32, T32)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this PyTorch has CUDA")
def test_a_device_this_pytorch_lacks_is_a_value_error():
    with pytest.raises(ValueError, match="device='cuda': this PyTorch .* has no CUDA device"):
        simprec.validate(lambda q, k, v: q, generate="normal", shape=(1, 1, 8, 8),
                         device="cuda", verbose=False)
    with pytest.raises(ValueError, match="device='cuda:1': this PyTorch"):
        simprec.discover(lambda q, k, v: q, input_format="bf16", tensors="torch",
                         device="cuda:1", verbose=False)


def test_validate_at_fp32_generates_fp32_tensors():
    def fp32_attention(q, k, v):
        assert q.dtype == torch.float32
        s = q @ k.transpose(-1, -2) / np.sqrt(q.shape[-1])
        return torch.softmax(s, dim=-1) @ v

    report = simprec.validate(fp32_attention, numerics="fp32", format="fp32", generate="normal",
                              shape=(1, 2, 32, 8), require_bit_exact=False, verbose=False)
    assert "input Q format=fp32 shape=[1,2,32,8]" in report.text.splitlines()
    o = report.outputs[0]
    assert o["name"] == "O" and o["values"] == 2 * 32 * 8 and o["bitwise_equal"] > 0


BAD_CALLS = [
    # (call, exception, message)
    (lambda: simprec.attention(F32, F32, F32, tile=64), TypeError, r"tile=64: expected None or "),
    (lambda: simprec.attention(F32, F32, F32, scale="0.1"), TypeError,
     r"scale='0.1': expected a positive number or None, got str"),
    (lambda: simprec.attention(F32, F32, F32, causal="yes"), TypeError,
     r"causal='yes': expected True or False"),
    (lambda: simprec.attention(F32, F32, F32, set="s=fp32:rne"), TypeError,
     r"set='s=fp32:rne': expected a list of strings .* got a str"),
    (lambda: simprec.attention(F32, F32, F32, numerics=None), TypeError,
     r"numerics=None: expected a numerics spec"),
    (lambda: simprec.attention(F32, F32, F32, format=16), TypeError, r"format=16: expected a str"),
    (lambda: simprec.generate("normal", 5), TypeError, r"shape=5: expected a tuple of integers"),
    (lambda: simprec.generate(3, (1, 1, 4, 4)), TypeError, r"kind=3: expected a generator's"),
    (lambda: simprec.round(np.zeros(3), 16), TypeError, r"format=16: expected a str"),
    (lambda: simprec.add(np.zeros(3), np.zeros(3), "bf16", 0), TypeError,
     r"rounding=0: expected a str"),
    (lambda: simprec.matmul(np.zeros((2, 2), np.float32), np.zeros((2, 2), np.float32), model=3),
     TypeError, r"model=3: expected a str"),
    (lambda: simprec.quantize(np.zeros(32, np.float32), "mxfp4", block_size="32"), TypeError,
     r"block_size='32': expected a block size"),
    (lambda: simprec.format_info(3), TypeError, r"format=3: expected a str"),
    (lambda: simprec.canonical_numerics(3), TypeError, r"numerics=3: expected a numerics spec"),
    (lambda: simprec.run_experiment(3), TypeError, r"file=3: expected a path"),
    (lambda: simprec.device_function("numpy", "exp", "x"), TypeError,
     r"x='x': expected float32 values"),
    (lambda: storch.attention(T32, T32, T32, scale="x"), TypeError, r"scale='x': expected"),
    (lambda: storch.attention(T32, T32, T32, mitigations="beta-rowmax:2"), TypeError,
     r"mitigations='beta-rowmax:2': expected a list of strings"),
    (lambda: simprec.validate(None, generate="normal"), TypeError,
     r"fn: expected a callable kernel taking \(q, k, v\), got NoneType"),
    (lambda: simprec.validate(lambda q, k, v: q, generate="normal", shpe=(1, 1, 8, 8)),
     TypeError, r"unexpected keyword argument 'shpe' \(did you mean 'shape'\?\)"),
    (lambda: simprec.attention(F32, F32, F32, formt="fp16"), TypeError,
     r"attention: unexpected keyword argument 'formt' \(did you mean 'format'\?\)"),
    (lambda: storch.attention(T32, T32, T32, numeric="fa2"), TypeError,
     r"attention: unexpected keyword argument 'numeric' \(did you mean 'numerics'\?\)"),
    (lambda: simprec.round(np.zeros(3), "bf16", mode="rne"), TypeError,
     r"round: unexpected keyword argument 'mode'"),
    (lambda: simprec.validate(lambda q, k, v: q, inputs=F32), TypeError,
     r"inputs: expected a tuple \(q, k, v\)"),
]


@pytest.mark.parametrize("call, exception, message", BAD_CALLS,
                         ids=[m for _, _, m in BAD_CALLS])
def test_wrong_arguments_are_named_with_what_was_expected(call, exception, message):
    with pytest.raises(exception, match=message) as raised:
        call()
    assert "incompatible function arguments" not in str(raised.value)


def test_a_numpy_dtype_is_taken_where_a_dtype_name_is():
    bits = simprec.round(np.array([1.5, -2.25]), "bf16", encode=True)
    assert simprec.decode(bits, "bf16", dtype=np.float32).dtype == np.float32
