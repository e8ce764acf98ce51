// Speed of the emulated attention against plain-float implementations of the same algorithms,
// one head, one thread: N = 4096, d = 128 by default (SIMPREC_ATTN_BENCH_N overrides N).
//   FlashFloat/Forward, FlashFloat/Backward: the FA2 tiled algorithm in plain float at its best
//   reasonable speed, laid out as the emulation's float fast path (float_flash.cpp) with the
//   same register-blocked GEMM and a vectorised float exp2 (not bit-reproducible)
//   Emulated/fa2, Emulated/fp32: run_attention with the preset (bf16 inputs), threads = 1, fa2
//   with one fp32 fma per term at its product sites;
//   fa2_tc: fa2 as the preset defines it, the tensor-core model tc:sm90-mma-bf16 at every fp32
//   product site
//   EmulatedBackward_fp32: the fp32 preset's backward pass alone (given O and LSE)
//   EigenFloat/Forward, /Backward: standard attention in float with Eigen matrix products (the
//   backward pass from the stored P)
//   EigenFlashFloat/Forward, /Backward: the emulation's flash algorithm (64 x 64 tiles) in float,
//   each tile's products an Eigen matrix product
// The README's ratios divide Emulated by FlashFloat (fa2), and fp32 by EigenFloat and by
// EigenFlashFloat.
#include <benchmark/benchmark.h>

#include <Eigen/Dense>
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <numbers>
#include <string>
#include <string_view>
#include <vector>

#include "lib/attention/attention.hpp"
#include "lib/attention/preset.hpp"
#include "lib/attention/product.hpp"
#include "lib/inputs/generators.hpp"

namespace {

using namespace simprec;
using namespace simprec::attention;

int64_t bench_n() {
  const char* env = std::getenv("SIMPREC_ATTN_BENCH_N");
  return env ? std::atoll(env) : 4096;
}
constexpr int64_t kD = 128;
constexpr int kBr = 64, kBc = 64;

struct Problem {
  AttentionInputs inputs;  // bf16 values
  std::vector<float> q, k, v, d_out;
  Problem() {
    inputs =
        inputs::generate("normal", AttentionShape{1, 1, bench_n(), bench_n(), kD, kD}, 1, true);
    inputs = round_inputs(inputs, make_preset("fa2"));
    q.assign(inputs.q.begin(), inputs.q.end());
    k.assign(inputs.k.begin(), inputs.k.end());
    v.assign(inputs.v.begin(), inputs.v.end());
    d_out.assign(inputs.d_out.begin(), inputs.d_out.end());
  }
};
const Problem& problem() {
  static const Problem p;
  return p;
}

// 2^x in plain float for the baseline, no rounding guarantee: 2^x = 2^n 2^f with n = round(x),
// |f| <= 1/2, 2^f by its Taylor polynomial of degree 6 (truncation below 2^-23 relative), 0 below
// 2^-126 (no subnormals). A plain loop over arrays, which the compiler vectorises (16 lanes).
void exp2_float(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float xi = std::max(x[i], -127.0f);
    const float t = xi + 0x1.8p23f;  // round(x) in the low bits of t
    const float f = xi - (t - 0x1.8p23f);
    float p = 1.5403530e-4f;
    for (const float c :
         {1.3333558e-3f, 9.6181291e-3f, 5.5504109e-2f, 2.4022651e-1f, 6.9314718e-1f, 1.0f}) {
      p = std::fmaf(p, f, c);
    }
    const int32_t scale = (std::bit_cast<int32_t>(t) - std::bit_cast<int32_t>(0x1.8p23f)) << 23;
    y[i] = xi < -126.0f ? 0.0f : std::bit_cast<float>(std::bit_cast<int32_t>(p) + scale);
  }
}

// Rows [i0, i0 + kBr) of x (n x cols) as cols x kBr blocks, one after another (the right operand
// of a transposed tile product, as in float_flash.cpp).
std::vector<float> tiles_transposed(const std::vector<float>& x, int64_t cols) {
  const int64_t n = bench_n();
  std::vector<float> t(x.size());
  for (int64_t i0 = 0; i0 < n; i0 += kBr) {
    for (int64_t i = 0; i < kBr; ++i) {
      for (int64_t c = 0; c < cols; ++c) t[i0 * cols + c * kBr + i] = x[(i0 + i) * cols + c];
    }
  }
  return t;
}

// FlashAttention-2's forward pass in plain float, laid out as the emulation's float fast path
// (lib/attention/float_flash.cpp) lays it out: S^T = K_tile Q_tile^T (so that the per-row softmax
// work runs across rows in vector lanes), P^T = 2^(S^T c - m c), O += P V, the products through
// float_sequential_strided (the fast path's register-blocked GEMM), exp2 by exp2_float. N must be
// a multiple of the tile sizes.
void flash_forward_float(const Problem& pr, std::vector<float>& o, std::vector<float>& lse) {
  const int64_t n = bench_n(), d = kD;
  const float scale = static_cast<float>(1.0 / std::sqrt(double(d)));
  const float c = static_cast<float>(1.0 / std::sqrt(double(d)) * std::numbers::log2e);
  const std::vector<float> qt = tiles_transposed(pr.q, d);
  std::vector<float> st(kBc * kBr), acc(kBr * d), m(kBr), l(kBr), mc(kBr), alpha(kBr);
  o.assign(n * d, 0.f);
  lse.assign(n, 0.f);
  for (int64_t i0 = 0; i0 < n; i0 += kBr) {
    std::fill(acc.begin(), acc.end(), 0.f);
    std::fill(m.begin(), m.end(), -INFINITY);
    std::fill(l.begin(), l.end(), 0.f);
    for (int64_t j0 = 0; j0 < n; j0 += kBc) {
      std::fill(st.begin(), st.end(), 0.f);
      float_sequential_strided(kBc, kBr, d, pr.k.data() + j0 * d, d, 1, qt.data() + i0 * d, kBr,
                               st.data(), kBr);
      float* __restrict mx = alpha.data();  // the new max, then alpha's argument
      for (int i = 0; i < kBr; ++i) mx[i] = m[i];
      for (int j = 0; j < kBc; ++j) {
        const float* __restrict s = st.data() + j * kBr;
        for (int i = 0; i < kBr; ++i) mx[i] = std::max(mx[i], s[i]);
      }
      for (int i = 0; i < kBr; ++i) {
        mc[i] = mx[i] * c;
        const float m_old = m[i];
        m[i] = mx[i];
        alpha[i] = (m_old - m[i]) * c;
      }
      exp2_float(alpha.data(), alpha.data(), kBr);
      for (int j = 0; j < kBc; ++j) {
        float* __restrict s = st.data() + j * kBr;
        for (int i = 0; i < kBr; ++i) s[i] = std::fmaf(s[i], c, -mc[i]);
      }
      exp2_float(st.data(), st.data(), kBc * kBr);
      for (int i = 0; i < kBr; ++i) l[i] *= alpha[i];
      for (int j = 0; j < kBc; ++j) {
        const float* __restrict p = st.data() + j * kBr;
        for (int i = 0; i < kBr; ++i) l[i] += p[i];
      }
      for (int i = 0; i < kBr; ++i) {
        float* __restrict row = acc.data() + i * d;
        for (int64_t x = 0; x < d; ++x) row[x] *= alpha[i];
      }
      float_sequential_strided(kBr, d, kBc, st.data(), 1, kBr, pr.v.data() + j0 * d, d, acc.data(),
                               d);
    }
    for (int i = 0; i < kBr; ++i) {
      const float inv = 1.f / l[i];
      for (int64_t x = 0; x < d; ++x) o[(i0 + i) * d + x] = acc[i * d + x] * inv;
      lse[i0 + i] = m[i] * scale + std::log(l[i]);
    }
  }
}

// Its backward pass, laid out as float_flash.cpp's: D = rowsum(dO o O); key tiles in groups of 4
// outside, query tiles inside; P^T recomputed from the LSE, dV += P^T dO, dP^T = V dO^T,
// dS^T = P o (dP - D), dQ += dS K, dK += dS^T Q; dQ and dK scaled at the end.
void flash_backward_float(const Problem& pr, const std::vector<float>& o,
                          const std::vector<float>& lse, std::vector<float>& dq,
                          std::vector<float>& dk, std::vector<float>& dv) {
  const int64_t n = bench_n(), d = kD;
  const float scale = static_cast<float>(1.0 / std::sqrt(double(d)));
  const float c = static_cast<float>(scale * std::numbers::log2e);
  constexpr int64_t kKeyGroup = 4;
  const std::vector<float> qt = tiles_transposed(pr.q, d), dot = tiles_transposed(pr.d_out, d);
  std::vector<float> delta(n), lse2(n), st(kBc * kBr), dpt(kBc * kBr), dk_acc(kKeyGroup * kBc * d),
      dv_acc(kKeyGroup * kBc * d);
  for (int64_t i = 0; i < n; ++i) {
    float acc = 0;
    for (int64_t x = 0; x < d; ++x) acc = std::fmaf(pr.d_out[i * d + x], o[i * d + x], acc);
    delta[i] = acc;
    lse2[i] = lse[i] * static_cast<float>(std::numbers::log2e);
  }
  dq.assign(n * d, 0.f);
  dk.assign(n * d, 0.f);
  dv.assign(n * d, 0.f);
  for (int64_t g0 = 0; g0 < n; g0 += kKeyGroup * kBc) {
    const int64_t g1 = std::min(n, g0 + kKeyGroup * kBc);
    std::fill(dk_acc.begin(), dk_acc.end(), 0.f);
    std::fill(dv_acc.begin(), dv_acc.end(), 0.f);
    for (int64_t i0 = 0; i0 < n; i0 += kBr) {
      for (int64_t j0 = g0; j0 < g1; j0 += kBc) {
        float* dk_tile = dk_acc.data() + (j0 - g0) * d;
        float* dv_tile = dv_acc.data() + (j0 - g0) * d;
        std::fill(st.begin(), st.end(), 0.f);
        float_sequential_strided(kBc, kBr, d, pr.k.data() + j0 * d, d, 1, qt.data() + i0 * d, kBr,
                                 st.data(), kBr);
        for (int j = 0; j < kBc; ++j) {
          float* __restrict s = st.data() + j * kBr;
          const float* __restrict shift = lse2.data() + i0;
          for (int i = 0; i < kBr; ++i) s[i] = std::fmaf(s[i], c, -shift[i]);
        }
        exp2_float(st.data(), st.data(), kBc * kBr);  // P^T
        float_sequential_strided(kBc, d, kBr, st.data(), kBr, 1, pr.d_out.data() + i0 * d, d,
                                 dv_tile, d);
        std::fill(dpt.begin(), dpt.end(), 0.f);
        float_sequential_strided(kBc, kBr, d, pr.v.data() + j0 * d, d, 1, dot.data() + i0 * d, kBr,
                                 dpt.data(), kBr);
        for (int j = 0; j < kBc; ++j) {
          const float* __restrict p = st.data() + j * kBr;
          float* __restrict ds = dpt.data() + j * kBr;
          const float* __restrict di = delta.data() + i0;
          for (int i = 0; i < kBr; ++i) ds[i] = p[i] * (ds[i] - di[i]);
        }
        float_sequential_strided(kBr, d, kBc, dpt.data(), 1, kBr, pr.k.data() + j0 * d, d,
                                 dq.data() + i0 * d, d);
        float_sequential_strided(kBc, d, kBr, dpt.data(), kBr, 1, pr.q.data() + i0 * d, d, dk_tile,
                                 d);
      }
    }
    for (int64_t x = 0; x < (g1 - g0) * d; ++x) {
      dk[g0 * d + x] = dk_acc[x] * scale;
      dv[g0 * d + x] = dv_acc[x];
    }
  }
  for (auto& x : dq) x *= scale;
}

// The fp32 preset's outputs (correctly rounded fp32 flash attention) on the bench's problem, to
// report how far the baseline's results are from them (counter max_rel_diff: the largest
// absolute difference over the tensor's largest magnitude).
const AttentionOutputs& fp32_reference() {
  static const AttentionOutputs out = [] {
    AttentionConfig c = make_preset("fp32");
    c.threads = 1;
    c.block_rows = kBr;
    c.block_cols = kBc;
    return run_attention(problem().inputs, c);
  }();
  return out;
}
double max_rel_diff(const std::vector<float>& x, const std::vector<double>& reference) {
  double diff = 0, magnitude = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    diff = std::max(diff, std::fabs(x[i] - reference[i]));
    magnitude = std::max(magnitude, std::fabs(reference[i]));
  }
  return diff / magnitude;
}

void BM_FlashFloatForward(benchmark::State& state) {
  const Problem& pr = problem();
  std::vector<float> o, lse;
  for (auto _ : state) {
    flash_forward_float(pr, o, lse);
    benchmark::DoNotOptimize(o.data());
  }
  state.counters["max_rel_diff"] = max_rel_diff(o, fp32_reference().o);
}
BENCHMARK(BM_FlashFloatForward)->Unit(benchmark::kMillisecond)->Iterations(2);

void BM_FlashFloatBackward(benchmark::State& state) {
  const Problem& pr = problem();
  std::vector<float> o, lse, dq, dk, dv;
  flash_forward_float(pr, o, lse);
  for (auto _ : state) {
    flash_backward_float(pr, o, lse, dq, dk, dv);
    benchmark::DoNotOptimize(dq.data());
  }
  const AttentionOutputs& ref = fp32_reference();
  state.counters["max_rel_diff"] =
      std::max({max_rel_diff(dq, ref.dq), max_rel_diff(dk, ref.dk), max_rel_diff(dv, ref.dv)});
}
BENCHMARK(BM_FlashFloatBackward)->Unit(benchmark::kMillisecond)->Iterations(2);

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Standard attention in float with Eigen matrix products: P = softmax(scale Q K^T) row by row,
// O = P V.
void eigen_forward(const Problem& pr, RowMatrix& p, RowMatrix& o) {
  const int64_t n = bench_n();
  const Eigen::Map<const RowMatrix> q(pr.q.data(), n, kD), k(pr.k.data(), n, kD),
      v(pr.v.data(), n, kD);
  const float scale = static_cast<float>(1.0 / std::sqrt(double(kD)));
  p.noalias() = q * k.transpose();
  for (int64_t i = 0; i < n; ++i) {
    const float mx = p.row(i).maxCoeff();
    p.row(i) = ((p.row(i).array() - mx) * scale).exp();
    p.row(i) /= p.row(i).sum();
  }
  o.noalias() = p * v;
}

void BM_EigenFloatForward(benchmark::State& state) {
  const Problem& pr = problem();
  const int64_t n = bench_n();
  RowMatrix p(n, n), o(n, kD);
  Eigen::setNbThreads(1);
  for (auto _ : state) {
    eigen_forward(pr, p, o);
    benchmark::DoNotOptimize(o.data());
  }
}
BENCHMARK(BM_EigenFloatForward)->Unit(benchmark::kMillisecond)->Iterations(2);

// Standard attention's backward pass in float with Eigen matrix products, from the forward
// pass's normalised P (as autograd keeps it): dV = P^T dO, dP = dO V^T, D = rowsum(dO o O),
// dS = P o (dP - D), dQ = scale dS K, dK = scale dS^T Q.
void eigen_backward(const Problem& pr, const RowMatrix& p, const RowMatrix& o, RowMatrix& ds,
                    RowMatrix& dq, RowMatrix& dk, RowMatrix& dv) {
  const int64_t n = bench_n();
  const Eigen::Map<const RowMatrix> q(pr.q.data(), n, kD), k(pr.k.data(), n, kD),
      v(pr.v.data(), n, kD), d_out(pr.d_out.data(), n, kD);
  const float scale = static_cast<float>(1.0 / std::sqrt(double(kD)));
  const Eigen::VectorXf delta = (d_out.array() * o.array()).rowwise().sum();
  dv.noalias() = p.transpose() * d_out;
  ds.noalias() = d_out * v.transpose();
  ds = p.array() * (ds.array().colwise() - delta.array());
  dq.noalias() = ds * k;
  dq *= scale;
  dk.noalias() = ds.transpose() * q;
  dk *= scale;
}

void BM_EigenFloatBackward(benchmark::State& state) {
  const Problem& pr = problem();
  const int64_t n = bench_n();
  Eigen::setNbThreads(1);
  RowMatrix p(n, n), o(n, kD), ds(n, n), dq(n, kD), dk(n, kD), dv(n, kD);
  eigen_forward(pr, p, o);
  for (auto _ : state) {
    eigen_backward(pr, p, o, ds, dq, dk, dv);
    benchmark::DoNotOptimize(dq.data());
    benchmark::DoNotOptimize(dk.data());
    benchmark::DoNotOptimize(dv.data());
  }
}
BENCHMARK(BM_EigenFloatBackward)->Unit(benchmark::kMillisecond)->Iterations(2);

// FlashAttention-2 in float with Eigen: the emulation's tiled algorithm (64 x 64 tiles, the
// running max and sum, P = exp(scale S - scale m)), each tile's products an Eigen GEMM.
void eigen_flash_forward(const Problem& pr, RowMatrix& o, Eigen::VectorXf& lse) {
  const int64_t n = bench_n();
  const Eigen::Map<const RowMatrix> q(pr.q.data(), n, kD), k(pr.k.data(), n, kD),
      v(pr.v.data(), n, kD);
  const float scale = static_cast<float>(1.0 / std::sqrt(double(kD)));
  RowMatrix s(kBr, kBc), acc(kBr, kD);
  Eigen::VectorXf m(kBr), l(kBr);
  o.resize(n, kD);
  lse.resize(n);
  for (int64_t i0 = 0; i0 < n; i0 += kBr) {
    acc.setZero();
    m.setConstant(-INFINITY);
    l.setZero();
    for (int64_t j0 = 0; j0 < n; j0 += kBc) {
      s.noalias() = q.middleRows(i0, kBr) * k.middleRows(j0, kBc).transpose();
      const Eigen::VectorXf m_new = m.cwiseMax(s.rowwise().maxCoeff());
      const Eigen::ArrayXf alpha = ((m - m_new).array() * scale).exp();
      s = ((s.array().colwise() - m_new.array()) * scale).exp();
      l = (l.array() * alpha).matrix() + s.rowwise().sum();
      acc = acc.array().colwise() * alpha;
      acc.noalias() += s * v.middleRows(j0, kBc);
      m = m_new;
    }
    o.middleRows(i0, kBr) = acc.array().colwise() / l.array();
    lse.segment(i0, kBr) = m * scale + l.array().log().matrix();
  }
}

void BM_EigenFlashFloatForward(benchmark::State& state) {
  const Problem& pr = problem();
  Eigen::setNbThreads(1);
  RowMatrix o;
  Eigen::VectorXf lse;
  for (auto _ : state) {
    eigen_flash_forward(pr, o, lse);
    benchmark::DoNotOptimize(o.data());
  }
}
BENCHMARK(BM_EigenFlashFloatForward)->Unit(benchmark::kMillisecond)->Iterations(2);

// Its backward pass, FA2's loops (key/value tiles outside, query tiles inside), P recomputed from
// the LSE, dQ and dK scaled at the end.
void eigen_flash_backward(const Problem& pr, const RowMatrix& o, const Eigen::VectorXf& lse,
                          RowMatrix& dq, RowMatrix& dk, RowMatrix& dv) {
  const int64_t n = bench_n();
  const Eigen::Map<const RowMatrix> q(pr.q.data(), n, kD), k(pr.k.data(), n, kD),
      v(pr.v.data(), n, kD), d_out(pr.d_out.data(), n, kD);
  const float scale = static_cast<float>(1.0 / std::sqrt(double(kD)));
  RowMatrix p(kBr, kBc), dp(kBr, kBc), dk_acc(kBc, kD), dv_acc(kBc, kD);
  dq.setZero(n, kD);
  dk.resize(n, kD);
  dv.resize(n, kD);
  const Eigen::VectorXf delta = (d_out.array() * o.array()).rowwise().sum();
  for (int64_t j0 = 0; j0 < n; j0 += kBc) {
    dk_acc.setZero();
    dv_acc.setZero();
    for (int64_t i0 = 0; i0 < n; i0 += kBr) {
      p.noalias() = q.middleRows(i0, kBr) * k.middleRows(j0, kBc).transpose();
      p = ((p.array() * scale).colwise() - lse.segment(i0, kBr).array()).exp();
      dv_acc.noalias() += p.transpose() * d_out.middleRows(i0, kBr);
      dp.noalias() = d_out.middleRows(i0, kBr) * v.middleRows(j0, kBc).transpose();
      dp = p.array() * (dp.array().colwise() - delta.segment(i0, kBr).array());
      dq.middleRows(i0, kBr).noalias() += dp * k.middleRows(j0, kBc);
      dk_acc.noalias() += dp.transpose() * q.middleRows(i0, kBr);
    }
    dk.middleRows(j0, kBc) = dk_acc * scale;
    dv.middleRows(j0, kBc) = dv_acc;
  }
  dq *= scale;
}

void BM_EigenFlashFloatBackward(benchmark::State& state) {
  const Problem& pr = problem();
  Eigen::setNbThreads(1);
  RowMatrix o, dq, dk, dv;
  Eigen::VectorXf lse;
  eigen_flash_forward(pr, o, lse);
  for (auto _ : state) {
    eigen_flash_backward(pr, o, lse, dq, dk, dv);
    benchmark::DoNotOptimize(dq.data());
    benchmark::DoNotOptimize(dk.data());
    benchmark::DoNotOptimize(dv.data());
  }
}
BENCHMARK(BM_EigenFlashFloatBackward)->Unit(benchmark::kMillisecond)->Iterations(2);

void emulated(benchmark::State& state, const char* preset, bool backward,
              bool tensor_core = false) {
  const Problem& pr = problem();
  AttentionInputs in = pr.inputs;
  if (!backward) in.d_out.clear();
  AttentionConfig c = make_preset(preset);
  c.threads = 1;
  c.block_rows = kBr;
  c.block_cols = kBc;
  // fa2 accumulates with the bit-exact H100 model by default; the plain variant replaces it
  // with one fp32 fma per term at every product site.
  for (const char* site : {"s", "pv_acc", "dp", "dq_acc", "dk_acc", "dv_acc"}) {
    if (std::string_view(preset) != "fa2") break;
    apply_override(c, std::string(site) +
                          (tensor_core ? "=fp32:rne:tc:sm90-mma-bf16" : "=fp32:rne:sequential"));
  }
  for (auto _ : state) {
    const AttentionOutputs out = run_attention(in, c);
    benchmark::DoNotOptimize(out.o.data());
  }
}
// The backward pass alone: run_attention given O and LSE (from the same configuration's
// forward pass) skips the forward pass.
void emulated_backward(benchmark::State& state, const char* preset) {
  const Problem& pr = problem();
  AttentionConfig c = make_preset(preset);
  c.threads = 1;
  c.block_rows = kBr;
  c.block_cols = kBc;
  AttentionInputs in = pr.inputs;
  const AttentionOutputs forward = run_attention(in, c);
  in.o = forward.o;
  in.lse = forward.lse;
  for (auto _ : state) {
    const AttentionOutputs out = run_attention(in, c);
    benchmark::DoNotOptimize(out.dq.data());
  }
}
void BM_EmulatedBackward_fp32(benchmark::State& s) {
  emulated_backward(s, "fp32");
}
void BM_EmulatedForward_fa2(benchmark::State& s) {
  emulated(s, "fa2", false);
}
void BM_EmulatedForward_fp32(benchmark::State& s) {
  emulated(s, "fp32", false);
}
void BM_EmulatedForwardBackward_fa2(benchmark::State& s) {
  emulated(s, "fa2", true);
}
void BM_EmulatedForward_fa2_tc(benchmark::State& s) {
  emulated(s, "fa2", false, true);
}
void BM_EmulatedForwardBackward_fa2_tc(benchmark::State& s) {
  emulated(s, "fa2", true, true);
}
BENCHMARK(BM_EmulatedForward_fa2)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_EmulatedForward_fa2_tc)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_EmulatedForwardBackward_fa2_tc)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_EmulatedForward_fp32)->Unit(benchmark::kMillisecond)->Iterations(2);
BENCHMARK(BM_EmulatedBackward_fp32)->Unit(benchmark::kMillisecond)->Iterations(2);
BENCHMARK(BM_EmulatedForwardBackward_fa2)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
