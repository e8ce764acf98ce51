// Bulk rounding throughput on one core (issue targets: rne to bf16 >= 2 G elements/s, to fp16,
// e4m3fn and e5m2 >= 1 G/s, sr to each >= 0.4 G/s), next to a plain memcpy of the same array in
// the same run, and the scalar Float<F> add/fma throughput.
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <vector>

#include "emulation/bulk.hpp"
#include "emulation/float.hpp"

namespace {

using namespace simprec;

constexpr size_t kElements = size_t{1} << 24;

// Normal values spread over a few binades (never zeros: they would hide work).
const std::vector<float>& input() {
  static const std::vector<float> values = [] {
    std::vector<float> v(kElements);
    std::mt19937_64 rng(42);
    std::normal_distribution<float> normal(0.0f, 4.0f);
    for (auto& x : v) x = normal(rng);
    return v;
  }();
  return values;
}

void BM_Memcpy(benchmark::State& state) {
  const auto& in = input();
  std::vector<float> out(in.size());
  for (auto _ : state) {
    std::memcpy(out.data(), in.data(), in.size() * sizeof(float));
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * in.size()));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * in.size() * sizeof(float)));
}
BENCHMARK(BM_Memcpy)->Unit(benchmark::kMillisecond)->UseRealTime();

template <class Bits>
void round_benchmark(benchmark::State& state, Format format, RoundingMode mode) {
  const auto& in = input();
  std::vector<Bits> out(in.size());
  BulkRounding spec{format, {mode, 32}, {1, 0}, 0, 1};
  for (auto _ : state) {
    round_to_bits<float, Bits>(in, out, spec);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * in.size()));
}
void BM_Round16(benchmark::State& s, Format f, RoundingMode m) {
  round_benchmark<uint16_t>(s, f, m);
}
void BM_Round8(benchmark::State& s, Format f, RoundingMode m) {
  round_benchmark<uint8_t>(s, f, m);
}
BENCHMARK_CAPTURE(BM_Round16, rne_bf16, formats::bf16, RoundingMode::kNearestEven)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Round16, rne_fp16, formats::fp16, RoundingMode::kNearestEven)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Round8, rne_e4m3fn, formats::e4m3fn, RoundingMode::kNearestEven)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Round8, rne_e5m2, formats::e5m2, RoundingMode::kNearestEven)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Round16, sr_bf16, formats::bf16, RoundingMode::kStochastic)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Round16, sr_fp16, formats::fp16, RoundingMode::kStochastic)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Round8, sr_e4m3fn, formats::e4m3fn, RoundingMode::kStochastic)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Round8, sr_e5m2, formats::e5m2, RoundingMode::kStochastic)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Scalar emulated arithmetic: a dependent chain would measure latency; independent pairs
// measure throughput.
template <Format F>
void BM_ScalarAdd(benchmark::State& state) {
  RoundingContext ctx(F);
  std::vector<Float<F>> a(4096), b(4096);
  std::mt19937_64 rng(1);
  std::normal_distribution<double> normal;
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = Float<F>::round(normal(rng), ctx);
    b[i] = Float<F>::round(normal(rng), ctx);
  }
  for (auto _ : state) {
    for (size_t i = 0; i < a.size(); ++i) benchmark::DoNotOptimize(add(a[i], b[i], ctx));
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * a.size()));
}
BENCHMARK(BM_ScalarAdd<formats::bf16>);
BENCHMARK(BM_ScalarAdd<formats::e4m3fn>);
BENCHMARK(BM_ScalarAdd<formats::fp32>);

template <Format F>
void BM_ScalarFma(benchmark::State& state) {
  RoundingContext ctx(F);
  std::vector<Float<F>> a(4096), b(4096), c(4096);
  std::mt19937_64 rng(2);
  std::normal_distribution<double> normal;
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = Float<F>::round(normal(rng), ctx);
    b[i] = Float<F>::round(normal(rng), ctx);
    c[i] = Float<F>::round(normal(rng), ctx);
  }
  for (auto _ : state) {
    for (size_t i = 0; i < a.size(); ++i) benchmark::DoNotOptimize(fma(a[i], b[i], c[i], ctx));
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * a.size()));
}
BENCHMARK(BM_ScalarFma<formats::bf16>);
BENCHMARK(BM_ScalarFma<formats::e4m3fn>);
BENCHMARK(BM_ScalarFma<formats::fp32>);

}  // namespace

BENCHMARK_MAIN();
