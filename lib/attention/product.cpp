#include "lib/attention/product.hpp"

#include <cmath>
#include <vector>

#include "emulation/round.hpp"

namespace simprec::attention {
namespace {

bool fits_float(const double* x, int64_t rows, int64_t cols, int64_t ld, float* out) {
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      const double v = x[i * ld + j];
      const float f = static_cast<float>(v);
      if (static_cast<double>(f) != v && !std::isnan(v)) return false;
      out[i * cols + j] = f;
    }
  }
  return true;
}

}  // namespace

ProductSite::ProductSite(Site site, const SiteSpec& spec, uint64_t seed)
    : site_(site), rounder_(spec, seed, site) {
  const bool nearest = spec.rounding.mode == RoundingMode::kNearestEven;
  if (spec.accumulation == "sequential" && nearest && spec.format == formats::fp32) {
    path_ = Path::kFloatSequential;
  } else if (spec.accumulation == "sequential" && nearest && spec.format == formats::fp64) {
    path_ = Path::kDoubleSequential;
  } else if (spec.accumulation == "exact") {
    path_ = Path::kExact;
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
                       IndexMap index, tracing::SiteTrace* trace) const {
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
      // operand and the initial value are floats. Vectorised over the n outputs of a row.
      thread_local std::vector<float> af, bf, row;
      af.resize(m * k);
      bf.resize(k * n);
      row.resize(n);
      bool ok = fits_float(a, m, k, lda, af.data()) && fits_float(b, k, n, ldb, bf.data());
      if (ok && accumulate) {
        for (int64_t i = 0; i < m && ok; ++i) ok = fits_float(c + i * ldc, 1, n, ldc, row.data());
      }
      if (!ok) {
        gemm_model(m, n, k, a, lda, b, ldb, c, ldc, accumulate, index);
        break;
      }
      for (int64_t i = 0; i < m; ++i) {
        float* __restrict r = row.data();
        for (int64_t j = 0; j < n; ++j) r[j] = accumulate ? static_cast<float>(c[i * ldc + j]) : 0.0f;
        for (int64_t kk = 0; kk < k; ++kk) {
          const float av = af[i * k + kk];
          const float* __restrict bv = bf.data() + kk * n;
          for (int64_t j = 0; j < n; ++j) r[j] = std::fmaf(av, bv[j], r[j]);
        }
        for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = r[j];
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

double ProductSite::sum(const double* terms, int64_t n, double init, uint64_t index,
                        tracing::SiteTrace* trace) const {
  static const double kOne = 1.0;
  double result = init;
  // A sum is a product with ones: B is one column of stride 0.
  gemm(1, 1, n, terms, n, &kOne, 0, &result, 1, true, IndexMap{index, 0, 0}, trace);
  return result;
}

}  // namespace simprec::attention
