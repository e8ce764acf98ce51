// Speed of the emulated attention against plain-float implementations of the same algorithms,
// one head, one thread: N = 4096, d = 128 by default (SIMPREC_ATTN_BENCH_N overrides N).
//   FlashFloat/Forward, FlashFloat/Backward: the FA2 tiled algorithm in plain float (fmaf, exp2f)
//   Emulated/fa2, Emulated/fp32: run_attention with the preset (bf16 inputs), threads = 1, fa2
//   with one fp32 fma per term at its product sites;
//   fa2_tc: fa2 as the preset defines it, the tensor-core model tc:sm90-mma-bf16 at every fp32
//   product site
//   EigenFloat/Forward: standard attention in float with Eigen matrix products
// The README's ratios divide Emulated by FlashFloat (fa2) and by EigenFloat (fp32).
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
BENCHMARK(BM_EmulatedForward_fp32)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_EmulatedForwardBackward_fa2)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
