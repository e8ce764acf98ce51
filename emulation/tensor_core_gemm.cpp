// tensor_core_gemm: the block-FMA model over whole matrices.
//
// The fast path (16-bit inputs, fp32 accumulator, C in the first block, truncation toward zero:
// every sm_90 bf16/fp16 preset) computes each block in doubles where that is exact:
//   - a product of two 16-bit values has at most 22 significant bits: exact in a double;
//   - scaling by 2^(F - emax) is exact, and truncating the scaled term (std::trunc, one
//     vector instruction) drops exactly the bits below the window;
//   - each truncated term is an integer below 2^(F+2) = 2^27, so 17 of them add exactly;
//   - the sum times 2^(emax - F) is exact, and clearing its low 29 bits truncates it to fp32's
//     24-bit significand (toward zero) as long as it is a normal fp32 number.
// Outputs that leave that ground (NaN/infinity operands, a zero, subnormal or overflowing
// block result anywhere in the chain) are recomputed by tensor_core_dot, the integer reference.
// So both paths give identical bits; tests/tensor_core_test.cpp checks it.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "emulation/cpu_level.hpp"
#include "emulation/parallel.hpp"
#include "emulation/tensor_core.hpp"
#if SIMPREC_AVX512_KERNELS
#include <immintrin.h>
#define SIMPREC_TC_AVX512 1
#endif

namespace simprec {
namespace {

constexpr int kZeroExponent = -2000;  // operand exponent of a zero: below every real product

bool fast_path_applies(const TensorCoreModel& m) {
  return (m.input == formats::bf16 || m.input == formats::fp16) && m.accumulator == formats::fp32 &&
         m.c_entry == CEntry::kFirstBlock && m.grouping == KGrouping::kContiguous &&
         m.alignment == AlignmentExponent::kOperandSum &&
         m.truncation == TermTruncation::kTowardZero &&
         m.block_rounding == RoundingMode::kTowardZero && m.block_result_precision == 24 &&
         !m.datapath_input && m.k % m.block_size == 0 && m.kept_fraction_bits <= 27;
}

// Exact value and operand exponent of a 16-bit encoding; finite = false for NaN/infinity.
struct Unpacked16 {
  double value;
  int exponent;
  bool finite;
};
Unpacked16 unpack16(const Format& f, uint16_t bits) {
  const uint64_t mag = bits & f.magnitude_mask();
  const int field = static_cast<int>(mag >> f.mantissa_bits);
  const double sign = (bits & f.sign_mask()) ? -1.0 : 1.0;
  if (field == static_cast<int>(f.exponent_field_max())) return {0.0, kZeroExponent, false};
  const double frac = static_cast<double>(mag & f.mantissa_mask());
  if (field == 0) {
    if (frac == 0) return {sign * 0.0, kZeroExponent, true};
    return {sign * std::ldexp(frac, f.emin() - f.mantissa_bits), f.emin(), true};
  }
  return {
      sign * std::ldexp(frac + std::ldexp(1.0, f.mantissa_bits), field - f.bias - f.mantissa_bits),
      field - f.bias, true};
}

// unpack16 for every encoding of bf16 and fp16, built once: attention calls the GEMM once per
// pair of tiles, so the operands of a head are unpacked many times over, and ldexp per element
// cost more than the block arithmetic itself.
const Unpacked16* unpack16_table(const Format& f) {
  const auto build = [](const Format& format) {
    std::vector<Unpacked16> table(65536);
    for (uint32_t bits = 0; bits < 65536; ++bits)
      table[bits] = unpack16(format, static_cast<uint16_t>(bits));
    return table;
  };
  if (f == formats::bf16) {
    static const std::vector<Unpacked16> table = build(formats::bf16);
    return table.data();
  }
  if (f == formats::fp16) {
    static const std::vector<Unpacked16> table = build(formats::fp16);
    return table.data();
  }
  return nullptr;
}

inline double pow2(int e) {  // 2^e for -1022 <= e <= 1023, built from its bits
  const uint64_t bits = static_cast<uint64_t>(e + 1023) << 52;
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

// Operand exponent of an fp32 value held in a double: emin for subnormals, very low for zero.
inline int fp32_operand_exponent(double x) {
  uint64_t bits;
  std::memcpy(&bits, &x, 8);
  const int e = static_cast<int>((bits >> 52) & 0x7ff) - 1023;
  if (x == 0) return kZeroExponent;
  return e < -126 ? -126 : e;
}

constexpr int kChunk = 64;  // columns processed together by the portable loop

// The portable loop over columns [j0, j0 + w) of rows [row_begin, row_end).
void fast_columns(const TensorCoreModel& model, int row_begin, int row_end, int j0, int w, int n,
                  int k, const std::vector<double>& av, const std::vector<int32_t>& ae,
                  const std::vector<double>& bv, const std::vector<int32_t>& be,
                  std::span<const uint32_t> c, std::vector<uint32_t>& d,
                  std::vector<uint8_t>& redo) {
  const int bs = model.block_size;
  const int F = model.kept_fraction_bits;
  double acc[kChunk], sum[kChunk], scale[kChunk], unscale[kChunk];
  int32_t emax[kChunk];
  uint8_t bad[kChunk];
  for (int i = row_begin; i < row_end; ++i) {
    for (int j = 0; j < w; ++j) {
      float cf;
      std::memcpy(&cf, &c[static_cast<size_t>(i) * n + j0 + j], 4);
      acc[j] = cf;
      bad[j] = !std::isfinite(cf);
    }
    for (int kb = 0; kb < k; kb += bs) {
      for (int j = 0; j < w; ++j) emax[j] = fp32_operand_exponent(acc[j]);
      for (int kk = kb; kk < kb + bs; ++kk) {
        const int32_t ea = ae[static_cast<size_t>(i) * k + kk];
        const int32_t* eb = &be[static_cast<size_t>(kk) * n + j0];
        for (int j = 0; j < w; ++j) emax[j] = std::max(emax[j], ea + eb[j]);
      }
      for (int j = 0; j < w; ++j) {
        const int e = std::max(emax[j], -900);
        scale[j] = pow2(F - e);
        unscale[j] = pow2(e - F);
        sum[j] = std::trunc(acc[j] * scale[j]);
      }
      for (int kk = kb; kk < kb + bs; ++kk) {
        const double a = av[static_cast<size_t>(i) * k + kk];
        const double* b = &bv[static_cast<size_t>(kk) * n + j0];
        for (int j = 0; j < w; ++j) sum[j] += std::trunc(a * b[j] * scale[j]);
      }
      for (int j = 0; j < w; ++j) {
        const double r = sum[j] * unscale[j];  // exact: a power of two
        uint64_t bits;
        std::memcpy(&bits, &r, 8);
        bits &= ~((uint64_t{1} << 29) - 1);  // truncate to 24 significant bits
        double t;
        std::memcpy(&t, &bits, 8);
        const double mag = std::fabs(t);
        bad[j] |= !(mag >= 0x1p-126 && mag < 0x1p128);
        acc[j] = t;
      }
    }
    for (int j = 0; j < w; ++j) {
      const auto f = static_cast<float>(acc[j]);
      std::memcpy(&d[static_cast<size_t>(i) * n + j0 + j], &f, 4);
      redo[static_cast<size_t>(i) * n + j0 + j] = bad[j];
    }
  }
}

#if defined(SIMPREC_TC_AVX512)
// The same computation for 4 rows x 32 columns at a time, in 16 float/int32 lanes. Exact
// because, in addition to the reasons above (file comment):
//   - a product of 16-bit inputs is exact in float, and so is its scaling, as long as the
//     alignment exponent stays in [-80, 100] (other outputs are recomputed by the reference):
//     then no product that could reach the window underflows float, and 2^(F - emax) is a
//     normal float;
//   - cvttps2dq truncates toward zero, and 16 truncated products (each below 3.997 * 2^F,
//     F <= 25) add up in int32 without overflow; C's truncated term joins them in double.
constexpr int kVectorColumns = 32;
constexpr int kVectorRows = 4;

[[SIMPREC_TARGET_V4]] inline __m512i float_operand_exponent(
    __m512 x) {  // fp32_operand_exponent, 16 lanes
  const __m512i bits = _mm512_castps_si512(x);
  const __m512i field = _mm512_and_si512(_mm512_srli_epi32(bits, 23), _mm512_set1_epi32(0xff));
  const __m512i e =
      _mm512_max_epi32(_mm512_sub_epi32(field, _mm512_set1_epi32(127)), _mm512_set1_epi32(-126));
  const __mmask16 zero = _mm512_test_epi32_mask(bits, _mm512_set1_epi32(0x7fffffff)) ^ 0xffff;
  return _mm512_mask_blend_epi32(zero, e, _mm512_set1_epi32(kZeroExponent));
}

// bf_panel / be_panel: the 32 columns from j0 of B, packed row after row (k x 32), so that
// the inner loops walk memory contiguously instead of one page per row of B.
// Kept out of line, as flatten would inline it into fast_rows_v4: inlined, the fa2 forward with
// the tensor-core model ran about 10% slower (attention_bench).
[[SIMPREC_TARGET_V4, gnu::noinline]] void fast_block_avx512(
    const TensorCoreModel& model, int i0, int j0, int n, int k, const std::vector<float>& af,
    const std::vector<int32_t>& ae, const float* bf_panel, const int32_t* be_panel,
    std::span<const uint32_t> c, std::vector<uint32_t>& d, std::vector<uint8_t>& redo) {
  constexpr int R = kVectorRows;
  const int bs = model.block_size;
  const int F = model.kept_fraction_bits;
  const __m512i exp_lo = _mm512_set1_epi32(-80), exp_hi = _mm512_set1_epi32(100);
  const __m512d smallest = _mm512_set1_pd(0x1p-126), overflow = _mm512_set1_pd(0x1p128);
  const __m512d abs_mask = _mm512_castsi512_pd(_mm512_set1_epi64(0x7fffffffffffffff));
  const __m512i truncate_mask = _mm512_set1_epi64(~((int64_t{1} << 29) - 1));
  __m512 acc[R][2];
  __mmask16 bad[R][2];
  for (int r = 0; r < R; ++r)
    for (int h = 0; h < 2; ++h) {
      acc[r][h] = _mm512_castsi512_ps(
          _mm512_loadu_si512(&c[static_cast<size_t>(i0 + r) * n + j0 + 16 * h]));
      // NaN/infinity in C (exponent field all ones).
      const __m512i bits = _mm512_castps_si512(acc[r][h]);
      bad[r][h] = _mm512_cmpeq_epi32_mask(_mm512_and_si512(bits, _mm512_set1_epi32(0x7f800000)),
                                          _mm512_set1_epi32(0x7f800000));
    }
  for (int kb = 0; kb < k; kb += bs) {
    __m512i emax[R][2];
    for (int r = 0; r < R; ++r)
      for (int h = 0; h < 2; ++h) emax[r][h] = float_operand_exponent(acc[r][h]);
    for (int kk = kb; kk < kb + bs; ++kk) {
      const int32_t* eb = &be_panel[static_cast<size_t>(kk) * kVectorColumns];
      const __m512i e0 = _mm512_loadu_si512(eb), e1 = _mm512_loadu_si512(eb + 16);
      for (int r = 0; r < R; ++r) {
        const __m512i ea = _mm512_set1_epi32(ae[static_cast<size_t>(i0 + r) * k + kk]);
        emax[r][0] = _mm512_max_epi32(emax[r][0], _mm512_add_epi32(ea, e0));
        emax[r][1] = _mm512_max_epi32(emax[r][1], _mm512_add_epi32(ea, e1));
      }
    }
    __m512 scale[R][2];
    __m512i sum[R][2];
    for (int r = 0; r < R; ++r)
      for (int h = 0; h < 2; ++h) {
        bad[r][h] |= _mm512_cmplt_epi32_mask(emax[r][h], exp_lo) |
                     _mm512_cmpgt_epi32_mask(emax[r][h], exp_hi);
        const __m512i e = _mm512_min_epi32(_mm512_max_epi32(emax[r][h], exp_lo), exp_hi);
        emax[r][h] = e;
        scale[r][h] = _mm512_castsi512_ps(
            _mm512_slli_epi32(_mm512_sub_epi32(_mm512_set1_epi32(127 + F), e), 23));
        sum[r][h] = _mm512_setzero_si512();
      }
    for (int kk = kb; kk < kb + bs; ++kk) {
      const float* b = &bf_panel[static_cast<size_t>(kk) * kVectorColumns];
      const __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
      for (int r = 0; r < R; ++r) {
        const __m512 a = _mm512_set1_ps(af[static_cast<size_t>(i0 + r) * k + kk]);
        sum[r][0] = _mm512_add_epi32(
            sum[r][0], _mm512_cvttps_epi32(_mm512_mul_ps(_mm512_mul_ps(a, b0), scale[r][0])));
        sum[r][1] = _mm512_add_epi32(
            sum[r][1], _mm512_cvttps_epi32(_mm512_mul_ps(_mm512_mul_ps(a, b1), scale[r][1])));
      }
    }
    for (int r = 0; r < R; ++r)
      for (int h = 0; h < 2; ++h) {
        // C's term, exact in float, truncated; then the block sum in double (exact: < 2^33).
        const __m512 c_term = _mm512_roundscale_ps(_mm512_mul_ps(acc[r][h], scale[r][h]),
                                                   _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        __m512 next_half[2];
        for (int q = 0; q < 2; ++q) {
          const __m256i s32 =
              q == 0 ? _mm512_castsi512_si256(sum[r][h]) : _mm512_extracti64x4_epi64(sum[r][h], 1);
          const __m256 c32 =
              q == 0 ? _mm512_castps512_ps256(c_term)
                     : _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(c_term), 1));
          const __m256i e32 = q == 0 ? _mm512_castsi512_si256(emax[r][h])
                                     : _mm512_extracti64x4_epi64(emax[r][h], 1);
          const __m512d total = _mm512_add_pd(_mm512_cvtepi32_pd(s32), _mm512_cvtps_pd(c32));
          const __m512i e64 = _mm512_cvtepi32_epi64(e32);
          const __m512d unscale = _mm512_castsi512_pd(
              _mm512_slli_epi64(_mm512_add_epi64(_mm512_sub_epi64(e64, _mm512_set1_epi64(F)),
                                                 _mm512_set1_epi64(1023)),
                                52));
          const __m512d res = _mm512_mul_pd(total, unscale);
          const __m512d t =
              _mm512_castsi512_pd(_mm512_and_si512(_mm512_castpd_si512(res), truncate_mask));
          const __m512d mag = _mm512_and_pd(t, abs_mask);
          const __mmask8 ok = _mm512_cmp_pd_mask(mag, smallest, _CMP_GE_OQ) &
                              _mm512_cmp_pd_mask(mag, overflow, _CMP_LT_OQ);
          bad[r][h] |= static_cast<__mmask16>(static_cast<__mmask8>(~ok)) << (8 * q);
          next_half[q] = _mm512_castps256_ps512(_mm512_cvtpd_ps(t));
        }
        acc[r][h] = _mm512_castpd_ps(
            _mm512_insertf64x4(_mm512_castps_pd(next_half[0]),
                               _mm256_castps_pd(_mm512_castps512_ps256(next_half[1])), 1));
      }
  }
  for (int r = 0; r < R; ++r)
    for (int h = 0; h < 2; ++h) {
      _mm512_storeu_ps(reinterpret_cast<float*>(&d[static_cast<size_t>(i0 + r) * n + j0 + 16 * h]),
                       acc[r][h]);
      for (int l = 0; l < 16; ++l)
        redo[static_cast<size_t>(i0 + r) * n + j0 + 16 * h + l] = (bad[r][h] >> l) & 1;
    }
}
#endif

// Rows [row_begin, row_end) of the fast path; kVector: with the AVX-512 block where it applies.
// The unpacked operands of one GEMM (see tensor_core_gemm) and its outputs.
struct FastOperands {
  const TensorCoreModel& model;
  int n, k;
  const std::vector<double>&av, &bv;
  const std::vector<int32_t>&ae, &be;
  const std::vector<float>&af, &bf;
  std::span<const uint32_t> c;
  std::vector<uint32_t>& d;
  std::vector<uint8_t>& redo;
};

template <bool kVector>
void fast_rows(const FastOperands& o, int row_begin, int row_end) {
  const TensorCoreModel& model = o.model;
  const int n = o.n, k = o.k;
  const std::vector<double>&av = o.av, &bv = o.bv;
  const std::vector<int32_t>&ae = o.ae, &be = o.be;
  const std::vector<float>&af = o.af, &bf = o.bf;
  const std::span<const uint32_t> c = o.c;
  std::vector<uint32_t>& d = o.d;
  std::vector<uint8_t>& redo = o.redo;
  int j0 = 0;
#if defined(SIMPREC_TC_AVX512)
  if (kVector && model.block_size <= 16 && model.kept_fraction_bits <= 25) {
    std::vector<float> bf_panel(static_cast<size_t>(k) * kVectorColumns);
    std::vector<int32_t> be_panel(static_cast<size_t>(k) * kVectorColumns);
    for (; j0 + kVectorColumns <= n; j0 += kVectorColumns) {
      for (int kk = 0; kk < k; ++kk)
        for (int j = 0; j < kVectorColumns; ++j) {
          bf_panel[static_cast<size_t>(kk) * kVectorColumns + j] =
              bf[static_cast<size_t>(kk) * n + j0 + j];
          be_panel[static_cast<size_t>(kk) * kVectorColumns + j] =
              be[static_cast<size_t>(kk) * n + j0 + j];
        }
      int i = row_begin;
      for (; i + kVectorRows <= row_end; i += kVectorRows)
        fast_block_avx512(model, i, j0, n, k, af, ae, bf_panel.data(), be_panel.data(), c, d, redo);
      if (i < row_end)
        fast_columns(model, i, row_end, j0, kVectorColumns, n, k, av, ae, bv, be, c, d, redo);
    }
  }
#endif
  for (; j0 < n; j0 += kChunk) {
    fast_columns(model, row_begin, row_end, j0, std::min(kChunk, n - j0), n, k, av, ae, bv, be, c,
                 d, redo);
  }
}

// fast_rows for each x86-64 level (cpu_level.hpp); the AVX-512 block only in the v4 clone.
using FastRows = void (*)(const FastOperands&, int, int);
[[SIMPREC_TARGET_V3]] void fast_rows_v3(const FastOperands& o, int row_begin, int row_end) {
  fast_rows<false>(o, row_begin, row_end);
}
[[SIMPREC_TARGET_V4]] void fast_rows_v4(const FastOperands& o, int row_begin, int row_end) {
  fast_rows<SIMPREC_AVX512_KERNELS>(o, row_begin, row_end);
}

// Runs fn(begin, end) on contiguous ranges of rows, one per thread.
template <class Fn>
void parallel_rows(int m, unsigned threads, Fn&& fn) {
  const unsigned t = std::min<unsigned>(resolve_threads(threads), std::max(1, m));
  parallel_for(t, t, [&](int64_t part) {
    fn(static_cast<int>(m * part / t), static_cast<int>(m * (part + 1) / t));
  });
}

}  // namespace

std::vector<uint32_t> tensor_core_gemm(const TensorCoreModel& model, std::span<const uint16_t> a,
                                       std::span<const uint16_t> b, std::span<const uint32_t> c,
                                       int m, int n, int k, unsigned threads) {
  if (m < 0 || n < 0 || k < 0 || a.size() != static_cast<size_t>(m) * k ||
      b.size() != static_cast<size_t>(k) * n || c.size() != static_cast<size_t>(m) * n) {
    throw std::invalid_argument(
        "tensor_core_gemm: operand sizes do not match M=" + std::to_string(m) +
        ", N=" + std::to_string(n) + ", K=" + std::to_string(k));
  }
  std::vector<uint32_t> d(static_cast<size_t>(m) * n);
  const auto reference = [&](int i, int j) {
    d[static_cast<size_t>(i) * n + j] =
        tensor_core_dot(model, a.data() + static_cast<size_t>(i) * k, 1, b.data() + j, n, k,
                        c[static_cast<size_t>(i) * n + j]);
  };
  if (!fast_path_applies(model) || k == 0) {
    parallel_rows(m, threads, [&](int begin, int end) {
      for (int i = begin; i < end; ++i)
        for (int j = 0; j < n; ++j) reference(i, j);
    });
    return d;
  }
  // K padded to whole instructions with zeros (what a kernel's zero-filled tile does).
  const int kp = (k + model.k - 1) / model.k * model.k;
  std::vector<double> av(static_cast<size_t>(m) * kp, 0.0), bv(static_cast<size_t>(kp) * n, 0.0);
  std::vector<int32_t> ae(static_cast<size_t>(m) * kp, kZeroExponent),
      be(static_cast<size_t>(kp) * n, kZeroExponent);
  std::vector<uint8_t> row_special(m, 0), col_special(n, 0);
  const Unpacked16* table = unpack16_table(model.input);  // the fast path's inputs are bf16/fp16
  for (int i = 0; i < m; ++i)
    for (int kk = 0; kk < k; ++kk) {
      const Unpacked16 u = table[a[static_cast<size_t>(i) * k + kk]];
      av[static_cast<size_t>(i) * kp + kk] = u.value;
      ae[static_cast<size_t>(i) * kp + kk] = u.exponent;
      row_special[i] |= !u.finite;
    }
  for (int kk = 0; kk < k; ++kk)
    for (int j = 0; j < n; ++j) {
      const Unpacked16 u = table[b[static_cast<size_t>(kk) * n + j]];
      bv[static_cast<size_t>(kk) * n + j] = u.value;
      be[static_cast<size_t>(kk) * n + j] = u.exponent;
      col_special[j] |= !u.finite;
    }
  // float copies for the vector path (exact: 16-bit values)
  const std::vector<float> af(av.begin(), av.end()), bf(bv.begin(), bv.end());
  std::vector<uint8_t> redo(static_cast<size_t>(m) * n, 0);
  const FastRows rows = for_this_cpu<FastRows>(fast_rows<false>, fast_rows_v3, fast_rows_v4);
  const FastOperands operands{model, n, kp, av, bv, ae, be, af, bf, c, d, redo};
  parallel_rows(m, threads, [&](int begin, int end) {
    rows(operands, begin, end);
    for (int i = begin; i < end; ++i)
      for (int j = 0; j < n; ++j)
        if (redo[static_cast<size_t>(i) * n + j] || row_special[i] || col_special[j])
          reference(i, j);
  });
  return d;
}

}  // namespace simprec
