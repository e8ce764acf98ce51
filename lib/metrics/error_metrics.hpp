// How far an emulated tensor is from its reference: size of the error, its bias with a standard
// error taken across independent draws, a ULP-error histogram and the Wasserstein-1 distance
// between the two value distributions.
//
// The NaN rule: an element where test and reference are both NaN, or the same infinity, agrees.
// Any other element with a NaN or infinity on one side (or infinities of opposite sign) is a
// mismatch, and a single mismatch makes max|err|, rms and rel infinite and bias, its se and z,
// the per-element z and W1 undefined (NaN): no statistic of the finite elements stands in for a
// result that has none. NaN and infinite test values are always counted; the ulp histogram
// counts the finite pairs only.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <span>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "emulation/format.hpp"

namespace simprec::metrics {

struct ErrorMetrics {
  int64_t count = 0;
  int64_t draws = 0;
  int64_t nan_count = 0;           // test values that are NaN
  int64_t inf_count = 0;           // test values that are infinite
  int64_t nonfinite_mismatch = 0;  // elements that disagree under the NaN rule above
  double max_abs = 0;              // max |test - ref|
  // Each draw's max |test - ref| (paper B's metric, one per run): their mean and their standard
  // deviation across draws (NaN with one draw).
  double draw_max_abs_mean = 0, draw_max_abs_sd = 0;
  double rms = 0;            // sqrt(mean (test - ref)^2)
  double rel_frobenius = 0;  // ||test - ref|| / ||ref||
  double ref_rms = 0;        // sqrt(mean ref^2), for scale
  // Mean signed error, and the standard error of that mean across draws: errors inside one
  // draw are correlated, so the draw means are the independent samples. NaN with one draw.
  double bias = 0, bias_se = 0;
  // The same for the error in the direction of the reference's sign (positive: magnitudes
  // pushed outward).
  double magnitude_bias = 0, magnitude_bias_se = 0;
  // Per-element z-score (bias over the per-element standard error); overstates significance.
  double naive_z = 0;
  double wasserstein1 = 0;
  // Errors in ulps of `format` at the reference value, rounded to the nearest integer and
  // clipped to +-kHistogramLimit.
  std::map<int, int64_t> ulp_histogram;
  static constexpr int kHistogramLimit = 16;
  double bias_z() const { return bias_se > 0 ? bias / bias_se : std::isnan(bias) ? bias : 0.0; }
  double magnitude_bias_z() const {
    return magnitude_bias_se > 0        ? magnitude_bias / magnitude_bias_se
           : std::isnan(magnitude_bias) ? magnitude_bias
                                        : 0.0;
  }
  // "3 of 4096 values NaN, 1 infinite; 4 where the reference differs" (empty when all finite).
  std::string nonfinite_text() const;
  nlohmann::json to_json() const;
};

// `test` and `ref` have the same length, a multiple of `draws`; element i belongs to draw
// i / (size / draws) (the leading batch dimension). Throws std::invalid_argument otherwise.
ErrorMetrics compute_metrics(std::span<const double> test, std::span<const double> ref,
                             int64_t draws, const Format& format);

// Ratio a/b for a deviation ratio; NaN where b is 0.
double ratio(double a, double b);

}  // namespace simprec::metrics
