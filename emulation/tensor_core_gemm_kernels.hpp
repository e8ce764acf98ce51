// The fast path of tensor_core_gemm (tensor_core_gemm.cpp): the packed operands and the kernels
// that compute one tile of D from them, one kernel per x86-64 level (cpu_level.hpp). Internal to
// the emulation library.
//
// The fast path takes bf16, fp16, e4m3fn and e5m2 inputs (A's and B's may differ) into an fp32
// accumulator, C in the first block, terms truncated toward zero and the block sum truncated to
// P <= 24 bits (every sm_90 bf16/fp16 preset, P = 24, and the fp8 wgmma ones, P = 14). Each
// block is computed where that is exact:
//   - an input value is a float, and the product of two has at most 22 significant bits;
//   - scaled by 2^(F - emax) (emax: the block's alignment exponent, F <= 25: the kept fraction
//     bits) a term's bits below the window are those below 1, which truncation to an integer
//     drops;
//   - the truncated terms are integers below 2^(F+2) and add up exactly;
//   - the sum times 2^(emax - F), truncated to P significant bits, is the block's result as
//     long as it is a normal fp32 number.
// An output whose chain leaves that ground anywhere (NaN or infinity among its operands, an
// alignment exponent out of the kernel's range, a zero, subnormal or overflowing block result) is
// flagged, and tensor_core_gemm recomputes it with tensor_core_dot, the integer reference.
#pragma once

#include <cstddef>
#include <cstdint>

#include "emulation/tensor_core.hpp"

namespace simprec::tensor_core_fast {

// A tile: kRows rows of A times a panel of kCols columns of B.
constexpr int kRows = 4;
constexpr int kCols = 32;

// Operand exponent of a zero: below every real product's, also when two are added.
constexpr int16_t kZeroExponent = -2000;
// The kernels hold exponents plus kExponentBias: then a normal fp32 number's exponent field minus
// one is its exponent so biased, and zero and subnormal numbers (field 0) and infinities and NaN
// (field 255) come out as 255 and 254, above every exponent the kernels accept.
constexpr int kExponentBias = 126;
// The alignment exponents the kernels accept (biased); beyond them the output goes to the
// reference. Within them every product that can reach the window is a normal float, exact, no
// product overflows and 2^(F - emax) is a normal float.
constexpr int kLowestBiasedAlignment = kExponentBias - 80;
constexpr int kHighestBiasedAlignment = kExponentBias + 100;

struct Packed {
  const TensorCoreModel* model;
  int m, n;
  int k;  // padded with zeros to whole instructions
  // A in groups of kRows rows, k-major within a group: element (g * kRows + r, kk) is at
  // (g * k + kk) * kRows + r. Its operand exponent plus kExponentBias is in both int16 halves
  // of a_exp.
  const float* a;
  const int32_t* a_exp;
  // B in panels of kCols columns, k-major within a panel: element (kk, p * kCols + j) is at
  // (p * k + kk) * kCols + j, with its operand exponent in b_exp. Padding columns are zeros.
  const float* b;
  const int16_t* b_exp;
  const uint32_t* c;  // m x n, fp32 encodings, row stride ldc
  std::ptrdiff_t ldc;
  uint32_t* d;  // m x n, row stride ldd; may be c itself (ldd = ldc)
  std::ptrdiff_t ldd;
  // Where D overwrites C: the C of each flagged output, at i * n + j, for the reference.
  uint32_t* c_kept;
  // Bit j of redo[i * panels + p]: output (i, p * kCols + j) is to be recomputed.
  uint32_t* redo;
  int panels() const { return (n + kCols - 1) / kCols; }
};

// Computes the tile (rows of group g, columns of panel p) of D and its redo bits.
using TileKernel = void (*)(const Packed&, int group, int panel);
// The kernel for this CPU and a model the fast path takes.
TileKernel tile_kernel_for(const TensorCoreModel& model);

}  // namespace simprec::tensor_core_fast
