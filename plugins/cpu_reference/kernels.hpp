// The kernels of the CPU reference plugin, as ABI run functions. Each is plain float/double
// code whose rounding is stated, so that its emulation claim can be checked honestly.
#pragma once

#include "plugins/simprec_plugin.h"

namespace simprec::cpu_reference {

// D = A*B + C with acc <- fmaf(a_ik, b_kj, acc), k = 0..K-1, acc starting at C (or +0):
// exactly the "sequential" model with an fp32 accumulator in round-to-nearest-even.
SimprecStatus run_gemm_f32(const SimprecRunArgs* args);
// The same with acc <- acc + a_ik*b_kj, the product rounded to fp32 first: close to
// "sequential" but not bit-exact for fp32 inputs (bf16/fp16 products are exact in fp32).
SimprecStatus run_gemm_f32_unfused(const SimprecRunArgs* args);
// D = A*B + C in double with fma: "sequential" with an fp64 accumulator.
SimprecStatus run_gemm_f64(const SimprecRunArgs* args);
// O = softmax(scale * Q K^T) V per (batch, head) in float, with the row maximum subtracted;
// LSE = max + log(sum). Causal masking aligns the last query with the last key.
SimprecStatus run_attention_forward_f32(const SimprecRunArgs* args);
// y = exp2f(x).
SimprecStatus run_exp2_f32(const SimprecRunArgs* args);

}  // namespace simprec::cpu_reference
