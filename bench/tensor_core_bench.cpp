// Emulated tensor-core GEMM (the bit-exact H100 bf16 model, one core) against an Eigen float
// GEMM of the same size in the same run. Target (issue 21): 1024^3 emulated <= 5x Eigen.
//   build-*/bin/tensor_core_bench --benchmark_filter=1024
// BM_Ratio1024 times both in turn (best of 3 each) and reports emulated/eigen as `ratio`.
#include <benchmark/benchmark.h>

#include <Eigen/Dense>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "emulation/round.hpp"
#include "emulation/tensor_core.hpp"

namespace {

using simprec::formats::bf16;

struct Operands {
  int n;
  std::vector<uint16_t> a, b;
  std::vector<uint32_t> c;
  Eigen::MatrixXf fa, fb, fc;
};

// bf16 values of both signs over a few binades (no zeros), C of similar size; the same values
// feed Eigen as floats.
Operands make_operands(int n) {
  Operands o{n,
             std::vector<uint16_t>(size_t(n) * n),
             std::vector<uint16_t>(size_t(n) * n),
             std::vector<uint32_t>(size_t(n) * n),
             Eigen::MatrixXf(n, n),
             Eigen::MatrixXf(n, n),
             Eigen::MatrixXf(n, n)};
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> exponent(-4, 4), mantissa(0, 127), sign(0, 1);
  auto draw = [&] {
    return static_cast<uint16_t>((sign(rng) << 15) | ((exponent(rng) + 127) << 7) | mantissa(rng));
  };
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k) {
      o.a[size_t(i) * n + k] = draw();
      o.fa(i, k) = static_cast<float>(simprec::decode(bf16, o.a[size_t(i) * n + k]));
      o.b[size_t(i) * n + k] = draw();
      o.fb(i, k) = static_cast<float>(simprec::decode(bf16, o.b[size_t(i) * n + k]));
      const float cv = static_cast<float>(simprec::decode(bf16, draw()));
      std::memcpy(&o.c[size_t(i) * n + k], &cv, 4);
      o.fc(i, k) = cv;
    }
  return o;
}

void emulated(const Operands& o) {
  const auto& model = simprec::tensor_core_model("tc:sm90-mma-bf16");
  auto d = simprec::tensor_core_gemm(model, o.a, o.b, o.c, o.n, o.n, o.n, 1);
  benchmark::DoNotOptimize(d.data());
}
void eigen(const Operands& o, Eigen::MatrixXf& d) {
  d.noalias() = o.fc;
  d.noalias() += o.fa * o.fb;
  benchmark::DoNotOptimize(d.data());
}

void BM_EmulatedBf16Gemm(benchmark::State& state) {
  Eigen::setNbThreads(1);
  const Operands o = make_operands(static_cast<int>(state.range(0)));
  for (auto _ : state) emulated(o);
  state.counters["GMAC/s"] =
      benchmark::Counter(std::pow(double(o.n), 3), benchmark::Counter::kIsIterationInvariantRate);
}
void BM_EigenFloatGemm(benchmark::State& state) {
  Eigen::setNbThreads(1);
  const Operands o = make_operands(static_cast<int>(state.range(0)));
  Eigen::MatrixXf d(o.n, o.n);
  for (auto _ : state) eigen(o, d);
  state.counters["GMAC/s"] =
      benchmark::Counter(std::pow(double(o.n), 3), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Ratio1024(benchmark::State& state) {
  Eigen::setNbThreads(1);
  const Operands o = make_operands(1024);
  Eigen::MatrixXf d(o.n, o.n);
  const auto best = [](auto&& fn) {
    double t = 1e30;
    for (int r = 0; r < 3; ++r) {
      const auto start = std::chrono::steady_clock::now();
      fn();
      t = std::min(t,
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return t;
  };
  double emulated_s = 0, eigen_s = 0;
  for (auto _ : state) {
    eigen_s = best([&] { eigen(o, d); });
    emulated_s = best([&] { emulated(o); });
  }
  state.counters["eigen_ms"] = eigen_s * 1e3;
  state.counters["emulated_ms"] = emulated_s * 1e3;
  state.counters["ratio"] = emulated_s / eigen_s;
}

BENCHMARK(BM_EmulatedBf16Gemm)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EigenFloatGemm)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Ratio1024)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
