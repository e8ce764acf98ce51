#include "lib/attention/head.hpp"

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
  const bool softcap = e_.cfg.masking.softcap > 0;
  if (softcap) softcap_tanh_.resize(br * bc);
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
        x = modified_score(x, i0 + i, j0 + j, index,
                           softcap ? &softcap_tanh_[i * bc + j] : nullptr);
      }
      if (masked(i0 + i, j0 + j)) x = -kInf;
    }
  }
}

double Head::modified_score(double x, int64_t i, int64_t j, uint64_t index,
                            double* softcap_tanh) const {
  const Masking& m = e_.cfg.masking;
  x = mul_at(Site::kS, x, e_.score_scale, index + 1);
  if (m.softcap > 0) {
    const double t = tanh_at(Site::kS, mul_at(Site::kS, x, e_.softcap_rcp, index + 2), index + 3);
    *softcap_tanh = t;
    x = mul_at(Site::kS, t, m.softcap, index + 4);
  }
  if (m.has_alibi()) {
    const double slope = m.alibi_slope(p_ % s_.heads, s_.heads);
    x = fma_at(Site::kS, slope, static_cast<double>(j - i), x, index + 5);
  }
  if (m.bias) x = add_at(Site::kS, x, m.bias->at(p_ / s_.heads, p_ % s_.heads, i, j), index + 6);
  return x;
}

double Head::dscore(double p, double dp, double d, uint64_t index, double t) const {
  if (p == 0) return 0.0;
  const double diff = add_at(Site::kDs, dp, -d, index);
  double ds = mul_at(Site::kDs, p, diff, index + 1);
  if (const double cap = e_.cfg.masking.softcap; cap > 0) {
    // d/dx cap tanh(x / cap) = 1 - t^2: Inductor's ((dS cap) (1 - t t)) (1/cap), with 1 - t t
    // contracted into an fma.
    const double one_minus = fma_at(Site::kDs, -t, t, 1.0, index + 3);
    ds = mul_at(Site::kDs, mul_at(Site::kDs, ds, cap, index + 4), one_minus, index + 5);
    ds = mul_at(Site::kDs, ds, e_.softcap_rcp, index + 6);
  }
  ds = e_.cfg.grad_scale->ds(*this, ds, index);
  return at(Site::kDsCast, ds, index);
}

}  // namespace simprec::attention
