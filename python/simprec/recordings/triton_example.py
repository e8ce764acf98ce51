"""The Triton example kernel (examples/python/triton_flash_forward.py) as recorded on an H100
(tests/data/triton_example): the recorded cases, their inputs, and TRITON_FLASH_FORWARD_SPEC,
the numerics spec that describes the kernel bit for bit: its kernel model,
lib/attention/models/triton-flash-forward.toml, which maps each step of the kernel to the spec
item it needs. The CPU-only comparison (compare_triton, python/tests/test_triton_example.py) and
the GPU validation (examples/python/validate_on_gpu.py) read the same name.
"""

from simprec.recordings.inputs import SEED, heads_bf16_bits

TRITON_FLASH_FORWARD_SPEC = "triton-flash-forward"

CASES = {  # name: (B, H, N, d, causal, kind)
    "n256_d64": (1, 2, 256, 64, False, "normal"),
    "n256_d64_causal": (1, 2, 256, 64, True, "normal"),
    "n512_d128": (1, 2, 512, 128, False, "normal"),
    "n512_d64_repmax": (1, 2, 512, 64, False, "repeated-max"),
    "n512_d64_repmax_causal": (1, 2, 512, 64, True, "repeated-max"),
    "n1024_d64": (1, 1, 1024, 64, False, "low-rank"),
}


def case_inputs(name):
    """The bf16 encodings of q, k, v of case `name`, each (B, H, N, d), as the recording drew
    them (numpy PCG64 seeded by [SEED, b, h, kind], as record_torch does)."""
    b_, h_, n, d, _, kind = CASES[name]
    heads = [(b, h) for b in range(b_) for h in range(h_)]
    return tuple(x.reshape(b_, h_, n, d) for x in heads_bf16_bits(kind, n, n, d, SEED, heads)[:3])
