#include "lib/validate/output_comparison.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>

#include "emulation/round.hpp"
#include "lib/validate/tensor_values.hpp"

namespace simprec::validate {
namespace {

// Sign-magnitude encodings map to a line of integers, so that distance counts values.
int64_t ordered(uint64_t bits, int width) {
  const uint64_t sign = uint64_t{1} << (width - 1);
  const auto magnitude = static_cast<int64_t>(bits & (sign - 1));
  return (bits & sign) ? -magnitude : magnitude;
}

std::vector<UlpBucket> empty_histogram() {
  // 0, +-1, +-2, then powers of two: enough resolution near zero, a long tail for gross errors.
  const std::vector<std::pair<int64_t, int64_t>> positive = {
      {1, 1}, {2, 2}, {3, 4}, {5, 8}, {9, 16}, {17, 256}, {257, 65536}, {65537, INT64_MAX}};
  std::vector<UlpBucket> buckets;
  for (auto it = positive.rbegin(); it != positive.rend(); ++it)
    buckets.push_back({-it->second, -it->first});
  buckets.push_back({0, 0});
  for (const auto& [low, high] : positive) buckets.push_back({low, high});
  return buckets;
}

}  // namespace

std::string percentage_text(int64_t part, int64_t whole) {
  if (whole <= 0 || part == whole) return "100";
  if (part == 0) return "0";
  // In units of 1e-5 percent, rounded to nearest in integers (part * 1e7 overflows 64 bits).
  constexpr int64_t kUnits = 10'000'000;
  const auto wide = static_cast<__int128>(part) * kUnits * 2 + whole;
  auto units = static_cast<int64_t>(wide / (static_cast<__int128>(whole) * 2));
  units = std::clamp<int64_t>(units, 1, kUnits - 1);
  std::string text = std::to_string(units / 100'000);
  std::string decimals = std::to_string(units % 100'000);
  decimals.insert(0, 5 - decimals.size(), '0');
  while (!decimals.empty() && decimals.back() == '0') decimals.pop_back();
  if (!decimals.empty()) text += "." + decimals;
  return text;
}

int64_t ulp_distance(uint64_t from_bits, uint64_t to_bits, int width) {
  return ordered(to_bits, width) - ordered(from_bits, width);
}

OutputComparison compare_outputs(const plugins::HostTensor& kernel,
                                 const plugins::HostTensor& emulation) {
  if (kernel.name != emulation.name || kernel.format != emulation.format ||
      kernel.shape != emulation.shape) {
    throw std::invalid_argument("cannot compare output '" + kernel.name + "' " + kernel.format +
                                " " + plugins::shape_text(kernel.shape) + " with '" +
                                emulation.name + "' " + emulation.format + " " +
                                plugins::shape_text(emulation.shape));
  }
  OutputComparison c;
  c.name = kernel.name;
  c.format = kernel.format;
  c.shape = kernel.shape;
  c.values = kernel.element_count();
  c.histogram = empty_histogram();
  const Format format = storage_format(kernel);
  double sum_ulps = 0, sum_difference = 0, sum_abs = 0;
  int64_t ulp_count = 0, finite_count = 0;
  for (int64_t i = 0; i < c.values; ++i) {
    const uint64_t kb = kernel.bits_at(i), eb = emulation.bits_at(i);
    if (kb == eb) ++c.bitwise_equal;
    const double kv = decode(format, kb), ev = decode(format, eb);
    if (kb == eb || (std::isnan(kv) && std::isnan(ev))) ++c.agreeing;
    if (std::isnan(kv) || std::isnan(ev)) {
      if (std::isnan(kv) && std::isnan(ev)) {
        ++c.both_nan;
      } else {
        ++c.nan_mismatch;
      }
      continue;
    }
    const int64_t d = ulp_distance(eb, kb, format.width());
    for (auto& bucket : c.histogram) {
      if (d >= bucket.low && d <= bucket.high) ++bucket.count;
    }
    c.max_abs_ulps = std::max(c.max_abs_ulps, std::abs(d));
    sum_ulps += static_cast<double>(d);
    ++ulp_count;
    if (std::isfinite(kv) && std::isfinite(ev)) {
      sum_difference += kv - ev;
      sum_abs += std::abs(ev);
      ++finite_count;
    }
  }
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  c.mean_signed_ulps = ulp_count > 0 ? sum_ulps / static_cast<double>(ulp_count) : kNaN;
  c.mean_signed_difference =
      finite_count > 0 ? sum_difference / static_cast<double>(finite_count) : kNaN;
  c.mean_abs_value = finite_count > 0 ? sum_abs / static_cast<double>(finite_count) : kNaN;
  return c;
}

void add_reference_errors(OutputComparison& comparison, const plugins::HostTensor& kernel,
                          const plugins::HostTensor& emulation,
                          const std::vector<double>& reference) {
  if (static_cast<int64_t>(reference.size()) != kernel.element_count() ||
      emulation.element_count() != kernel.element_count()) {
    throw std::invalid_argument("reference of output '" + kernel.name + "' has " +
                                std::to_string(reference.size()) + " values for " +
                                std::to_string(kernel.element_count()) + " elements");
  }
  double kernel_sum = 0, emulation_sum = 0;
  int64_t count = 0;
  for (int64_t i = 0; i < kernel.element_count(); ++i) {
    const double k = value_at(kernel, i), e = value_at(emulation, i), r = reference[i];
    if (!std::isfinite(k) || !std::isfinite(e) || !std::isfinite(r)) continue;
    kernel_sum += k - r;
    emulation_sum += e - r;
    ++count;
  }
  // With no element finite on every side there is no mean error to report, not a zero one.
  const double n =
      count > 0 ? static_cast<double>(count) : std::numeric_limits<double>::quiet_NaN();
  comparison.kernel_mean_signed_error = kernel_sum / n;
  comparison.emulation_mean_signed_error = emulation_sum / n;
}

}  // namespace simprec::validate
