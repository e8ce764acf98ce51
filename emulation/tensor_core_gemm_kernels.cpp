#include "emulation/tensor_core_gemm_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "emulation/cpu_level.hpp"
#if SIMPREC_AVX512_KERNELS
#include <immintrin.h>
#endif

namespace simprec::tensor_core_fast {
namespace {

// C's operand exponent plus kExponentBias: its fp32 exponent field minus one, 0 for subnormals
// (emin), far below every product for zeros.
constexpr int kZeroBiasedExponent = -8000;
inline int biased_operand_exponent(uint32_t bits) {
  if ((bits & 0x7fffffffu) == 0) return kZeroBiasedExponent;
  return std::max(static_cast<int>((bits >> 23) & 0xff), 1) - 1;
}

inline double pow2(int e) {  // 2^e for -1022 <= e <= 1023, built from its bits
  const uint64_t bits = static_cast<uint64_t>(e + 1023) << 52;
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

// The tile in doubles, one row at a time, vectorised over the columns by the compiler: a*b*2^s is
// exact in a double, and so is the sum of a block's truncated terms (below 2^33).
void tile_portable(const Packed& o, int g, int p) {
  const TensorCoreModel& model = *o.model;
  const int k = o.k, bs = model.block_size, F = model.kept_fraction_bits;
  const int i0 = g * kRows, j0 = p * kCols;
  const int rows = std::min(kRows, o.m - i0), cols = std::min(kCols, o.n - j0);
  const float* a = o.a + static_cast<size_t>(g) * k * kRows;
  const int32_t* a_exp = o.a_exp + static_cast<size_t>(g) * k * kRows;
  const float* b = o.b + static_cast<size_t>(p) * k * kCols;
  const int16_t* b_exp = o.b_exp + static_cast<size_t>(p) * k * kCols;
  for (int r = 0; r < rows; ++r) {
    double acc[kCols], sum[kCols], scale[kCols];
    int32_t emax[kCols];
    bool bad[kCols];
    for (int j = 0; j < kCols; ++j) {
      const uint32_t bits = j < cols ? o.c[(i0 + r) * o.ldc + j0 + j] : 0;
      float cf;
      std::memcpy(&cf, &bits, 4);
      acc[j] = cf;
      bad[j] = !std::isfinite(cf);
    }
    for (int kb = 0; kb < k; kb += bs) {
      for (int j = 0; j < kCols; ++j) {
        const auto cf = static_cast<float>(acc[j]);
        uint32_t bits;
        std::memcpy(&bits, &cf, 4);
        emax[j] = biased_operand_exponent(bits);
      }
      for (int kk = kb; kk < kb + bs; ++kk) {
        const auto ea = static_cast<int16_t>(a_exp[kk * kRows + r]);
        const int16_t* eb = b_exp + kk * kCols;
        for (int j = 0; j < kCols; ++j) emax[j] = std::max(emax[j], ea + eb[j]);
      }
      for (int j = 0; j < kCols; ++j) {
        bad[j] |= emax[j] < kLowestBiasedAlignment || emax[j] > kHighestBiasedAlignment;
        const int e =
            std::clamp(emax[j], kLowestBiasedAlignment, kHighestBiasedAlignment) - kExponentBias;
        emax[j] = e;
        scale[j] = pow2(F - e);
        sum[j] = std::trunc(acc[j] * scale[j]);
      }
      for (int kk = kb; kk < kb + bs; ++kk) {
        const double av = a[kk * kRows + r];
        const float* bv = b + kk * kCols;
        for (int j = 0; j < kCols; ++j) sum[j] += std::trunc(av * bv[j] * scale[j]);
      }
      for (int j = 0; j < kCols; ++j) {
        const double total = sum[j] * pow2(emax[j] - F);  // exact: a power of two
        uint64_t bits;
        std::memcpy(&bits, &total, 8);
        bits &= ~((uint64_t{1} << 29) - 1);  // truncated to 24 significant bits
        double t;
        std::memcpy(&t, &bits, 8);
        const double mag = std::fabs(t);
        bad[j] |= !(mag >= 0x1p-126 && mag < 0x1p128);
        acc[j] = t;
      }
    }
    uint32_t redo = 0;
    for (int j = 0; j < cols; ++j) {
      if (bad[j] && o.c_kept) {
        o.c_kept[static_cast<size_t>(i0 + r) * o.n + j0 + j] = o.c[(i0 + r) * o.ldc + j0 + j];
      }
      const auto f = static_cast<float>(acc[j]);
      std::memcpy(&o.d[(i0 + r) * o.ldd + j0 + j], &f, 4);
      redo |= static_cast<uint32_t>(bad[j]) << j;
    }
    o.redo[static_cast<size_t>(i0 + r) * o.panels() + p] = redo;
  }
}

[[SIMPREC_TARGET_V3]] void tile_v3(const Packed& o, int g, int p) {
  tile_portable(o, g, p);
}

#if SIMPREC_AVX512_KERNELS
// The tile in 16 int32/float lanes, two vectors per row. Exact for the reasons in the header, and:
//   - the alignment exponents are maxima of int16 sums, 32 columns a vector;
//   - a product of 16-bit inputs is exact in float, and cvttps2dq truncates toward zero;
//   - the products are scaled by 2^(F - emax) in integers, adding F - emax to their exponent
//     field, which leaves a float unit (FP0/FP1 on Zen 4) to the multiplications: the v4 kernel
//     takes alignment exponents up to F only (above, the output goes to the reference), so the
//     shift is never negative; a product that reaches the window is a normal float whose scaled
//     value is below 2^(F+2), so the addition is exact, and a zero or subnormal product (which
//     does not reach it) gets an exponent field of at most 80 + F < 127 and truncates to zero
//     like its true scaled value;
//   - C's truncated term is below 2^(F+1) and the at most 16 truncated products each below
//     3.997 * 2^F (F <= 25): their true sum is below 2^32 - (2^31 - 2^26) in magnitude, so when
//     the int32 sum wraps around its magnitude is at least 2^31 - 2^26, which is flagged;
//   - converting the int32 sum to float rounding toward zero truncates it to 24 bits, and
//     scaling that by 2^(emax - F) rounding toward zero is exact for a normal result and gives
//     a zero or subnormal otherwise, whose biased exponent (255) is flagged by the next block's
//     range check or after the last block.
// `good` holds the outputs not flagged, updated by masked compares.
//
// Biased exponent of normal floats: their exponent field minus one (255 for zeros and
// subnormals, 254 for infinities and NaN).
[[SIMPREC_TARGET_V4]] inline __m512i biased_exponent(__m512 x) {
  const __m512i field = _mm512_set1_epi32(0xff);
  return _mm512_and_si512(_mm512_add_epi32(_mm512_srli_epi32(_mm512_castps_si512(x), 23), field),
                          field);
}
[[SIMPREC_TARGET_V4]] void tile_v4(const Packed& o, int g, int p) {
  constexpr int R = kRows;
  const TensorCoreModel& model = *o.model;
  const int k = o.k, bs = model.block_size, F = model.kept_fraction_bits;
  const int i0 = g * R, j0 = p * kCols;
  const int rows = std::min(R, o.m - i0), cols = std::min(kCols, o.n - j0);
  const auto lanes = [](int count) {
    return static_cast<__mmask16>(count >= 16 ? 0xffff : count <= 0 ? 0 : (1u << count) - 1);
  };
  const __mmask16 col_mask[2] = {lanes(cols), lanes(cols - 16)};
  const float* a = o.a + static_cast<size_t>(g) * k * R;
  const int32_t* a_exp = o.a_exp + static_cast<size_t>(g) * k * R;
  const float* b = o.b + static_cast<size_t>(p) * k * kCols;
  const int16_t* b_exp = o.b_exp + static_cast<size_t>(p) * k * kCols;

  // An alignment exponent e is in the kernel's range when e - lowest <= span as unsigned numbers;
  // the lanes outside are flagged, and what they compute is never read.
  const __m512i lowest = _mm512_set1_epi32(kLowestBiasedAlignment);
  const __m512i span = _mm512_set1_epi32(std::min(kHighestBiasedAlignment, kExponentBias + F) -
                                         kLowestBiasedAlignment);
  // F - e for e = emax + kExponentBias, in the place of the exponent field; plus 127 there, the
  // bits of 2^(F - emax).
  const __m512i shift_base = _mm512_set1_epi32(kExponentBias + F);
  const __m512i one_field = _mm512_set1_epi32(127 << 23);
  const __m512i unscale_from_scale = _mm512_set1_epi32(254 << 23);
  const __m512i exponent_field = _mm512_set1_epi32(0xff);
  const __m512i wrapped = _mm512_set1_epi32((1u << 31) - (1u << 26));
  constexpr int kTowardZero = _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC;
  __m512 acc[R][2];
  __m512i c_exp_first[R][2];  // C's, for the first block: zeros far below, subnormals emin
  __mmask16 good[R][2];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const uint32_t* c = o.c + (i0 + r) * o.ldc + j0 + 16 * h;
      const __m512i bits =
          r < rows ? _mm512_maskz_loadu_epi32(col_mask[h], c) : _mm512_setzero_si512();
      acc[r][h] = _mm512_castsi512_ps(bits);
      good[r][h] = 0xffff;
      const __m512i field = _mm512_and_si512(_mm512_srli_epi32(bits, 23), exponent_field);
      const __mmask16 zero = _mm512_testn_epi32_mask(bits, _mm512_set1_epi32(0x7fffffff));
      c_exp_first[r][h] = _mm512_mask_blend_epi32(
          zero,
          _mm512_sub_epi32(_mm512_max_epi32(field, _mm512_set1_epi32(1)), _mm512_set1_epi32(1)),
          _mm512_set1_epi32(kZeroBiasedExponent));
    }
  }
  for (int kb = 0; kb < k; kb += bs) {
    __m512i emax16[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) emax16[r] = _mm512_set1_epi16(INT16_MIN);
    for (int kk = kb; kk < kb + bs; ++kk) {
      const __m512i eb = _mm512_loadu_si512(b_exp + kk * kCols);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        const __m512i ea = _mm512_set1_epi32(a_exp[kk * R + r]);
        emax16[r] = _mm512_max_epi16(emax16[r], _mm512_add_epi16(ea, eb));
      }
    }
    // Scales, and the sums started from C's truncated term.
    __m512 scale[R][2];
    __m512i shift[R][2], sum[R][2];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const __m512i e16[2] = {_mm512_cvtepi16_epi32(_mm512_castsi512_si256(emax16[r])),
                              _mm512_cvtepi16_epi32(_mm512_extracti64x4_epi64(emax16[r], 1))};
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        const __m512i c_exp = kb == 0 ? c_exp_first[r][h] : biased_exponent(acc[r][h]);
        const __m512i e = _mm512_max_epi32(e16[h], c_exp);
        good[r][h] = _mm512_mask_cmple_epu32_mask(good[r][h], _mm512_sub_epi32(e, lowest), span);
        shift[r][h] = _mm512_slli_epi32(_mm512_sub_epi32(shift_base, e), 23);
        scale[r][h] = _mm512_castsi512_ps(_mm512_add_epi32(shift[r][h], one_field));
        sum[r][h] = _mm512_cvttps_epi32(_mm512_mul_ps(acc[r][h], scale[r][h]));
      }
    }
#pragma GCC unroll 4
    for (int kk = kb; kk < kb + bs; ++kk) {
      const __m512 b0 = _mm512_loadu_ps(b + kk * kCols), b1 = _mm512_loadu_ps(b + kk * kCols + 16);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        const __m512 av = _mm512_set1_ps(a[kk * R + r]);
        const __m512i p0 = _mm512_castps_si512(_mm512_mul_ps(av, b0));
        const __m512i p1 = _mm512_castps_si512(_mm512_mul_ps(av, b1));
        sum[r][0] = _mm512_add_epi32(
            _mm512_cvttps_epi32(_mm512_castsi512_ps(_mm512_add_epi32(p0, shift[r][0]))), sum[r][0]);
        sum[r][1] = _mm512_add_epi32(
            _mm512_cvttps_epi32(_mm512_castsi512_ps(_mm512_add_epi32(p1, shift[r][1]))), sum[r][1]);
      }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        // abs(INT32_MIN) stays 2^31 as an unsigned number.
        good[r][h] = _mm512_mask_cmplt_epu32_mask(good[r][h], _mm512_abs_epi32(sum[r][h]), wrapped);
        const __m512 truncated = _mm512_cvt_roundepi32_ps(sum[r][h], kTowardZero);
        const __m512 unscale = _mm512_castsi512_ps(
            _mm512_sub_epi32(unscale_from_scale, _mm512_castps_si512(scale[r][h])));
        acc[r][h] = _mm512_mul_round_ps(truncated, unscale, kTowardZero);
      }
    }
  }
  const __m512i normal_end = _mm512_set1_epi32(254);
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    if (r >= rows) break;
    __mmask16 bad[2];
    for (int h = 0; h < 2; ++h) {
      good[r][h] = _mm512_mask_cmplt_epi32_mask(good[r][h], biased_exponent(acc[r][h]), normal_end);
      bad[h] = static_cast<__mmask16>(~good[r][h] & col_mask[h]);
    }
    uint32_t* d = o.d + (i0 + r) * o.ldd + j0;
    if (o.c_kept && (bad[0] | bad[1])) {
      const uint32_t* c = o.c + (i0 + r) * o.ldc + j0;
      uint32_t* kept = o.c_kept + static_cast<size_t>(i0 + r) * o.n + j0;
      for (int h = 0; h < 2; ++h) {
        _mm512_mask_storeu_epi32(kept + 16 * h, bad[h],
                                 _mm512_maskz_loadu_epi32(bad[h], c + 16 * h));
      }
    }
    _mm512_mask_storeu_ps(d, col_mask[0], acc[r][0]);
    _mm512_mask_storeu_ps(d + 16, col_mask[1], acc[r][1]);
    o.redo[static_cast<size_t>(i0 + r) * o.panels() + p] =
        static_cast<uint32_t>(bad[0]) | static_cast<uint32_t>(bad[1]) << 16;
  }
}
#else
[[SIMPREC_TARGET_V4]] void tile_v4(const Packed& o, int g, int p) {
  tile_portable(o, g, p);
}
#endif

}  // namespace

TileKernel tile_kernel_for_this_cpu() {
  return for_this_cpu<TileKernel>(tile_portable, tile_v3, tile_v4);
}

}  // namespace simprec::tensor_core_fast
