// Q, K and V quantised with scales after the input site (config.hpp, InputQuantization;
// docs/fp8_attention.md, "Scaled inputs"): FlashAttention-3's per-head descale factors, per-block
// scales, SageAttention's smoothing of K and INT8 Q and K, per-channel scales of V. Every step is
// an fp32 operation rounded to nearest even from its exact result, in the order stated here.
#pragma once

#include <cstdint>
#include <vector>

#include "lib/attention/config.hpp"
#include "lib/attention/tensors.hpp"

namespace simprec::attention {

// The scales of one run, per problem p (batch x head): q[p * q_groups + g], g the query block
// (qk_scale=block) or 0; k likewise over key blocks; v over channels (v_scale=channel) or 0.
// Empty where the tensor is not quantised. With qk_scale=block, q's scales include the factor
// Q was multiplied by first (the exponent constant c), so the descaled scores are in log2 units.
struct InputScales {
  std::vector<double> q, k, v;
  int64_t q_groups = 0, k_groups = 0, v_groups = 0;
  int64_t q_block = 1, k_block = 1;  // rows per group

  double q_scale(int64_t p, int64_t row) const { return q[p * q_groups + row / q_block]; }
  double k_scale(int64_t p, int64_t key) const { return k[p * k_groups + key / k_block]; }
  double v_scale(int64_t p, int64_t channel) const {
    return v[p * v_groups + (v_groups == 1 ? 0 : channel)];
  }
};

// Smooths K and quantises Q, K and V of `in` (already rounded at the input site) in place as
// config.quant says, and returns the scales. `c` is the exponent constant fp32(scale log2 e)
// that qk_scale=block multiplies Q by before its quantisation. A group's scale is
// s = fp32(amax / M) (M: the element format's largest finite value, or 127 for int8), 1 where
// amax / M rounds to 0; a float element is F(fp32(x / s)), F rounding to nearest even; an int8
// element is trunc(fp32(y + sign(y) 0.5)) with y = fp32(x / s) (SageAttention's kernels).
InputScales quantize_inputs(AttentionInputs& in, const AttentionConfig& config, double c);

// Throws std::invalid_argument when the quantisation cannot apply to this run: gradients
// (forward only), kv_splits > 1, flash_state=normalised, or Q and K quantised with an exp_impl
// other than exp2-fma or exp2.
void check_quantization(const AttentionConfig& config, bool gradients);

}  // namespace simprec::attention
