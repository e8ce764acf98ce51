// Speed of the emulated attention against plain-float implementations of the same algorithms,
// one head, one thread: N = 4096, d = 128 by default (SIMPREC_ATTN_BENCH_N overrides N).
//   FlashFloat/Forward, FlashFloat/Backward: the FA2 tiled algorithm in plain float (fmaf, exp2f)
//   Emulated/fa2, Emulated/fp32: run_attention with the preset (bf16 inputs), threads = 1
//   EigenFloat/Forward: standard attention in float with Eigen matrix products
// The README's ratios divide Emulated by FlashFloat (fa2) and by EigenFloat (fp32).
#include <benchmark/benchmark.h>

#include <Eigen/Dense>
#include <cmath>
#include <cstdlib>
#include <numbers>
#include <vector>

#include "lib/attention/attention.hpp"
#include "lib/attention/preset.hpp"
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
    inputs = inputs::generate("normal", AttentionShape{1, 1, bench_n(), bench_n(), kD, kD}, 1, true);
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
      for (int i = 0; i < kBr; ++i) {
        float* __restrict row = s.data() + i * kBc;
        for (int j = 0; j < kBc; ++j) row[j] = 0.f;
        for (int64_t x = 0; x < d; ++x) {
          const float a = pr.q[(i0 + i) * d + x];
          const float* __restrict b = kt.data() + x * n + j0;
          for (int j = 0; j < kBc; ++j) row[j] = std::fmaf(a, b[j], row[j]);
        }
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
      for (int i = 0; i < kBr; ++i) {
        float* __restrict out = acc.data() + i * d;
        for (int j = 0; j < kBc; ++j) {
          const float p = s[i * kBc + j];
          const float* __restrict vv = pr.v.data() + (j0 + j) * d;
          for (int64_t x = 0; x < d; ++x) out[x] = std::fmaf(p, vv[x], out[x]);
        }
      }
    }
    for (int i = 0; i < kBr; ++i) {
      const float inv = 1.f / l[i];
      for (int64_t x = 0; x < d; ++x) o[(i0 + i) * d + x] = acc[i * d + x] * inv;
      lse[i0 + i] = m[i] * static_cast<float>(1.0 / std::sqrt(double(d))) + std::log(l[i]);
    }
  }
}

// FA2 backward in plain float (outer loop over key/value tiles, as the emulation).
void flash_backward_float(const Problem& pr, const std::vector<float>& o, const std::vector<float>& lse,
                          std::vector<float>& dq, std::vector<float>& dk, std::vector<float>& dv) {
  const int64_t n = bench_n(), d = kD;
  const float scale = static_cast<float>(1.0 / std::sqrt(double(d)));
  const float c = static_cast<float>(scale * std::numbers::log2e);
  std::vector<float> kt(d * n), vt(d * n), delta(n), s(kBr * kBc), pt(kBc * kBr), dp(kBr * kBc),
      ds(kBr * kBc), dst(kBc * kBr), dk_acc(kBc * d), dv_acc(kBc * d);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t x = 0; x < d; ++x) kt[x * n + j] = pr.k[j * d + x], vt[x * n + j] = pr.v[j * d + x];
  for (int64_t i = 0; i < n; ++i) {
    float acc = 0;
    for (int64_t x = 0; x < d; ++x) acc = std::fmaf(pr.d_out[i * d + x], o[i * d + x], acc);
    delta[i] = acc;
  }
  dq.assign(n * d, 0.f);
  dk.assign(n * d, 0.f);
  dv.assign(n * d, 0.f);
  // rows (m x k) times B (k x n2, leading dimension ldb), accumulated into C (m x n2)
  const auto gemm = [](int m, int n2, int64_t kk, const float* a, int64_t lda, const float* b, int64_t ldb,
                       float* cc, int64_t ldc) {
    for (int i = 0; i < m; ++i) {
      float* __restrict row = cc + i * ldc;
      for (int64_t x = 0; x < kk; ++x) {
        const float av = a[i * lda + x];
        const float* __restrict bv = b + x * ldb;
        for (int j = 0; j < n2; ++j) row[j] = std::fmaf(av, bv[j], row[j]);
      }
    }
  };
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
    for (int64_t x = 0; x < kBc * d; ++x) dk[j0 * d + x] = dk_acc[x] * scale, dv[j0 * d + x] = dv_acc[x];
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

void BM_EigenFloatForward(benchmark::State& state) {
  using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const Problem& pr = problem();
  const int64_t n = bench_n();
  const Eigen::Map<const Mat> q(pr.q.data(), n, kD), k(pr.k.data(), n, kD), v(pr.v.data(), n, kD);
  const float scale = static_cast<float>(1.0 / std::sqrt(double(kD)));
  Mat s(n, n), o(n, kD);
  Eigen::setNbThreads(1);
  for (auto _ : state) {
    s.noalias() = q * k.transpose();
    for (int64_t i = 0; i < n; ++i) {
      const float mx = s.row(i).maxCoeff();
      s.row(i) = ((s.row(i).array() - mx) * scale).exp();
      s.row(i) /= s.row(i).sum();
    }
    o.noalias() = s * v;
    benchmark::DoNotOptimize(o.data());
  }
}
BENCHMARK(BM_EigenFloatForward)->Unit(benchmark::kMillisecond)->Iterations(2);

void emulated(benchmark::State& state, const char* preset, bool backward) {
  const Problem& pr = problem();
  AttentionInputs in = pr.inputs;
  if (!backward) in.d_out.clear();
  AttentionConfig c = make_preset(preset);
  c.threads = 1;
  c.block_rows = kBr;
  c.block_cols = kBc;
  for (auto _ : state) {
    const AttentionOutputs out = run_attention(in, c);
    benchmark::DoNotOptimize(out.o.data());
  }
}
void BM_EmulatedForward_fa2(benchmark::State& s) { emulated(s, "fa2", false); }
void BM_EmulatedForward_fp32(benchmark::State& s) { emulated(s, "fp32", false); }
void BM_EmulatedForwardBackward_fa2(benchmark::State& s) { emulated(s, "fa2", true); }
BENCHMARK(BM_EmulatedForward_fa2)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_EmulatedForward_fp32)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_EmulatedForwardBackward_fa2)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
