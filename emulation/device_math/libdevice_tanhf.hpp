// libdevice's __nv_tanhf, which CUDA's tanhf (nvcc without --use_fast_math) and Triton's
// libdevice.tanh (what Inductor emits for torch.tanh, e.g. in a FlexAttention score_mod) inline:
// fp32 arithmetic around ex2.approx.ftz and rcp.approx.ftz, reproduced by performing the same
// operations with those instructions' models (sm90_mufu.hpp). Transcribed from the PTX nvcc 13 and
// Triton 3.6 generated on the H200 (scripts/device_functions/measure_tanh.py): for |x| >= 0.6,
// 1 - 2 / (2^(2 log2(e) |x|) + 1) with the sign of x (1 from |x| >= 9.0109); below, the odd
// polynomial x + x^3 p(x^2) by fused multiply-adds. Triton's copy flushes subnormal operands
// (its fma and abs carry .ftz): it differs only at subnormal arguments, which give +-0.
#pragma once

namespace simprec::device_math {

float libdevice_tanhf(float x);
// Triton 3.6's libdevice.tanh.
float triton_tanhf(float x);

}  // namespace simprec::device_math
