"""The Triton example kernel (examples/python/triton_flash_forward.py) as recorded on an H100
(tests/data/triton_example): the recorded cases, their inputs, and TRITON_FLASH_FORWARD_SPEC,
the numerics spec that describes the kernel bit for bit. The spec lives here, without torch or
triton, so that the CPU-only comparison (compare_triton, python/tests/test_triton_example.py)
and the GPU validation (examples/python/validate_on_gpu.py) read the same string.

The spec item by item: fa2's sites (bf16 inputs, P cast to bf16, fp32 elsewhere, one cast of O);
64x64 tiles; S = Q K^T and P V by bf16 wgmma (m64n64k16) with fp32 accumulators, P V into the
rescaled accumulator; P = ex2.approx(fma(S, c, -round(m c))) (fa2's exp_impl exp2-fma,
device_math=sm90 for ex2.approx.ftz); alpha = ex2.approx(fma(-c, m_new, shift_old)) after every
key block but the first (rescale=exp2-shift-fma); each key block's row sum in the quad's 4 lanes
then l = fma(l, alpha, sum) (rowsum_block=quad-fma); O = div.full(acc, l) (norm=div-full);
LSE = div.full(fma(m, c, log2f(l)), 1.442695f) with libdevice's log2f (lse_impl=fma-log2-div-full
with device_math=sm90). The kernel's docstring says the same step by step, from its PTX.
"""

from simprec.recordings.inputs import SEED, heads_bf16_bits

TRITON_FLASH_FORWARD_SPEC = (
    "fa2,tile=64x64,s=fp32:rne:tc:sm90-wgmma-bf16,pv_acc=fp32:rne:tc:sm90-wgmma-bf16,"
    "device_math=sm90,rescale=exp2-shift-fma,rowsum_block=quad-fma,norm=div-full,"
    "lse_impl=fma-log2-div-full")

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
