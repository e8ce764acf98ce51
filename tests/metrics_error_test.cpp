// Error metrics on hand-made tensors whose answers are known in closed form.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "lib/metrics/error_metrics.hpp"

namespace simprec::metrics {
namespace {

TEST(ErrorMetrics, BiasAndStandardErrorAcrossDraws) {
  // Three draws of two elements; draw errors (mean per draw) are 1, 2, 6.
  const std::vector<double> ref{1, -1, 2, -2, 3, -3};
  const std::vector<double> err{0.5, 1.5, 2, 2, 6, 6};
  std::vector<double> test(ref.size());
  for (size_t i = 0; i < ref.size(); ++i) test[i] = ref[i] + err[i];
  const auto m = compute_metrics(test, ref, 3, formats::fp64);
  EXPECT_DOUBLE_EQ(m.bias, 3.0);
  // sample sd of {1, 2, 6} = sqrt(7), se = sqrt(7/3)
  EXPECT_NEAR(m.bias_se, std::sqrt(7.0 / 3.0), 1e-12);
  EXPECT_NEAR(m.bias_z(), 3.0 / std::sqrt(7.0 / 3.0), 1e-12);
  EXPECT_DOUBLE_EQ(m.max_abs, 6.0);
  double sq = 0, rsq = 0;
  for (size_t i = 0; i < ref.size(); ++i) sq += err[i] * err[i], rsq += ref[i] * ref[i];
  EXPECT_NEAR(m.rms, std::sqrt(sq / 6), 1e-12);
  EXPECT_NEAR(m.rel_frobenius, std::sqrt(sq / rsq), 1e-12);
  // Magnitude bias: errors times the sign of the reference: draws (0.5-1.5)/2, 0, 0.
  EXPECT_NEAR(m.magnitude_bias, (-0.5 + 0 + 0) / 3, 1e-12);
  // Each draw's max |err|: 1.5, 2, 6; mean 19/6, sample sd sqrt(sum (x - 19/6)^2 / 2).
  EXPECT_NEAR(m.draw_max_abs_mean, 19.0 / 6.0, 1e-12);
  const double a = 1.5 - 19.0 / 6, b = 2 - 19.0 / 6, c = 6 - 19.0 / 6;
  EXPECT_NEAR(m.draw_max_abs_sd, std::sqrt((a * a + b * b + c * c) / 2), 1e-12);
}

TEST(ErrorMetrics, WassersteinOfAShiftIsTheShift) {
  std::vector<double> ref, test;
  for (int i = 0; i < 100; ++i) {
    ref.push_back(std::sin(i * 1.3));
    test.push_back(std::sin(i * 1.3) + 0.25);
  }
  // A permutation of the test values has the same distribution.
  std::swap(test[3], test[70]);
  const auto m = compute_metrics(test, ref, 1, formats::fp64);
  EXPECT_NEAR(m.wasserstein1, 0.25, 1e-12);
  EXPECT_TRUE(std::isnan(m.bias_se));  // one draw: no standard error
}

TEST(ErrorMetrics, UlpHistogramInTheOutputFormat) {
  // bf16 ulp at 1.0 is 2^-7; at 0.75 (binade [0.5, 1)) it is 2^-8.
  const std::vector<double> ref{1.0, 1.0, 1.0, 0.75, 1.0};
  const std::vector<double> test{1.0, 1.0 + 0x1p-7, 1.0 - 0x1p-6, 0.75 + 0x1p-8, 1.0 + 1.0};
  const auto m = compute_metrics(test, ref, 1, formats::bf16);
  EXPECT_EQ(m.ulp_histogram.at(0), 1);
  EXPECT_EQ(m.ulp_histogram.at(1), 2);
  EXPECT_EQ(m.ulp_histogram.at(-2), 1);
  EXPECT_EQ(m.ulp_histogram.at(ErrorMetrics::kHistogramLimit), 1);  // 128 ulps, clipped
}

TEST(ErrorMetrics, BadSizesThrow) {
  const std::vector<double> a{1, 2, 3}, b{1, 2};
  EXPECT_THROW(compute_metrics(a, b, 1, formats::fp64), std::invalid_argument);
  EXPECT_THROW(compute_metrics(a, a, 2, formats::fp64), std::invalid_argument);
}

}  // namespace
}  // namespace simprec::metrics
