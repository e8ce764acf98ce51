// run_gemm on .npy arrays: what `simprec gemm` and simprec.gemm.gemm both call.
#pragma once

#include <optional>

#include "lib/gemm/gemm_engine.hpp"
#include "lib/npy/npy.hpp"

namespace simprec::gemm {

// The optional operands of gemm_arrays, empty where not given.
struct GemmArrayScales {
  // float32 arrays (any shape; their sizes as GemmOperands says)
  std::optional<NpyArray> scale_a, scale_b, bias;
  // block_scales: (M, ceil(K / block)) and (ceil(K / block), N), uint8 encodings of the block
  // scale format (E8M0, e4m3) or float32 values of it
  std::optional<NpyArray> block_scale_a, block_scale_b;
};

// A (M, K) and B (K, N): uint8/uint16 encodings of the instruction's input_a and input_b, or
// float32 values they hold exactly. D: float32 (M, N), values of numerics.out. Throws
// std::invalid_argument naming the operand and what was expected.
NpyArray gemm_arrays(const GemmNumerics& numerics, const NpyArray& a, const NpyArray& b,
                     const GemmArrayScales& scales, unsigned threads);

}  // namespace simprec::gemm
