#include "lib/attention/head.hpp"

#include <cmath>
#include <numbers>

namespace simprec::attention {

Head::Head(const Engine& e, const AttentionInputs& in, AttentionOutputs& out, int64_t p,
           std::array<tracing::SiteTrace, kSiteCount>* traces, DeviceMisses* misses,
           RowProbe* probe)
    : SiteArithmetic(e, p, traces, misses, probe),
      s_(e.shape),
      visible_(e.cfg.masking, e.cfg.causal, e.shape, p) {
  q_ = in.q.data() + p * s_.nq * s_.d;
  k_ = in.k.data() + p * s_.nk * s_.d;
  v_ = in.v.data() + p * s_.nk * s_.dv;
  o_ = out.o.data() + p * s_.nq * s_.dv;
  lse_ = out.lse.data() + p * s_.nq;
  if (!out.row_sum.empty()) row_sum_ = out.row_sum.data() + p * s_.nq;
  if (in.has_grad()) {
    do_ = in.d_out.data() + p * s_.nq * s_.dv;
    dq_ = out.dq.data() + p * s_.nq * s_.d;
    dk_ = out.dk.data() + p * s_.nk * s_.d;
    dv_ = out.dv.data() + p * s_.nk * s_.dv;
    delta_ = out.delta.data() + p * s_.nq;
  }
  kt_ = transpose(k_, s_.nk, s_.d);
  // Float copies of the inputs for the fp32 product path, when every value is a float.
  q32_ = as_floats(q_, s_.nq * s_.d);
  k32_ = as_floats(k_, s_.nk * s_.d);
  kt32_ = as_floats(kt_.data(), s_.nk * s_.d);
  v32_ = as_floats(v_, s_.nk * s_.dv);
  if (do_) {
    const std::vector<double> vt = transpose(v_, s_.nk, s_.dv);
    vt32_ = as_floats(vt.data(), s_.nk * s_.dv);
    do32_ = as_floats(do_, s_.nq * s_.dv);
  }
}

std::vector<double> Head::transpose(const double* x, int64_t rows, int64_t cols) {
  std::vector<double> t(rows * cols);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) t[j * rows + i] = x[i * cols + j];
  }
  return t;
}

std::vector<float> Head::as_floats(const double* x, int64_t n) {
  std::vector<float> f(n);
  bool ok = true;
  for (int64_t i = 0; i < n; ++i) {
    f[i] = static_cast<float>(x[i]);
    ok &= static_cast<double>(f[i]) == x[i];
  }
  if (!ok) f.clear();
  return f;
}

void Head::scores(int64_t i0, int64_t i1, int64_t j0, int64_t j1, double* out, int64_t tile) const {
  const int64_t br = i1 - i0, bc = j1 - j0;
  e_.product(Site::kS).gemm(br, bc, s_.d, q_ + i0 * s_.d, s_.d, kt_.data() + j0, s_.nk, out, bc,
                            false, e_.imap(p_, i0, j0, tile * (s_.d + 1)), trace(Site::kS),
                            f32(q32_, i0 * s_.d), f32(kt32_, j0));
  // Per-block scales: each score dequantised, s = fp32(s~ fp32(q_s k_s)) at s (in log2 units:
  // Q's scale carries the exponent constant).
  const bool dequantize =
      e_.scales && e_.cfg.quant.quantizes_qk() && e_.cfg.quant.qk_scale == QuantScale::kBlock;
  const bool keep = e_.score_mod != nullptr;
  if (keep) kept_.resize(br * bc);
  for (int64_t i = 0; i < br; ++i) {
    for (int64_t j = 0; j < bc; ++j) {
      double& x = out[i * bc + j];
      const uint64_t index = e_.idx(p_, i0 + i, j0 + j, tile * (s_.d + 1) + s_.d);
      if (dequantize) {
        const double descale =
            e_.rd(Site::kS, e_.scales->q_scale(p_, i0 + i) * e_.scales->k_scale(p_, j0 + j));
        x = mul_at(Site::kS, x, descale, index);
      }
      if (e_.prescaled_scores) {
        x = modified_score(x, i0 + i, j0 + j, index, keep ? &kept_[i * bc + j] : nullptr);
      }
      if (masked(i0 + i, j0 + j)) x = -kInf;
    }
  }
}

namespace {

// A score_mod's floating-point operations as the kernel rounds them at one site.
class RoundedAt {
 public:
  RoundedAt(const SiteArithmetic& a, const Engine& e, Site site, uint64_t index)
      : a_(a), e_(e), site_(site), index_(index) {}
  double constant(double c) const { return e_.rd(site_, c); }
  double to_float(double x, uint32_t) const { return e_.rd(site_, x); }
  double add(double x, double y, uint32_t k) const { return a_.add_at(site_, x, y, at(k)); }
  double mul(double x, double y, uint32_t k) const { return a_.mul_at(site_, x, y, at(k)); }
  double fma(double x, double y, double z, uint32_t k) const {
    return a_.fma_at(site_, x, y, z, at(k));
  }
  // Triton's `/` on fp32 is div.full.f32; Inductor turns a division by a constant into a
  // product with its reciprocal.
  double div(double x, double y, uint32_t k) const { return a_.div_full_at(site_, x, y, at(k)); }
  double div_const(double x, double c, uint32_t k) const { return mul(x, constant(1.0 / c), k); }
  double tanh(double x, uint32_t k) const { return a_.tanh_at(site_, x, at(k)); }
  // Inductor's exp on fp32 is libdevice's expf (inlined in the kernels' PTX).
  double exp(double x, uint32_t k) const { return a_.expf_at(site_, x, at(k)); }
  double exp2(double x, uint32_t k) const { return a_.exp2_at(site_, x, at(k)); }
  double log(double x, uint32_t k) const { return a_.logf_at(site_, x, at(k)); }
  double sqrt(double x, uint32_t) const { return e_.rd(site_, std::sqrt(x)); }
  // Triton's sigmoid: 1 / (1 + exp(-x)), its exp ex2.approx of x times fp32(log2 e).
  double sigmoid(double x, uint32_t k) const {
    const double e = a_.exp2_at(site_, mul(-x, constant(std::numbers::log2e), k), at(k) + 1);
    return div(1.0, add(1.0, e, k), k);
  }

 private:
  uint64_t at(uint32_t k) const { return index_ + 2 * static_cast<uint64_t>(k); }
  const SiteArithmetic& a_;
  const Engine& e_;
  Site site_;
  uint64_t index_;
};

}  // namespace

double Head::run_score_mod(const ScoreProgram& program, Site site, const ScoreModPoint& at,
                           uint64_t index) const {
  const RoundedAt arith(*this, e_, site, index);
  return evaluate(program, e_.score_mod->tensors(), at, arith, score_mod_values_);
}

double Head::modified_score(double x, int64_t i, int64_t j, uint64_t index, double* kept) const {
  if (e_.score_mod) {
    *kept = x;
    // The program's random bits (stochastic rounding) from index + 7 on: past the scale's and
    // the bias's.
    const ScoreModPoint at{x, e_.score_scale, p_ / s_.heads, p_ % s_.heads, i, j};
    x = run_score_mod(e_.score_mod->modification(), Site::kS, at, index + 7);
  } else {
    x = mul_at(Site::kS, x, e_.score_scale, index + 1);
  }
  if (const auto& bias = e_.cfg.masking.bias)
    x = add_at(Site::kS, x, bias->at(p_ / s_.heads, p_ % s_.heads, i, j), index + 6);
  return x;
}

double Head::dscore(double p, double dp, double d, uint64_t index, double t, int64_t i,
                    int64_t j) const {
  if (p == 0) return 0.0;
  const double diff = add_at(Site::kDs, dp, -d, index);
  double ds;
  if (e_.score_mod) {
    // The score_mod's derivative program from q.k (t), with dS = P (dP - D) inside it, as
    // FlexAttention's backward compiles its joint graph.
    const ScoreModPoint at{t, e_.score_scale, p_ / s_.heads, p_ % s_.heads, i, j, p, diff};
    ds = run_score_mod(e_.score_mod->derivative(), Site::kDs, at, index + 7);
  } else {
    ds = mul_at(Site::kDs, p, diff, index + 1);
  }
  ds = e_.cfg.grad_scale->ds(*this, ds, index);
  return at(Site::kDsCast, ds, index);
}

}  // namespace simprec::attention
