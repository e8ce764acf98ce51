// Speed of the emulated attention against plain-float implementations of the same algorithms,
// one head, one thread: N = 4096, d = 128 by default (SIMPREC_ATTN_BENCH_N overrides N).
//   FlashFloat/Forward, FlashFloat/Backward: the FA2 tiled algorithm in plain float (fmaf, exp2f)
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

// C (m x n, ldc) += A (m x k, lda) B (k x n, ldb), each output accumulated in order of k with
// The emulation's own order-preserving float kernel (c has row stride n in every call here), so
// that the comparison is like for like.
void gemm_float(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                int64_t ldb, float* c, int64_t ldc) {
  if (ldc != n) std::abort();
  float_sequential(m, n, k, a, lda, b, ldb, c);
}

// FA2 forward in plain float, the same loop structure as the emulation's fp32 fast path.
void flash_forward_float(const Problem& pr, std::vector<float>& o, std::vector<float>& lse) {
  const int64_t n = bench_n(), d = kD;
  const float c = static_cast<float>(1.0 / std::sqrt(double(d)) * std::numbers::log2e);
  std::vector<float> kt(d * n), s(kBr * kBc), acc(kBr * d), m(kBr), l(kBr);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t x = 0; x < d; ++x) kt[x * n + j] = pr.k[j * d + x];
  o.assign(n * d, 0.f);
  lse.assign(n, 0.f);
  for (int64_t i0 = 0; i0 < n; i0 += kBr) {
    std::fill(acc.begin(), acc.end(), 0.f);
    std::fill(m.begin(), m.end(), -INFINITY);
    std::fill(l.begin(), l.end(), 0.f);
    for (int64_t j0 = 0; j0 < n; j0 += kBc) {
      std::fill(s.begin(), s.end(), 0.f);
      gemm_float(kBr, kBc, d, pr.q.data() + i0 * d, d, kt.data() + j0, n, s.data(), kBc);
      for (int i = 0; i < kBr; ++i) {
        float* __restrict row = s.data() + i * kBc;
        float mx = m[i];
        for (int j = 0; j < kBc; ++j) mx = std::max(mx, row[j]);
        const float alpha = std::exp2f((m[i] - mx) * c);
        const float mc = mx * c;
        m[i] = mx;
        float sum = l[i] * alpha;
        for (int64_t x = 0; x < d; ++x) acc[i * d + x] *= alpha;
        for (int j = 0; j < kBc; ++j) {
          row[j] = std::exp2f(std::fmaf(row[j], c, -mc));
          sum += row[j];
        }
        l[i] = sum;
      }
      gemm_float(kBr, d, kBc, s.data(), kBc, pr.v.data() + j0 * d, d, acc.data(), d);
    }
    for (int i = 0; i < kBr; ++i) {
      const float inv = 1.f / l[i];
      for (int64_t x = 0; x < d; ++x) o[(i0 + i) * d + x] = acc[i * d + x] * inv;
      lse[i0 + i] = m[i] * static_cast<float>(1.0 / std::sqrt(double(d))) + std::log(l[i]);
    }
  }
}

// FA2 backward in plain float (outer loop over key/value tiles, as the emulation).
void flash_backward_float(const Problem& pr, const std::vector<float>& o,
                          const std::vector<float>& lse, std::vector<float>& dq,
                          std::vector<float>& dk, std::vector<float>& dv) {
  const int64_t n = bench_n(), d = kD;
  const float scale = static_cast<float>(1.0 / std::sqrt(double(d)));
  const float c = static_cast<float>(scale * std::numbers::log2e);
  std::vector<float> kt(d * n), vt(d * n), delta(n), s(kBr * kBc), pt(kBc * kBr), dp(kBr * kBc),
      ds(kBr * kBc), dst(kBc * kBr), dk_acc(kBc * d), dv_acc(kBc * d);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t x = 0; x < d; ++x)
      kt[x * n + j] = pr.k[j * d + x], vt[x * n + j] = pr.v[j * d + x];
  for (int64_t i = 0; i < n; ++i) {
    float acc = 0;
    for (int64_t x = 0; x < d; ++x) acc = std::fmaf(pr.d_out[i * d + x], o[i * d + x], acc);
    delta[i] = acc;
  }
  dq.assign(n * d, 0.f);
  dk.assign(n * d, 0.f);
  dv.assign(n * d, 0.f);
  const auto gemm = gemm_float;
  for (int64_t j0 = 0; j0 < n; j0 += kBc) {
    std::fill(dk_acc.begin(), dk_acc.end(), 0.f);
    std::fill(dv_acc.begin(), dv_acc.end(), 0.f);
    for (int64_t i0 = 0; i0 < n; i0 += kBr) {
      std::fill(s.begin(), s.end(), 0.f);
      gemm(kBr, kBc, d, pr.q.data() + i0 * d, d, kt.data() + j0, n, s.data(), kBc);
      for (int i = 0; i < kBr; ++i) {
        const float lc = lse[i0 + i] * static_cast<float>(std::numbers::log2e);
        for (int j = 0; j < kBc; ++j) {
          const float p = std::exp2f(std::fmaf(s[i * kBc + j], c, -lc));
          s[i * kBc + j] = p;
          pt[j * kBr + i] = p;
        }
      }
      gemm(kBc, d, kBr, pt.data(), kBr, pr.d_out.data() + i0 * d, d, dv_acc.data(), d);
      std::fill(dp.begin(), dp.end(), 0.f);
      gemm(kBr, kBc, d, pr.d_out.data() + i0 * d, d, vt.data() + j0, n, dp.data(), kBc);
      for (int i = 0; i < kBr; ++i) {
        for (int j = 0; j < kBc; ++j) {
          const float x = s[i * kBc + j] * (dp[i * kBc + j] - delta[i0 + i]);
          ds[i * kBc + j] = x;
          dst[j * kBr + i] = x;
        }
      }
      gemm(kBr, d, kBc, ds.data(), kBc, pr.k.data() + j0 * d, d, dq.data() + i0 * d, d);
      gemm(kBc, d, kBr, dst.data(), kBr, pr.q.data() + i0 * d, d, dk_acc.data(), d);
    }
    for (int64_t x = 0; x < kBc * d; ++x)
      dk[j0 * d + x] = dk_acc[x] * scale, dv[j0 * d + x] = dv_acc[x];
  }
  for (auto& x : dq) x *= scale;
}

void BM_FlashFloatForward(benchmark::State& state) {
  const Problem& pr = problem();
  std::vector<float> o, lse;
  for (auto _ : state) {
    flash_forward_float(pr, o, lse);
    benchmark::DoNotOptimize(o.data());
  }
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
