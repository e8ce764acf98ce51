// NVFP4 block scaling as NVIDIA describes it (arXiv 2509.25149, "Pretraining Large Language
// Models with NVFP4", Appendix B; the NVFP4 blog post): blocks of 16 e2m1 values, each block
// with an e4m3 decode scale, and one fp32 decode scale for the whole tensor, every step an fp32
// operation rounded to nearest even as NVIDIA's kernels compute it:
//   s_enc   = fp32(448 * 6 / amax_tensor)          (1 when amax_tensor is 0; at most FLT_MAX)
//   s_dec   = fp32(1 / s_enc)                      the per-tensor scale that is stored
//   s_b     = e4m3(fp32(fp32(amax_block / 6) * s_enc))   saturating, the block scale stored
//   s_enc_b = fp32(1 / fp32(fp32(s_b) * s_dec))    (at most FLT_MAX)
//   q_i     = e2m1(fp32(x_i * s_enc_b))            in the chosen rounding mode, saturating
// so that x_i ~ q_i * s_b * s_dec. docs/block_scaling.md has the sources and the choices made
// where NVIDIA is silent (non-finite inputs).
#pragma once

#include <span>

#include "emulation/block_scaling.hpp"

namespace simprec {

inline constexpr size_t kNvfp4BlockSize = 16;

// The encode scale of a tensor with largest finite magnitude `amax` (an fp32 value), as fp32.
float nvfp4_tensor_encode_scale(float amax);

// Quantizes fp32 `values` (rows of layout.row_length; layout.block_size is normally 16). NaN
// and infinities do not enter the tensor's amax; a block holding one has the NaN scale (0x7f)
// and +0 elements. Throws std::invalid_argument for a bad layout.
BlockScaled nvfp4_quantize(std::span<const float> values, const BlockLayout& layout,
                           const ElementRounding& rounding);

}  // namespace simprec
