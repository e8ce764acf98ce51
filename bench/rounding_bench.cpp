// Bulk rounding throughput on one thread, 2^24 normal floats: round_to_bits (encodings out) and
// round_to_values (rounded floats out) for each format and mode of issue 21's table, beside a
// memcpy of the same floats and, where the build has it (SIMPREC_CPFLOAT_DIR), CPFloat's
// cpfloatf on the same input in the same run. After Google Benchmark's own lines it prints the
// table of ns per element and the ratios: CPFloat's time over simprec's (issue target >= 1.5),
// and simprec's over memcpy's (target <= 1.1 where CPFloat runs at memcpy speed). Also the
// Philox draws stochastic rounding consumes (random_bits) and the scalar Float<F> add/fma
// throughput. Times are the thread's CPU time: on a machine shared with other work, wall time
// mostly measures the waits for a core.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "emulation/bulk.hpp"
#include "emulation/cpu_level.hpp"
#include "emulation/float.hpp"
#if SIMPREC_HAVE_CPFLOAT
#include "bench/cpfloat_baseline.h"
#endif

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

struct Case {
  const char* name;
  Format format;
  RoundingMode mode;
};
const Case kCases[] = {
    {"bf16 rne", formats::bf16, RoundingMode::kNearestEven},
    {"bf16 sr", formats::bf16, RoundingMode::kStochastic},
    {"fp16 rne", formats::fp16, RoundingMode::kNearestEven},
    {"fp16 sr", formats::fp16, RoundingMode::kStochastic},
    {"fp16 rtz", formats::fp16, RoundingMode::kTowardZero},
    {"e4m3fn rne", formats::e4m3fn, RoundingMode::kNearestEven},
    {"e5m2 rne", formats::e5m2, RoundingMode::kNearestEven},
    {"e5m2 sr", formats::e5m2, RoundingMode::kStochastic},
};

void finish(benchmark::State& state) {
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kElements));
}

void memcpy_benchmark(benchmark::State& state) {
  const auto& in = input();
  std::vector<float> out(in.size());
  for (auto _ : state) {
    std::memcpy(out.data(), in.data(), in.size() * sizeof(float));
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  finish(state);
}

// The Philox4x32-10 draws stochastic rounding consumes, one word per element, filled 1024 at a
// time into a buffer that stays in the L1 cache (as the bulk kernel does).
void random_bits_benchmark(benchmark::State& state) {
  std::vector<uint32_t> words(1024);
  for (auto _ : state) {
    for (size_t first = 0; first < kElements; first += words.size()) {
      fill_random_bits({1, 0}, first, words.data(), words.size());
      benchmark::DoNotOptimize(words.data());
      benchmark::ClobberMemory();
    }
  }
  finish(state);
}

BulkRounding spec_of(const Case& c) {
  return BulkRounding{c.format, {c.mode, 32}, {1, 0}, 0, 1};
}

void encodings_benchmark(benchmark::State& state, const Case& c) {
  const auto& in = input();
  const BulkRounding spec = spec_of(c);
  const auto run = [&](auto bits) {
    std::vector<decltype(bits)> out(in.size());
    for (auto _ : state) {
      round_to_bits<float, decltype(bits)>(in, out, spec);
      benchmark::DoNotOptimize(out.data());
      benchmark::ClobberMemory();
    }
  };
  if (c.format.width() <= 8) {
    run(uint8_t{});
  } else {
    run(uint16_t{});
  }
  finish(state);
}

void values_benchmark(benchmark::State& state, const Case& c) {
  const auto& in = input();
  const BulkRounding spec = spec_of(c);
  std::vector<float> out(in.size());
  for (auto _ : state) {
    round_to_values<float>(in, out, spec);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  finish(state);
}

#if SIMPREC_HAVE_CPFLOAT
void cpfloat_benchmark(benchmark::State& state, const Case& c) {
  const auto& in = input();
  std::vector<float> out(in.size());
  const cpfloat_baseline_format format{c.format.precision(), c.format.emin(), c.format.emax(),
                                       c.format.has_infinity() ? 1 : 0};
  const cpfloat_baseline_rounding rounding =
      c.mode == RoundingMode::kNearestEven  ? CPFLOAT_BASELINE_NEAREST_EVEN
      : c.mode == RoundingMode::kTowardZero ? CPFLOAT_BASELINE_TOWARD_ZERO
                                            : CPFLOAT_BASELINE_STOCHASTIC;
  cpfloat_baseline* options = cpfloat_baseline_create(format, rounding);
  if (options == nullptr) {
    state.SkipWithError("CPFloat refused the format");
    return;
  }
  for (auto _ : state) {
    if (cpfloat_baseline_round(options, out.data(), in.data(), in.size()) != 0) {
      state.SkipWithError("cpfloatf failed");
      break;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  cpfloat_baseline_destroy(options);
  finish(state);
}
#endif

void register_rounding_benchmarks() {
  const auto timed = [](benchmark::internal::Benchmark* b) {
    b->Unit(benchmark::kMillisecond)->MinTime(0.5);
  };
  timed(benchmark::RegisterBenchmark("memcpy", memcpy_benchmark));
  timed(benchmark::RegisterBenchmark("random_bits", random_bits_benchmark));
  for (const Case& c : kCases) {
#if SIMPREC_HAVE_CPFLOAT
    timed(benchmark::RegisterBenchmark((std::string("cpfloat/") + c.name).c_str(),
                                       cpfloat_benchmark, c));
#endif
    timed(benchmark::RegisterBenchmark((std::string("values/") + c.name).c_str(), values_benchmark,
                                       c));
    timed(benchmark::RegisterBenchmark((std::string("encodings/") + c.name).c_str(),
                                       encodings_benchmark, c));
  }
}

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

// Google Benchmark's console output, plus each rounding benchmark's ns per element for the table.
class TableReporter : public benchmark::ConsoleReporter {
 public:
  std::map<std::string, double> ns_per_element;

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.error_occurred || run.run_type != Run::RT_Iteration) continue;
      // The fastest repetition (--benchmark_repetitions): the least disturbed by other work.
      const double ns = run.GetAdjustedCPUTime() * 1e6 / static_cast<double>(kElements);
      const auto [it, first] = ns_per_element.emplace(run.run_name.function_name, ns);
      if (!first && ns < it->second) it->second = ns;
    }
    ConsoleReporter::ReportRuns(runs);
  }
};

void print_table(const std::map<std::string, double>& ns) {
  const auto find = [&](const std::string& name) {
    const auto it = ns.find(name);
    return it == ns.end() ? -1.0 : it->second;
  };
  const double memcpy_ns = find("memcpy");
  if (memcpy_ns <= 0) return;  // filtered out
  std::printf("\nbulk rounding, 1 thread, %zu normal floats, kernels for %s; memcpy %.3f ns/elem\n",
              kElements, std::string(cpu_level_name(cpu_level())).c_str(), memcpy_ns);
  std::printf(
      "| format, mode | CPFloat ns/elem | values ns/elem | encodings ns/elem | CPFloat/values | "
      "CPFloat/encodings | values/memcpy | encodings/memcpy "
      "|\n|---|---|---|---|---|---|---|---|\n");
  const auto cell = [](double v, const char* format) {
    static char text[32];
    if (v <= 0) return "-";
    std::snprintf(text, sizeof text, format, v);
    return static_cast<const char*>(text);
  };
  for (const Case& c : kCases) {
    const double cp = find(std::string("cpfloat/") + c.name);
    const double values = find(std::string("values/") + c.name);
    const double encodings = find(std::string("encodings/") + c.name);
    std::printf("| %s | %s", c.name, cell(cp, "%.3f"));
    std::printf(" | %s", cell(values, "%.3f"));
    std::printf(" | %s", cell(encodings, "%.3f"));
    std::printf(" | %s", cell(cp > 0 && values > 0 ? cp / values : -1, "%.2f"));
    std::printf(" | %s", cell(cp > 0 && encodings > 0 ? cp / encodings : -1, "%.2f"));
    std::printf(" | %s", cell(values > 0 ? values / memcpy_ns : -1, "%.2f"));
    std::printf(" | %s |\n", cell(encodings > 0 ? encodings / memcpy_ns : -1, "%.2f"));
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_rounding_benchmarks();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  TableReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  print_table(reporter.ns_per_element);
  return 0;
}
