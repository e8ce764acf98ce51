// Sums and products at a named site: C[i][j] = model(c, sum_k A[i][k] * B[k][j]) with the
// site's accumulation model, format and rounding. Fast paths where the model is exact in native
// arithmetic: fp32 round-to-nearest-even "sequential" is one native fmaf per term when every
// operand is a float (vectorised over j); fp64 "sequential" is one native fma per term; "exact"
// is a twice-working-precision dot product (Dot2) rounded once through round-to-odd; a
// tensor-core model ("tc:...") whose accumulator is the site's format runs a whole tile through
// tensor_core_gemm (equal to its Accumulation::dot, element by element). Every other model goes
// through the emulation's Accumulation registry one dot product at a time.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "emulation/accumulation.hpp"
#include "emulation/tensor_core.hpp"
#include "lib/attention/site.hpp"
#include "lib/tracing/site_trace.hpp"

namespace simprec::attention {

// Random index of the rounding events of output element (i, j): base + i*row + j*col; a dot
// product of K terms takes indices index(i, j) .. index(i, j) + K.
struct IndexMap {
  uint64_t base = 0, row = 0, col = 0;
  uint64_t at(int64_t i, int64_t j) const { return base + i * row + j * col; }
};

// c[i][j] <- fmaf(a[i][kk], b[kk][j], c[i][j]) for kk = 0..k-1 in order: each output sees the
// sequential model exactly (c is m x n, row stride n). Blocks of 4 rows x 32 columns stay in
// registers across the k loop. Also the plain-float baseline of bench/attention_bench.cpp.
void float_sequential(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                      int64_t ldb, float* c);

// The same for any layout of A and C: a(i, kk) = a[i * a_row + kk * a_col] (a transposed A has
// a_row = 1), c row-major with row stride ldc. With AVX-512, blocks of 8 rows x 32 columns of C
// stay in registers across the k loop and each a(i, kk) is broadcast from memory (on the
// development machine 185 GFLOP/s on one 64 x 64 x 128 tile in cache, 125-145 inside the flash
// attention of float_flash.cpp; Eigen's GEMM: 140 on the same tile).
void float_sequential_strided(int64_t m, int64_t n, int64_t k, const float* a, int64_t a_row,
                              int64_t a_col, const float* b, int64_t ldb, float* c, int64_t ldc);

// c + sum_k a[k*sa] b[k*sb] as hi + lo, accurate to about 2^-106 relative (Dot2).
inline void dot2(const double* a, int64_t sa, const double* b, int64_t sb, int64_t n, double c,
                 double& hi, double& lo) {
  double s = c, e = 0;
  for (int64_t k = 0; k < n; ++k) {
    double ph, pl, t;
    two_prod(a[k * sa], b[k * sb], ph, pl);
    two_sum(s, ph, s, t);
    e += t + pl;
  }
  // s is the plain sum of the rounded products; once it is infinite or NaN, the error terms hold
  // inf - inf and would turn an infinite sum into NaN: the plain sum is the IEEE result.
  if (!std::isfinite(s)) {
    hi = s;
    lo = 0;
    return;
  }
  two_sum(s, e, hi, lo);
}

class ProductSite {
 public:
  ProductSite(Site site, const SiteSpec& spec, uint64_t seed);
  Site site() const { return site_; }
  const SiteRounder& rounder() const { return rounder_; }

  // C (M x N, leading dimension ldc) = [C +] A (M x K, lda) B (K x N, ldb). a32 / b32, when
  // given, are the same operands as floats (same leading dimensions), known to be exact: the
  // fp32 path then skips converting them.
  void gemm(int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* b,
            int64_t ldb, double* c, int64_t ldc, bool accumulate, IndexMap index,
            tracing::SiteTrace* trace, const float* a32 = nullptr,
            const float* b32 = nullptr) const;
  // init + sum of terms.
  double sum(const double* terms, int64_t n, double init, uint64_t index,
             tracing::SiteTrace* trace) const;

 private:
  enum class Path : uint8_t { kFloatSequential, kDoubleSequential, kExact, kTensorCore, kModel };
  bool gemm_tensor_core(int64_t m, int64_t n, int64_t k, const double* a, int64_t lda,
                        const double* b, int64_t ldb, double* c, int64_t ldc,
                        bool accumulate) const;
  void gemm_model(int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* b,
                  int64_t ldb, double* c, int64_t ldc, bool accumulate, IndexMap index) const;
  Site site_;
  SiteRounder rounder_;
  std::shared_ptr<const Accumulation> model_;
  const TensorCoreModel* tensor_core_ = nullptr;
  Path path_;
};

}  // namespace simprec::attention
