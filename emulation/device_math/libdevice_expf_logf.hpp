// libdevice's __nv_expf and __nv_logf: what expf and logf compile to without --use_fast_math
// (PyTorch's flash and memory-efficient attention kernels, and Triton's tl.exp/tl.log where
// libdevice is called). fp32 arithmetic and the H100's ex2.approx.ftz only, so reproduced
// exactly by performing the same operations in the same order, transcribed from the PTX nvcc
// emits for them (sm_80 and sm_90, non-ftz build):
//
//   expf(a): k = floor(sat(a * log2(e)/252 + 0.5) * 252 + 1), by fma.rm against 1.5 * 2^23 + 1;
//            q = fma(a, log2(e)_lo, fma(a, log2(e)_hi, -(k - 127)));  ex2.approx.ftz(q) * 2^(k-127)
//   logf(a): a = 2^e * m with m in [2/3, 4/3) (subnormal a scaled by 2^23 first), f = m - 1,
//            a degree-9 polynomial p in f by fma; fma(e, ln 2, fma(f * p, f, f)).
#pragma once

namespace simprec::device_math {

float libdevice_expf(float a);
float libdevice_logf(float a);

}  // namespace simprec::device_math
