// libdevice's __nv_log2f, the software log2 Triton calls for tl.log2 on float32 (it never uses
// lg2.approx there): fp32 arithmetic only, so reproduced exactly by performing the same
// operations, transcribed from the PTX Triton 3.6 generated on the H100
// (examples/python/triton_flash_forward.py): the argument split into 2^e * m with m in
// [sqrt(1/2), sqrt(2)), a degree-10 polynomial in f = m - 1 by fused multiply-adds, and
// e + f * (log2(e) + f * (f * p)); -inf for +-0. Equal to the H200's log2f (CUDA without
// --use_fast_math) and tl.log2 (Triton 3.6) on every 4th block of 2^16 fp32 arguments
// (tests/data/device_math/h200_function_digests.txt).
#pragma once

namespace simprec::device_math {

float libdevice_log2f(float x);

}  // namespace simprec::device_math
