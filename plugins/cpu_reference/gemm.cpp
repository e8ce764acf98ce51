#include <cmath>

#include "plugins/cpu_reference/call_args.hpp"
#include "plugins/cpu_reference/kernels.hpp"

namespace simprec::cpu_reference {
namespace {

struct GemmShape {
  int64_t m, n, k;
};

GemmShape gemm_shape(const SimprecRunArgs* args) {
  const SimprecTensor& a = tensor(args, "A");
  const SimprecTensor& b = tensor(args, "B");
  if (dimension(b, 0) != dimension(a, 1))
    throw KernelFailure(SIMPREC_ERROR_INVALID_ARGUMENT, "A and B disagree on K");
  return {dimension(a, 0), dimension(b, 1), dimension(a, 1)};
}

// Row-major A [M,K], B [K,N], C/D [M,N]; `step` is acc <- step(acc, a, b).
template <class T, class Read, class Write, class Step>
void gemm(const SimprecRunArgs* args, Read read, Write write, Step step) {
  const GemmShape s = gemm_shape(args);
  const auto a = read(tensor(args, "A"));
  const auto b = read(tensor(args, "B"));
  const SimprecTensor* c_tensor = find_tensor(args, "C");
  const auto c = c_tensor ? read(*c_tensor) : std::vector<T>(static_cast<size_t>(s.m * s.n), T(0));
  std::vector<T> d(static_cast<size_t>(s.m * s.n));
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t j = 0; j < s.n; ++j) {
      T acc = c[static_cast<size_t>(i * s.n + j)];
      for (int64_t k = 0; k < s.k; ++k)
        acc = step(acc, a[static_cast<size_t>(i * s.k + k)], b[static_cast<size_t>(k * s.n + j)]);
      d[static_cast<size_t>(i * s.n + j)] = acc;
    }
  }
  write(tensor(args, "D"), d);
}

}  // namespace

SimprecStatus run_gemm_f32(const SimprecRunArgs* args) {
  return guarded(args, [&] {
    gemm<float>(args, read_floats, write_floats,
                [](float acc, float a, float b) { return std::fma(a, b, acc); });
  });
}

SimprecStatus run_gemm_f32_unfused(const SimprecRunArgs* args) {
  return guarded(args, [&] {
    // -ffp-contract=off keeps the compiler from fusing this back into an fma.
    gemm<float>(args, read_floats, write_floats,
                [](float acc, float a, float b) { return acc + a * b; });
  });
}

SimprecStatus run_gemm_f64(const SimprecRunArgs* args) {
  return guarded(args, [&] {
    gemm<double>(args, read_doubles, write_doubles,
                 [](double acc, double a, double b) { return std::fma(a, b, acc); });
  });
}

}  // namespace simprec::cpu_reference
