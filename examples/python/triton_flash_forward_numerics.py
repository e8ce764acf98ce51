"""The numerics spec that describes the Triton kernel of triton_flash_forward.py bit for bit on
an H100 (its docstring says the kernel's arithmetic step by step, read from the PTX Triton
generated). Its own module, without torch or triton, so that CPU-only code (the test against the
kernel's recorded outputs, scripts/compare_triton_example.py) reads the same string as
validate_on_gpu.py.

Item by item: fa2's sites (bf16 inputs, P cast to bf16, fp32 elsewhere, one cast of O); 64x64
tiles; S = Q K^T and P V by bf16 wgmma (m64n64k16) with fp32 accumulators, P V into the
rescaled accumulator; P = ex2.approx(fma(S, c, -round(m c))) (fa2's exp_impl exp2-fma,
device_math=sm90 for ex2.approx.ftz); alpha = ex2.approx(fma(-c, m_new, shift_old)) after every
key block but the first (rescale=exp2-shift-fma); each key block's row sum in the quad's 4 lanes
then l = fma(l, alpha, sum) (rowsum_block=quad-fma); O = div.full(acc, l) (norm=div-full);
LSE = div.full(fma(m, c, log2f(l)), 1.442695f) with libdevice's log2f (lse_impl=fma-log2-div-full
with device_math=sm90).
"""

TRITON_FLASH_FORWARD_SPEC = (
    "fa2,tile=64x64,s=fp32:rne:tc:sm90-wgmma-bf16,pv_acc=fp32:rne:tc:sm90-wgmma-bf16,"
    "device_math=sm90,rescale=exp2-shift-fma,rowsum_block=quad-fma,norm=div-full,"
    "lse_impl=fma-log2-div-full")
