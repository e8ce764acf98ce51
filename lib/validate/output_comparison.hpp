// How a kernel's output differs from the emulation's: bitwise agreement, a histogram of signed
// ulp differences (kernel - emulation) and the mean signed difference, the measure of bias.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plugins/host/host_tensor.hpp"

namespace simprec::validate {

struct UlpBucket {
  int64_t low, high;  // signed ulp differences in [low, high]
  int64_t count = 0;
};

struct OutputComparison {
  std::string name;
  std::string format;
  std::vector<int64_t> shape;
  int64_t values = 0;
  int64_t bitwise_equal = 0;
  // The NaN rule: NaN in both at the same position agrees (NaN payloads are not compared); NaN
  // in one only is a difference, always counted, and is left out of the ulp and mean
  // statistics, which are NaN when no pair is left to average.
  int64_t both_nan = 0;
  int64_t nan_mismatch = 0;
  int64_t agreeing = 0;              // bitwise equal, or NaN in both
  std::vector<UlpBucket> histogram;  // every bucket, empty ones included, in increasing order
  int64_t max_abs_ulps = 0;
  double mean_signed_ulps = 0;        // over values that are not NaN in either
  double mean_signed_difference = 0;  // in value units, over finite pairs
  double mean_abs_value = 0;          // of the emulation, over finite pairs: scale for the above
  // Against an exact reference, when the emulator has one: the mean signed error of each side,
  // over elements finite in the kernel, the emulation and the reference.
  std::optional<double> kernel_mean_signed_error, emulation_mean_signed_error;

  bool bit_exact() const { return agreeing == values; }
};

// Compares two tensors of the same name, format and shape (throws std::invalid_argument
// otherwise). Ulps are those of the storage format (fp32 for tf32 tensors).
OutputComparison compare_outputs(const plugins::HostTensor& kernel,
                                 const plugins::HostTensor& emulation);

// Sets the comparison's mean signed errors against `reference` (one value per element).
// Throws std::invalid_argument when the sizes disagree.
void add_reference_errors(OutputComparison& comparison, const plugins::HostTensor& kernel,
                          const plugins::HostTensor& emulation,
                          const std::vector<double>& reference);

// `part` of `whole` as a percentage with up to 5 decimals, trailing zeros dropped ("99.99695",
// "50", "100"): one value in ten million shows, and a rounding never makes it "100" while a value
// differs, nor "0" while one agrees. "100" when whole is 0.
std::string percentage_text(int64_t part, int64_t whole);

// Signed distance in ulps between two encodings of `format`, counting the representable values
// between them (+0 and -0 are one value). Neither may be NaN.
int64_t ulp_distance(uint64_t from_bits, uint64_t to_bits, int width);

}  // namespace simprec::validate
