// `simprec discover --gemm`: the GEMM numerics spec (lib/gemm) that reproduces a recorded GEMM's
// output bit for bit, by trying every spec of a finite space with the GEMM engine. The space:
// the tensor-core instruction models whose input formats hold A and B, split_k none or pieces of
// whole 128-byte K tiles (2 to 64 pieces), promotion none/32/64/128/256/512 for 8-bit inputs,
// both scale orders where scales are given, and every output format that holds D. Each candidate
// runs on a few rows of A first; those that agree best there run on every row. The report's
// lines (docs/discover.md) go to `log` as they come and end with `spec SPEC`.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lib/npy/npy.hpp"

namespace simprec::discover {

struct GemmRecording {
  // A (M, K) and B (K, N): uint8/uint16 encodings or float32 values, as `simprec gemm` takes
  // them. D (M, N): float32 values of the output format. Scales and bias: float32, as there.
  const NpyArray* a = nullptr;
  const NpyArray* b = nullptr;
  const NpyArray* d = nullptr;
  const NpyArray* scale_a = nullptr;
  const NpyArray* scale_b = nullptr;
  const NpyArray* bias = nullptr;
};

struct GemmDiscoverOptions {
  // Presets or specs: the search keeps to their instruction models and tries each as given too.
  // Empty: every instruction model with an fp32 accumulator that holds A and B.
  std::vector<std::string> families;
  std::optional<double> time_limit;  // seconds; past it the best spec so far is reported
  unsigned threads = 0;              // the engine's (0: every core)
  std::function<void(const std::string& line)> log;
};

// The first output where the spec differs from D.
struct GemmMiss {
  int64_t row = 0, column = 0;
  float recorded = 0, emulated = 0;
};

struct GemmDiscoveryResult {
  std::string spec;  // the closest spec found, named from the preset that says it in fewest items
  bool bit_exact = false;
  bool stopped = false;  // the time limit ended the search
  int64_t outputs = 0, differing = 0;
  std::optional<GemmMiss> first_miss;
  std::vector<std::string> ties;  // other specs that agree on as many outputs
  int64_t candidates = 0;         // specs run (on the first rows or on all)
  double seconds = 0;
  std::vector<std::string> lines;  // the report
};

// Throws std::invalid_argument naming the array or family that does not fit (shapes, dtypes, no
// instruction model holding A and B, a scale of the wrong size).
GemmDiscoveryResult discover_gemm(const GemmRecording& recording,
                                  const GemmDiscoverOptions& options);

}  // namespace simprec::discover
