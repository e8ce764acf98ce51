// D = cast(epilogue(A * B)) as a GEMM kernel computes it around the tensor-core instructions
// (gemm_numerics.hpp): K cut into split-K pieces, each piece's chain of instructions promoted to an
// fp32 accumulator every so many elements, the pieces' partial sums added in fp32, then the scales,
// the bias and the cast to the output format. Every fp32 operation between the instructions rounds
// to nearest even, as the GPU's FADD and FMUL do.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "lib/gemm/gemm_numerics.hpp"

namespace simprec::gemm {

struct GemmOperands {
  int m = 0, n = 0, k = 0;
  // A (M x K) and B (K x N), row-major encodings of the instruction's input_a and input_b.
  std::span<const uint16_t> a, b;
  // fp32 scales (scaling tensor: one value each; row: 1 or M for A, 1 or N for B); empty: no
  // scale given (1). Bias: empty or N fp32 values, one per output column.
  std::span<const float> scale_a, scale_b, bias;
  // block_scales: A's (M x ceil(K / block), row-major) and B's (ceil(K / block) x N) scales, values
  // of the block scale format; empty otherwise.
  std::span<const float> block_scale_a, block_scale_b;
};

// The M x N outputs as floats (values of numerics.out). Throws std::invalid_argument naming the
// operand that does not fit the numerics (a scale given with scaling=none, a scale or bias of the
// wrong size). threads = 0: resolve_threads(0).
std::vector<float> run_gemm(const GemmNumerics& numerics, const GemmOperands& operands,
                            unsigned threads = 0);

}  // namespace simprec::gemm
