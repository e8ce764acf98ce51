// The double-precision reference (attention.hpp, reference_attention): standard attention with
// every dot product a Dot2 compensated sum and libm's exp and log, computed apart from the
// engine's sites and rounders.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "emulation/parallel.hpp"
#include "lib/attention/attention.hpp"
#include "lib/attention/kv_heads.hpp"
#include "lib/attention/product.hpp"
#include "lib/attention/score_mod.hpp"

namespace simprec::attention {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// C = A (m x k, lda) B (k x n, ldb) with every element a Dot2 (twice-working-precision) dot
// product in order of k, vectorised over the n outputs of a row.
void gemm_dot2(int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* b,
               int64_t ldb, double* c, int64_t ldc) {
  std::vector<double> sum(n), err(n);
  for (int64_t i = 0; i < m; ++i) {
    double* __restrict s = sum.data();
    double* __restrict e = err.data();
    for (int64_t j = 0; j < n; ++j) s[j] = e[j] = 0.0;
    for (int64_t x = 0; x < k; ++x) {
      const double av = a[i * lda + x];
      const double* __restrict bv = b + x * ldb;
      for (int64_t j = 0; j < n; ++j) {
        const double ph = av * bv[j];
        const double pl = std::fma(av, bv[j], -ph);
        const double t = s[j] + ph;
        const double bb = t - s[j];
        e[j] += ((s[j] - (t - bb)) + (ph - bb)) + pl;
        s[j] = t;
      }
    }
    // An infinite or NaN plain sum is the IEEE result; its error terms hold inf - inf.
    for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = std::isfinite(s[j]) ? s[j] + e[j] : s[j];
  }
}

std::vector<double> transposed(const double* x, int64_t rows, int64_t cols) {
  std::vector<double> t(rows * cols);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) t[j * rows + i] = x[i * cols + j];
  }
  return t;
}

}  // namespace

AttentionOutputs reference_attention(const AttentionInputs& inputs, double scale, bool causal,
                                     unsigned threads, const Masking& masking) {
  inputs.validate();
  if (inputs.shape.grouped()) {
    AttentionOutputs out =
        reference_attention(with_kv_heads_expanded(inputs), scale, causal, threads, masking);
    if (!inputs.has_grad()) return out;
    const auto add = [](double a, double b) { return a + b; };
    const auto same = [](double x) { return x; };
    const AttentionShape& g = inputs.shape;
    out.dk = combined_over_groups(out.dk, g, g.nk, g.d, add, same);
    out.dv = combined_over_groups(out.dv, g, g.nk, g.dv, add, same);
    return out;
  }
  masking.check(inputs.shape);
  const AttentionShape& s = inputs.shape;
  const bool modified = masking.modifies_scores();
  AttentionOutputs out;
  out.o.assign(s.problems() * s.nq * s.dv, 0.0);
  out.lse.assign(s.problems() * s.nq, 0.0);
  const bool grad = inputs.has_grad();
  if (grad) {
    out.dq.assign(s.problems() * s.nq * s.d, 0.0);
    out.dk.assign(s.problems() * s.nk * s.d, 0.0);
    out.dv.assign(s.problems() * s.nk * s.dv, 0.0);
    out.delta.assign(s.problems() * s.nq, 0.0);
  }
  const std::shared_ptr<const ScoreMod> mod = masking.score_program(s.heads);
  parallel_for(s.problems(), threads, [&](int64_t p) {
    const int64_t nq = s.nq, nk = s.nk, d = s.d, dv = s.dv;
    const double* q = inputs.q.data() + p * nq * d;
    const double* k = inputs.k.data() + p * nk * d;
    const double* v = inputs.v.data() + p * nk * dv;
    double* o = out.o.data() + p * nq * dv;
    std::vector<double> prob(nq * nk, 0.0);  // scores, then normalised P
    {
      const std::vector<double> kt = transposed(k, nk, d);
      gemm_dot2(nq, nk, d, q, d, kt.data(), nk, prob.data(), nk);
    }
    static const double kOne = 1.0;
    const Visibility visible(masking, causal, s, p);
    // With a score modification, each score's q.k (its derivative program starts there).
    std::vector<double> raw(mod ? nq * nk : 0), scratch;
    const ExactScoreArithmetic exact;
    const int64_t batch = p / s.heads, head = p % s.heads;
    for (int64_t i = 0; i < nq; ++i) {
      double* prow = prob.data() + i * nk;
      double m = -kInf;
      for (int64_t j = 0; j < nk; ++j) {
        if (modified) {  // scaled and modified: the softmax then takes them with scale 1
          double x = scale * prow[j];
          if (mod) {
            raw[i * nk + j] = prow[j];
            x = evaluate(mod->modification(), mod->tensors(),
                         ScoreModPoint{prow[j], scale, batch, head, i, j}, exact, scratch);
          }
          if (masking.bias) x += masking.bias->at(p / s.heads, p % s.heads, i, j);
          prow[j] = x;
        }
        if (!visible(i, j)) prow[j] = -kInf;
        m = std::max(m, prow[j]);
      }
      const double row_scale = modified ? 1.0 : scale;
      // exp(scale*(s - m)) with the difference taken before scaling (exact for close scores).
      for (int64_t j = 0; j < nk; ++j)
        prow[j] = prow[j] == -kInf ? 0.0 : std::exp(row_scale * (prow[j] - m));
      double lh, ll;
      dot2(prow, 1, &kOne, 0, nk, 0.0, lh, ll);
      const double l = lh + ll;
      for (int64_t j = 0; j < nk; ++j) prow[j] /= l;
      out.lse[p * nq + i] = m * row_scale + std::log(l);
    }
    gemm_dot2(nq, dv, nk, prob.data(), nk, v, dv, o, dv);
    if (!grad) return;
    const double* dout = inputs.d_out.data() + p * nq * dv;
    std::vector<double> ds(nq * nk);
    {
      const std::vector<double> vt = transposed(v, nk, dv);
      gemm_dot2(nq, nk, dv, dout, dv, vt.data(), nk, ds.data(), nk);  // dP
    }
    for (int64_t i = 0; i < nq; ++i) {
      double hi, lo;
      dot2(dout + i * dv, 1, o + i * dv, 1, dv, 0.0, hi, lo);
      const double delta = hi + lo;
      out.delta[p * nq + i] = delta;
      for (int64_t j = 0; j < nk; ++j) {
        if (mod && prob[i * nk + j] != 0) {
          ds[i * nk + j] = evaluate(mod->derivative(), mod->tensors(),
                                    ScoreModPoint{raw[i * nk + j], scale, batch, head, i, j,
                                                  prob[i * nk + j], ds[i * nk + j] - delta},
                                    exact, scratch);
        } else {
          ds[i * nk + j] = prob[i * nk + j] * (ds[i * nk + j] - delta);
        }
      }
    }
    double* dq = out.dq.data() + p * nq * d;
    double* dk = out.dk.data() + p * nk * d;
    gemm_dot2(nq, d, nk, ds.data(), nk, k, d, dq, d);
    for (int64_t x = 0; x < nq * d; ++x) dq[x] *= scale;
    const std::vector<double> dst = transposed(ds.data(), nq, nk);
    gemm_dot2(nk, d, nq, dst.data(), nq, q, d, dk, d);
    for (int64_t x = 0; x < nk * d; ++x) dk[x] *= scale;
    const std::vector<double> pt = transposed(prob.data(), nq, nk);
    gemm_dot2(nk, dv, nq, pt.data(), nq, dout, dv, out.dv.data() + p * nk * dv, dv);
  });
  return out;
}

}  // namespace simprec::attention
