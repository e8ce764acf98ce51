#include "emulation/tensor_core_gemm_kernels.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "emulation/cpu_level.hpp"
#if SIMPREC_AVX2_KERNELS || SIMPREC_AVX512_KERNELS
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

// One tile's place in the packed operands: rows [i0, i0 + rows) of D, columns [j0, j0 + cols),
// and where its group of A and its panel of B start.
struct Tile {
  int i0, j0, rows, cols;
  const float* a;
  const int32_t* a_exp;
  const float* b;
  const int16_t* b_exp;
};
inline Tile tile_of(const Packed& o, int g, int p) {
  const int i0 = g * kRows, j0 = p * kCols;
  const size_t a_at = static_cast<size_t>(g) * o.k * kRows;
  const size_t b_at = static_cast<size_t>(p) * o.k * kCols;
  return {i0,
          j0,
          std::min(kRows, o.m - i0),
          std::min(kCols, o.n - j0),
          o.a + a_at,
          o.a_exp + a_at,
          o.b + b_at,
          o.b_exp + b_at};
}

// The tile in doubles, one row at a time, vectorised over the columns by the compiler: a*b*2^s is
// exact in a double, and so is the sum of a block's truncated terms (below 2^(F + 8)).
void tile_portable(const Packed& o, int g, int p) {
  const TensorCoreModel& model = *o.model;
  const int k = o.k, bs = model.block_size, F = model.kept_fraction_bits;
  // A double's significand bits below the block result's precision.
  const uint64_t dropped = (uint64_t{1} << (53 - model.block_result_precision)) - 1;
  const auto [i0, j0, rows, cols, a, a_exp, b, b_exp] = tile_of(o, g, p);
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
        bits &= ~dropped;  // truncated to the block result's precision
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

#if !SIMPREC_AVX2_KERNELS
[[SIMPREC_TARGET_V3]] void tile_v3(const Packed& o, int g, int p) {
  tile_portable(o, g, p);
}
#else
// The tile in 8 int32/float lanes, for each half of the panel (16 columns) four rows of two
// vectors. Exact for the reasons in the header, and:
//   - the alignment exponents are maxima of int16 sums, 16 columns a vector;
//   - a product of the inputs is exact in float (at most 22 significant bits, and every product
//     that can reach the window is a normal float), and cvttps2dq truncates toward zero;
//   - kShiftInIntegers: the products are scaled by 2^(F - emax) in integers, adding F - emax to
//     their exponent field, which leaves the float units to the multiplications; the alignment
//     exponents are then taken up to F only (above, the output goes to the reference), so the
//     shift is never negative, and a zero or subnormal product (which does not reach the window)
//     gets an exponent field of at most 80 + F < 127 and truncates to zero like its true scaled
//     value. Otherwise they are multiplied by 2^(F - emax), a normal float, exact for every
//     product in the window, and below 1 for every other;
//   - the int32 sum wraps around only where its magnitude comes out at 2^31 - 2^26 or more,
//     which is flagged (fast_path_applies keeps the block sums below 2^32 - (2^31 - 2^26));
//   - the sum's magnitude converted to float rounds to nearest; one unit less where that rounded
//     up is the magnitude truncated to 24 bits, and clearing the low bits truncates it to the
//     block result's precision;
//   - the result times 2^(emax - F) is computed by adding emax - F to the exponent field, exact
//     where the field stays that of a normal float; a zero sum or a result outside the normal
//     floats is flagged.
// `bad` holds the flagged outputs (all ones), updated by compares.
[[SIMPREC_TARGET_V3]] inline __m256i lanes_below(int count) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(count), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
// Exponent field minus one: a normal float's exponent plus kExponentBias.
[[SIMPREC_TARGET_V3]] inline __m256i biased_exponent8(__m256i bits) {
  return _mm256_sub_epi32(_mm256_and_si256(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(0xff)),
                          _mm256_set1_epi32(1));
}
template <bool kShiftInIntegers>
[[SIMPREC_TARGET_V3]] void tile_avx2(const Packed& o, int g, int p) {
  constexpr int R = kRows;
  const TensorCoreModel& model = *o.model;
  const int k = o.k, bs = model.block_size, F = model.kept_fraction_bits;
  const auto [i0, j0, rows, cols, a, a_exp, b, b_exp] = tile_of(o, g, p);

  const __m256i lowest = _mm256_set1_epi32(kLowestBiasedAlignment);
  const __m256i highest =
      _mm256_set1_epi32(kShiftInIntegers ? std::min(kHighestBiasedAlignment, kExponentBias + F)
                                         : kHighestBiasedAlignment);
  // F - emax in the place of the exponent field; plus 127 there, the bits of 2^(F - emax).
  const __m256i shift_base = _mm256_set1_epi32(kExponentBias + F);
  const __m256i one_field = _mm256_set1_epi32(127 << 23);
  const __m256i wrapped = _mm256_set1_epi32((1u << 31) - (1u << 26) - 1);
  const __m256i zero = _mm256_setzero_si256();
  const __m256i sign = _mm256_set1_epi32(static_cast<int>(0x80000000u));
  const __m256i kept =
      _mm256_set1_epi32(static_cast<int>(~((1u << (24 - model.block_result_precision)) - 1)));
  const __m256i field_one = _mm256_set1_epi32(1), field_top = _mm256_set1_epi32(254);
  uint32_t redo[R] = {};
  for (int h = 0; h < 2; ++h) {
    const int half_cols = std::clamp(cols - 16 * h, 0, 16);
    if (half_cols == 0) break;
    const __m256i col_mask[2] = {lanes_below(half_cols), lanes_below(half_cols - 8)};
    const int jh = j0 + 16 * h;
    __m256 acc[R][2];
    __m256i c_exp_first[R][2], bad[R][2];
    for (int r = 0; r < R; ++r) {
      for (int v = 0; v < 2; ++v) {
        const __m256i bits =
            r < rows ? _mm256_maskload_epi32(
                           reinterpret_cast<const int*>(o.c + (i0 + r) * o.ldc + jh + 8 * v),
                           col_mask[v])
                     : zero;
        acc[r][v] = _mm256_castsi256_ps(bits);
        bad[r][v] = zero;
        const __m256i field =
            _mm256_and_si256(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(0xff));
        const __m256i is_zero =
            _mm256_cmpeq_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0x7fffffff)), zero);
        c_exp_first[r][v] =
            _mm256_blendv_epi8(_mm256_sub_epi32(_mm256_max_epi32(field, field_one), field_one),
                               _mm256_set1_epi32(kZeroBiasedExponent), is_zero);
      }
    }
    for (int kb = 0; kb < k; kb += bs) {
      __m256i emax16[R];
      for (int r = 0; r < R; ++r) emax16[r] = _mm256_set1_epi16(INT16_MIN);
      for (int kk = kb; kk < kb + bs; ++kk) {
        const __m256i eb =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b_exp + kk * kCols + 16 * h));
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
          const __m256i ea = _mm256_set1_epi32(a_exp[kk * R + r]);
          emax16[r] = _mm256_max_epi16(emax16[r], _mm256_add_epi16(ea, eb));
        }
      }
      __m256i e[R][2], shift[R][2], sum[R][2];
      __m256 scale[R][2];
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        const __m256i e16[2] = {_mm256_cvtepi16_epi32(_mm256_castsi256_si128(emax16[r])),
                                _mm256_cvtepi16_epi32(_mm256_extracti128_si256(emax16[r], 1))};
#pragma GCC unroll 2
        for (int v = 0; v < 2; ++v) {
          const __m256i c_exp =
              kb == 0 ? c_exp_first[r][v] : biased_exponent8(_mm256_castps_si256(acc[r][v]));
          e[r][v] = _mm256_max_epi32(e16[v], c_exp);
          bad[r][v] =
              _mm256_or_si256(bad[r][v], _mm256_or_si256(_mm256_cmpgt_epi32(lowest, e[r][v]),
                                                         _mm256_cmpgt_epi32(e[r][v], highest)));
          shift[r][v] = _mm256_slli_epi32(_mm256_sub_epi32(shift_base, e[r][v]), 23);
          scale[r][v] = _mm256_castsi256_ps(_mm256_add_epi32(shift[r][v], one_field));
          sum[r][v] = _mm256_cvttps_epi32(_mm256_mul_ps(acc[r][v], scale[r][v]));
        }
      }
#pragma GCC unroll 4
      for (int kk = kb; kk < kb + bs; ++kk) {
        const float* bk = b + kk * kCols + 16 * h;
        const __m256 b0 = _mm256_loadu_ps(bk), b1 = _mm256_loadu_ps(bk + 8);
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
          const __m256 av = _mm256_set1_ps(a[kk * R + r]);
          const __m256 p0 = _mm256_mul_ps(av, b0), p1 = _mm256_mul_ps(av, b1);
          __m256 s0, s1;
          if constexpr (kShiftInIntegers) {
            s0 = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(p0), shift[r][0]));
            s1 = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(p1), shift[r][1]));
          } else {
            s0 = _mm256_mul_ps(p0, scale[r][0]);
            s1 = _mm256_mul_ps(p1, scale[r][1]);
          }
          sum[r][0] = _mm256_add_epi32(_mm256_cvttps_epi32(s0), sum[r][0]);
          sum[r][1] = _mm256_add_epi32(_mm256_cvttps_epi32(s1), sum[r][1]);
        }
      }
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
#pragma GCC unroll 2
        for (int v = 0; v < 2; ++v) {
          // abs(INT32_MIN) stays negative: flagged with the wrapped sums.
          const __m256i magnitude = _mm256_abs_epi32(sum[r][v]);
          const __m256i rounded = _mm256_castps_si256(_mm256_cvtepi32_ps(magnitude));
          const __m256i rounded_up =
              _mm256_cmpgt_epi32(_mm256_cvttps_epi32(_mm256_castsi256_ps(rounded)), magnitude);
          const __m256i truncated = _mm256_and_si256(_mm256_add_epi32(rounded, rounded_up), kept);
          // emax - F, and the result's exponent field.
          const __m256i unscale = _mm256_sub_epi32(e[r][v], shift_base);
          const __m256i field = _mm256_add_epi32(_mm256_srli_epi32(truncated, 23), unscale);
          const __m256i out_of_range = _mm256_or_si256(
              _mm256_or_si256(_mm256_cmpgt_epi32(magnitude, wrapped),
                              _mm256_cmpgt_epi32(zero, magnitude)),
              _mm256_or_si256(_mm256_cmpeq_epi32(magnitude, zero),
                              _mm256_or_si256(_mm256_cmpgt_epi32(field_one, field),
                                              _mm256_cmpgt_epi32(field, field_top))));
          bad[r][v] = _mm256_or_si256(bad[r][v], out_of_range);
          acc[r][v] = _mm256_castsi256_ps(
              _mm256_or_si256(_mm256_add_epi32(truncated, _mm256_slli_epi32(unscale, 23)),
                              _mm256_and_si256(sum[r][v], sign)));
        }
      }
    }
    for (int r = 0; r < rows; ++r) {
      uint32_t* d = o.d + (i0 + r) * o.ldd + jh;
      uint32_t flagged = 0;
      for (int v = 0; v < 2; ++v) {
        const __m256i bad_here = _mm256_and_si256(bad[r][v], col_mask[v]);
        flagged |= static_cast<uint32_t>(_mm256_movemask_ps(_mm256_castsi256_ps(bad_here)))
                   << (8 * v);
      }
      if (o.c_kept && flagged) {
        const uint32_t* c = o.c + (i0 + r) * o.ldc + jh;
        uint32_t* kept_c = o.c_kept + static_cast<size_t>(i0 + r) * o.n + jh;
        for (uint32_t f = flagged; f != 0; f &= f - 1) {
          const int j = std::countr_zero(f);
          kept_c[j] = c[j];
        }
      }
      for (int v = 0; v < 2; ++v) {
        _mm256_maskstore_epi32(reinterpret_cast<int*>(d + 8 * v), col_mask[v],
                               _mm256_castps_si256(acc[r][v]));
      }
      redo[r] |= flagged << (16 * h);
    }
  }
  for (int r = 0; r < rows; ++r) o.redo[static_cast<size_t>(i0 + r) * o.panels() + p] = redo[r];
}
[[SIMPREC_TARGET_V3]] void tile_v3_shift(const Packed& o, int g, int p) {
  tile_avx2<true>(o, g, p);
}
[[SIMPREC_TARGET_V3]] void tile_v3_multiply(const Packed& o, int g, int p) {
  tile_avx2<false>(o, g, p);
}
#endif

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
  const auto [i0, j0, rows, cols, a, a_exp, b, b_exp] = tile_of(o, g, p);
  const auto lanes = [](int count) {
    return static_cast<__mmask16>(count >= 16 ? 0xffff : count <= 0 ? 0 : (1u << count) - 1);
  };
  const __mmask16 col_mask[2] = {lanes(cols), lanes(cols - 16)};

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

TileKernel tile_kernel_for(const TensorCoreModel& model) {
  // Scaling the products in integers needs the alignment exponents at most F: a narrow window
  // (fp8 wgmma keeps 13 bits) would send most outputs to the reference.
  const bool shift_in_integers = model.kept_fraction_bits >= 20;
#if SIMPREC_AVX2_KERNELS
  const TileKernel v3 = shift_in_integers ? tile_v3_shift : tile_v3_multiply;
#else
  const TileKernel v3 = tile_v3;
#endif
  // The AVX-512 kernel: blocks of at most 16 (its wrap-around argument) rounded to 24 bits.
  const bool v4_takes =
      shift_in_integers && model.block_size <= 16 && model.block_result_precision == 24;
  return for_this_cpu<TileKernel>(tile_portable, v3, v4_takes ? tile_v4 : v3);
}

}  // namespace simprec::tensor_core_fast
