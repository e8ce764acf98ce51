#include "lib/attention/product.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <utility>
#include <vector>

#include "emulation/bulk.hpp"
#include "emulation/cpu_level.hpp"
#if SIMPREC_AVX512_KERNELS
#include <immintrin.h>
#endif
#include "emulation/round.hpp"

namespace simprec::attention {
namespace {

// Copies x (rows x cols, leading dimension ld) into out as floats; false when a value is not a
// float (NaN included), in which case the caller takes the model path. Branch-free to vectorise.
bool fits_float(const double* x, int64_t rows, int64_t cols, int64_t ld, float* out) {
  bool ok = true;
  for (int64_t i = 0; i < rows; ++i) {
    const double* __restrict row = x + i * ld;
    float* __restrict o = out + i * cols;
    for (int64_t j = 0; j < cols; ++j) {
      const float f = static_cast<float>(row[j]);
      ok &= static_cast<double>(f) == row[j];
      o[j] = f;
    }
  }
  return ok;
}

void float_sequential_portable(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                               const float* b, int64_t ldb, float* c) {
  constexpr int kRows = 4, kCols = 32;
  int64_t i = 0;
  for (; i + kRows <= m; i += kRows) {
    int64_t j = 0;
    for (; j + kCols <= n; j += kCols) {
      float acc[kRows][kCols];
      for (int r = 0; r < kRows; ++r) {
        for (int x = 0; x < kCols; ++x) acc[r][x] = c[(i + r) * n + j + x];
      }
      for (int64_t kk = 0; kk < k; ++kk) {
        const float* __restrict bv = b + kk * ldb + j;
        for (int r = 0; r < kRows; ++r) {
          const float av = a[(i + r) * lda + kk];
          for (int x = 0; x < kCols; ++x) acc[r][x] = std::fmaf(av, bv[x], acc[r][x]);
        }
      }
      for (int r = 0; r < kRows; ++r) {
        for (int x = 0; x < kCols; ++x) c[(i + r) * n + j + x] = acc[r][x];
      }
    }
    for (int r = 0; r < kRows; ++r) {
      float* __restrict row = c + (i + r) * n;
      for (int64_t kk = 0; kk < k; ++kk) {
        const float av = a[(i + r) * lda + kk];
        const float* __restrict bv = b + kk * ldb;
        for (int64_t x = j; x < n; ++x) row[x] = std::fmaf(av, bv[x], row[x]);
      }
    }
  }
  for (; i < m; ++i) {
    float* __restrict row = c + i * n;
    for (int64_t kk = 0; kk < k; ++kk) {
      const float av = a[i * lda + kk];
      const float* __restrict bv = b + kk * ldb;
      for (int64_t x = 0; x < n; ++x) row[x] = std::fmaf(av, bv[x], row[x]);
    }
  }
}

// float_sequential for x86-64-v3 and v4 (cpu_level.hpp): their fma instructions vectorise
// what the baseline computes with libm's fmaf, one element at a time.
[[SIMPREC_TARGET_V3]] void float_sequential_v3(int64_t m, int64_t n, int64_t k, const float* a,
                                               int64_t lda, const float* b, int64_t ldb, float* c) {
  float_sequential_portable(m, n, k, a, lda, b, ldb, c);
}
[[SIMPREC_TARGET_V4]] void float_sequential_v4(int64_t m, int64_t n, int64_t k, const float* a,
                                               int64_t lda, const float* b, int64_t ldb, float* c) {
  float_sequential_portable(m, n, k, a, lda, b, ldb, c);
}

// One fp32 fma per product term, in k order, as every level computes it.
void float_sequential_strided_portable(int64_t m, int64_t n, int64_t k, const float* a,
                                       int64_t a_row, int64_t a_col, const float* b, int64_t ldb,
                                       float* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    float* __restrict row = c + i * ldc;
    for (int64_t kk = 0; kk < k; ++kk) {
      const float av = a[i * a_row + kk * a_col];
      const float* __restrict bv = b + kk * ldb;
      for (int64_t x = 0; x < n; ++x) row[x] = std::fmaf(av, bv[x], row[x]);
    }
  }
}

// The FMA instructions of x86-64-v3 in place of libm's fmaf.
[[SIMPREC_TARGET_V3]] void float_sequential_strided_v3(int64_t m, int64_t n, int64_t k,
                                                       const float* a, int64_t a_row, int64_t a_col,
                                                       const float* b, int64_t ldb, float* c,
                                                       int64_t ldc) {
  float_sequential_strided_portable(m, n, k, a, a_row, a_col, b, ldb, c, ldc);
}

#if SIMPREC_AVX512_KERNELS
// Rows i0..i0+MR of C, columns j..j+31 (the lanes of mask0 and mask1), over the whole k loop.
template <int MR>
[[SIMPREC_TARGET_V4]] void float_sequential_block(int64_t k, const float* a, int64_t a_row,
                                                  int64_t a_col, const float* b, int64_t ldb,
                                                  float* c, int64_t ldc, __mmask16 mask0,
                                                  __mmask16 mask1) {
  // Fully unrolled loops over r, so that GCC keeps acc in registers (otherwise it also stores
  // the array to the stack at every step of the k loop).
  __m512 acc[MR][2];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    acc[r][0] = _mm512_maskz_loadu_ps(mask0, c + r * ldc);
    acc[r][1] = _mm512_maskz_loadu_ps(mask1, c + r * ldc + 16);
  }
  for (int64_t kk = 0; kk < k; ++kk) {
    const __m512 b0 = _mm512_maskz_loadu_ps(mask0, b + kk * ldb);
    const __m512 b1 = _mm512_maskz_loadu_ps(mask1, b + kk * ldb + 16);
    const float* ak = a + kk * a_col;
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m512 av = _mm512_set1_ps(ak[r * a_row]);
      acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    _mm512_mask_storeu_ps(c + r * ldc, mask0, acc[r][0]);
    _mm512_mask_storeu_ps(c + r * ldc + 16, mask1, acc[r][1]);
  }
}

// float_sequential_block<rows> for 1 <= rows <= sizeof...(MR) (the row tail of a tile).
template <int... MR>
[[SIMPREC_TARGET_V4]] void float_sequential_rows(int rows, std::integer_sequence<int, MR...>,
                                                 int64_t k, const float* a, int64_t a_row,
                                                 int64_t a_col, const float* b, int64_t ldb,
                                                 float* c, int64_t ldc, __mmask16 mask0,
                                                 __mmask16 mask1) {
  ((rows == MR + 1
        ? float_sequential_block<MR + 1>(k, a, a_row, a_col, b, ldb, c, ldc, mask0, mask1)
        : void()),
   ...);
}

// The first `count` of 16 lanes (none for count <= 0).
__mmask16 lanes(int64_t count) {
  return static_cast<__mmask16>(count >= 16 ? 0xffff : count <= 0 ? 0 : (1u << count) - 1);
}
#endif

[[SIMPREC_TARGET_V4]] void float_sequential_strided_v4(int64_t m, int64_t n, int64_t k,
                                                       const float* a, int64_t a_row, int64_t a_col,
                                                       const float* b, int64_t ldb, float* c,
                                                       int64_t ldc) {
#if SIMPREC_AVX512_KERNELS
  constexpr int kRows = 8, kCols = 32;
  for (int64_t i = 0; i < m; i += kRows) {
    const int rows = static_cast<int>(std::min<int64_t>(kRows, m - i));
    for (int64_t j = 0; j < n; j += kCols) {
      // Columns j..j + cols - 1: the first 16 in mask0's lanes, the rest in mask1's.
      const int64_t cols = std::min<int64_t>(kCols, n - j);
      const __mmask16 mask0 = lanes(cols), mask1 = lanes(cols - 16);
      const float* ai = a + i * a_row;
      float* ci = c + i * ldc + j;
      if (rows == kRows) {
        float_sequential_block<kRows>(k, ai, a_row, a_col, b + j, ldb, ci, ldc, mask0, mask1);
      } else {
        float_sequential_rows(rows, std::make_integer_sequence<int, kRows - 1>{}, k, ai, a_row,
                              a_col, b + j, ldb, ci, ldc, mask0, mask1);
      }
    }
  }
#else
  float_sequential_strided_portable(m, n, k, a, a_row, a_col, b, ldb, c, ldc);
#endif
}

}  // namespace

void float_sequential(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                      int64_t ldb, float* c) {
  for_this_cpu(float_sequential_portable, float_sequential_v3, float_sequential_v4)(m, n, k, a, lda,
                                                                                    b, ldb, c);
}

void float_sequential_strided(int64_t m, int64_t n, int64_t k, const float* a, int64_t a_row,
                              int64_t a_col, const float* b, int64_t ldb, float* c, int64_t ldc) {
  for_this_cpu(float_sequential_strided_portable, float_sequential_strided_v3,
               float_sequential_strided_v4)(m, n, k, a, a_row, a_col, b, ldb, c, ldc);
}

ProductSite::ProductSite(Site site, const SiteSpec& spec, uint64_t seed)
    : site_(site), rounder_(spec, seed, site) {
  const bool nearest = spec.rounding.mode == RoundingMode::kNearestEven;
  if (spec.accumulation == "sequential" && nearest && spec.format == formats::fp32) {
    path_ = Path::kFloatSequential;
  } else if (spec.accumulation == "sequential" && nearest && spec.format == formats::fp64) {
    path_ = Path::kDoubleSequential;
  } else if (spec.accumulation == "exact") {
    path_ = Path::kExact;
  } else if (spec.accumulation.rfind("tc:", 0) == 0 && nearest &&
             tensor_core_model(spec.accumulation).accumulator == spec.format &&
             tensor_core_model(spec.accumulation).input_a.width() <= 16 &&
             tensor_core_model(spec.accumulation).input_b.width() <= 16 &&
             spec.format == formats::fp32) {
    tensor_core_ = &tensor_core_model(spec.accumulation);
    path_ = Path::kTensorCore;
  } else {
    path_ = Path::kModel;
  }
  model_ = make_accumulation(spec.accumulation);
}

void ProductSite::gemm_model(int64_t m, int64_t n, int64_t k, const double* a, int64_t lda,
                             const double* b, int64_t ldb, double* c, int64_t ldc, bool accumulate,
                             IndexMap index) const {
  std::vector<double> column(k);
  RoundingContext ctx(rounder_.format(), rounder_.rounding(), rounder_.stream());
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t kk = 0; kk < k; ++kk) column[kk] = b[kk * ldb + j];
    for (int64_t i = 0; i < m; ++i) {
      ctx.set_next_index(index.at(i, j));
      const double init = accumulate ? c[i * ldc + j] : 0.0;
      c[i * ldc + j] = model_->dot({a + i * lda, static_cast<size_t>(k)}, column, init, ctx);
    }
  }
}

void ProductSite::gemm(int64_t m, int64_t n, int64_t k, const double* a, int64_t lda,
                       const double* b, int64_t ldb, double* c, int64_t ldc, bool accumulate,
                       IndexMap index, tracing::SiteTrace* trace, const float* a32,
                       const float* b32) const {
  // Exact values first, for the trace (the same operation on the same operands, unrounded).
  std::vector<double> exact_hi, exact_lo;
  if (trace) {
    exact_hi.resize(m * n);
    exact_lo.resize(m * n);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        dot2(a + i * lda, 1, b + j, ldb, k, accumulate ? c[i * ldc + j] : 0.0, exact_hi[i * n + j],
             exact_lo[i * n + j]);
      }
    }
  }
  switch (path_) {
    case Path::kFloatSequential: {
      // acc <- fmaf(a, b, acc) in order of k: the sequential fp32 model, exactly, when every
      // operand and the initial value are floats (register-blocked, see float_sequential).
      thread_local std::vector<float> af, bf, cf;
      cf.resize(m * n);
      bool ok = true;
      const float* ap = a32;
      const float* bp = b32;
      int64_t lda32 = lda, ldb32 = ldb;
      if (!ap) {
        af.resize(m * k);
        ok = ok && fits_float(a, m, k, lda, af.data());
        ap = af.data();
        lda32 = k;
      }
      if (!bp && ok) {
        bf.resize(k * n);
        ok = ok && fits_float(b, k, n, ldb, bf.data());
        bp = bf.data();
        ldb32 = n;
      }
      if (ok && accumulate) ok = fits_float(c, m, n, ldc, cf.data());
      if (!ok) {
        gemm_model(m, n, k, a, lda, b, ldb, c, ldc, accumulate, index);
        break;
      }
      if (!accumulate) std::fill(cf.begin(), cf.end(), 0.0f);
      float_sequential(m, n, k, ap, lda32, bp, ldb32, cf.data());
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = cf[i * n + j];
      }
      break;
    }
    case Path::kDoubleSequential: {
      thread_local std::vector<double> row;
      row.resize(n);
      for (int64_t i = 0; i < m; ++i) {
        double* __restrict r = row.data();
        for (int64_t j = 0; j < n; ++j) r[j] = accumulate ? c[i * ldc + j] : 0.0;
        for (int64_t kk = 0; kk < k; ++kk) {
          const double av = a[i * lda + kk];
          const double* __restrict bv = b + kk * ldb;
          for (int64_t j = 0; j < n; ++j) r[j] = std::fma(av, bv[j], r[j]);
        }
        for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = r[j];
      }
      break;
    }
    case Path::kExact: {
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double hi, lo;
          dot2(a + i * lda, 1, b + j, ldb, k, accumulate ? c[i * ldc + j] : 0.0, hi, lo);
          c[i * ldc + j] = rounder_.round_exact(hi, lo, index.at(i, j));
        }
      }
      break;
    }
    case Path::kTensorCore:
      if (!gemm_tensor_core(m, n, k, a, lda, b, ldb, c, ldc, accumulate)) {
        gemm_model(m, n, k, a, lda, b, ldb, c, ldc, accumulate, index);
      }
      break;
    case Path::kModel:
      gemm_model(m, n, k, a, lda, b, ldb, c, ldc, accumulate, index);
      break;
  }
  if (trace) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        trace->record(rounder_.format(), exact_hi[i * n + j], exact_lo[i * n + j], c[i * ldc + j]);
      }
    }
  }
}

// The tile as encodings: A and B in the model's input formats (A's, B's), C in fp32; false (and
// nothing written) when an operand is not exactly representable there.
bool ProductSite::gemm_tensor_core(int64_t m, int64_t n, int64_t k, const double* a, int64_t lda,
                                   const double* b, int64_t ldb, double* c, int64_t ldc,
                                   bool accumulate) const {
  thread_local std::vector<double> values, back;
  thread_local std::vector<uint16_t> abits, bbits;
  thread_local std::vector<uint32_t> cbits;
  const auto encode = [&](const Format& in, const double* x, int64_t rows, int64_t cols, int64_t ld,
                          std::vector<uint16_t>& bits) {
    bits.resize(rows * cols);
    if (in == formats::bf16) {
      // A bf16 value is a float whose low 16 bits are zero: its encoding is the top half.
      bool ok = true;
      for (int64_t i = 0; i < rows; ++i) {
        for (int64_t j = 0; j < cols; ++j) {
          const double v = x[i * ld + j];
          const float f = static_cast<float>(v);
          const uint32_t u = std::bit_cast<uint32_t>(f);
          ok &= (static_cast<double>(f) == v) & ((u & 0xffffu) == 0);
          bits[i * cols + j] = static_cast<uint16_t>(u >> 16);
        }
      }
      return ok;
    }
    values.resize(rows * cols);
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) values[i * cols + j] = x[i * ld + j];
    }
    back.resize(values.size());
    round_to_bits<double, uint16_t>(values, bits,
                                    BulkRounding{in, Rounding{}, RandomStream{}, 0, 1});
    decode_bits<uint16_t, double>(in, bits, back);
    bool ok = true;
    for (size_t i = 0; i < values.size(); ++i) ok &= back[i] == values[i];
    return ok;
  };
  if (!encode(tensor_core_->input_a, a, m, k, lda, abits) ||
      !encode(tensor_core_->input_b, b, k, n, ldb, bbits)) {
    return false;
  }
  cbits.resize(m * n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const double v = accumulate ? c[i * ldc + j] : 0.0;
      const float f = static_cast<float>(v);
      if (static_cast<double>(f) != v) return false;
      cbits[i * n + j] = std::bit_cast<uint32_t>(f);
    }
  }
  const std::vector<uint32_t> d =
      tensor_core_gemm(*tensor_core_, abits, bbits, cbits, static_cast<int>(m), static_cast<int>(n),
                       static_cast<int>(k), 1);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = std::bit_cast<float>(d[i * n + j]);
  }
  return true;
}

double ProductSite::sum(const double* terms, int64_t n, double init, uint64_t index,
                        tracing::SiteTrace* trace) const {
  static const double kOne = 1.0;
  double result = init;
  // A sum is a product with ones: B is one column of stride 0.
  gemm(1, 1, n, terms, n, &kOne, 0, &result, 1, true, IndexMap{index, 0, 0}, trace);
  return result;
}

}  // namespace simprec::attention
