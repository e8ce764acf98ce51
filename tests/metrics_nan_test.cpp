// The NaN rule (issue 18, items 6 and 7): NaN and infinite outputs are always counted, a NaN is
// never reported as agreement or as zero error, NaN at the same positions on both sides agrees,
// and the ulp histogram never gets a bin from a NaN. Expected counts are set by construction.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "emulation/format.hpp"
#include "lib/metrics/error_metrics.hpp"
#include "lib/validate/output_comparison.hpp"
#include "lib/validate/validation.hpp"
#include "plugins/host/host_tensor.hpp"

namespace {

using simprec::formats::bf16;
using simprec::metrics::compute_metrics;
using simprec::metrics::ErrorMetrics;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(MetricsNanRule, AllNanOutputIsNeverZeroError) {
  // Item 6: an all-NaN O was reported as max|err| 0 with a histogram bin -2147483648.
  const std::vector<double> test(64, kNaN), ref(64, 0.25);
  const ErrorMetrics m = compute_metrics(test, ref, 2, bf16);
  EXPECT_EQ(m.nan_count, 64);
  EXPECT_EQ(m.nonfinite_mismatch, 64);
  EXPECT_TRUE(std::isinf(m.max_abs));
  EXPECT_TRUE(std::isinf(m.rms));
  EXPECT_TRUE(std::isnan(m.bias));
  EXPECT_TRUE(std::isnan(m.bias_z()));
  EXPECT_TRUE(m.ulp_histogram.empty());
  const auto j = m.to_json();
  EXPECT_TRUE(j["max_abs"].is_null());
  EXPECT_EQ(j["nan_count"], 64);
  EXPECT_NE(m.nonfinite_text().find("64 of 64 values NaN"), std::string::npos);
}

TEST(MetricsNanRule, OneMismatchMakesEveryStatisticNonFinite) {
  std::vector<double> test(32, 1.0), ref(32, 1.0);
  test[5] = kInf;  // reference finite there
  const ErrorMetrics m = compute_metrics(test, ref, 1, bf16);
  EXPECT_EQ(m.inf_count, 1);
  EXPECT_EQ(m.nonfinite_mismatch, 1);
  EXPECT_TRUE(std::isinf(m.max_abs));
  EXPECT_TRUE(std::isnan(m.wasserstein1));
  // Infinities of opposite sign differ too.
  std::vector<double> neg = test;
  ref[5] = -kInf;
  EXPECT_EQ(compute_metrics(neg, ref, 1, bf16).nonfinite_mismatch, 1);
}

TEST(MetricsNanRule, MatchingNanPositionsAgreeAndTheRestIsMeasured) {
  std::vector<double> test(16, 1.0), ref(16, 1.0);
  test[3] = ref[3] = kNaN;
  test[7] = ref[7] = kInf;
  test[0] = 1.0078125;  // one bf16 ulp above 1 (2^-7)
  const ErrorMetrics m = compute_metrics(test, ref, 1, bf16);
  EXPECT_EQ(m.nan_count, 1);
  EXPECT_EQ(m.inf_count, 1);
  EXPECT_EQ(m.nonfinite_mismatch, 0);
  EXPECT_EQ(m.max_abs, 0.0078125);
  // Bias over the 14 finite pairs: 2^-7 / 14.
  EXPECT_DOUBLE_EQ(m.bias, 0.0078125 / 14);
  EXPECT_EQ(m.ulp_histogram.at(1), 1);
  EXPECT_EQ(m.ulp_histogram.at(0), 13);
  EXPECT_EQ(m.ulp_histogram.size(), 2u);
}

simprec::plugins::HostTensor bf16_tensor(const std::vector<uint16_t>& bits) {
  auto t = simprec::plugins::HostTensor::zeros("O", "bf16", {static_cast<int64_t>(bits.size())});
  for (size_t i = 0; i < bits.size(); ++i) t.set_bits_at(static_cast<int64_t>(i), bits[i]);
  return t;
}

TEST(ValidateNanRule, AllNanKernelOutputFailsWhateverTheClaim) {
  // Item 7: an all-NaN kernel output exited 0 with zero bias.
  const auto kernel = bf16_tensor(std::vector<uint16_t>(8, 0x7fc0));
  const auto emulation = bf16_tensor(std::vector<uint16_t>(8, 0x3f80));  // 1.0
  const auto c = simprec::validate::compare_outputs(kernel, emulation);
  EXPECT_EQ(c.nan_mismatch, 8);
  EXPECT_FALSE(c.bit_exact());
  EXPECT_TRUE(std::isnan(c.mean_signed_difference));
  EXPECT_TRUE(std::isnan(c.mean_signed_ulps));
  simprec::validate::ValidationResult result;
  result.enforced = false;  // no bit-exact claim: differences alone would not fail
  result.comparisons.push_back(c);
  EXPECT_FALSE(result.passed());
  char buffer[4096] = {};
  std::FILE* out = fmemopen(buffer, sizeof buffer - 1, "w");
  simprec::validate::print_validation(out, result);
  std::fclose(out);
  const std::string text = buffer;
  EXPECT_NE(text.find("nan-mismatch=8"), std::string::npos) << text;
  EXPECT_NE(text.find("mean-signed-difference nan"), std::string::npos) << text;
  EXPECT_NE(text.find("result FAIL 8 values are NaN in one output"), std::string::npos) << text;
}

TEST(ValidateNanRule, NanAtTheSamePositionsAgreesWhateverThePayload) {
  // Item 7: kernel and emulation both NaN at the same places (22% of O for beta-rowmax with
  // beta = 3 on the H100) was reported as FAIL when the NaN encodings differed.
  const auto kernel = bf16_tensor({0x3f80, 0x7fc0, 0x4000, 0xffc1});
  const auto emulation = bf16_tensor({0x3f80, 0xffc0, 0x4000, 0x7fff});
  const auto c = simprec::validate::compare_outputs(kernel, emulation);
  EXPECT_EQ(c.both_nan, 2);
  EXPECT_EQ(c.nan_mismatch, 0);
  EXPECT_EQ(c.bitwise_equal, 2);
  EXPECT_TRUE(c.bit_exact());
  simprec::validate::ValidationResult result;
  result.enforced = true;
  result.comparisons.push_back(c);
  EXPECT_TRUE(result.passed());
}

}  // namespace
