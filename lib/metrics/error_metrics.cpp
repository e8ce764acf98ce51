#include "lib/metrics/error_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace simprec::metrics {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Mean and standard error of the mean of `x`.
void mean_and_se(const std::vector<double>& x, double& mean, double& se) {
  const auto n = static_cast<double>(x.size());
  mean = 0;
  for (double v : x) mean += v;
  mean /= n;
  if (x.size() < 2) {
    se = kNaN;
    return;
  }
  double ss = 0;
  for (double v : x) ss += (v - mean) * (v - mean);
  se = std::sqrt(ss / (n - 1) / n);
}

double ulp_at(const Format& f, double x) {
  int e = x == 0 ? f.emin() : std::ilogb(x);
  if (e < f.emin()) e = f.emin();
  return std::ldexp(1.0, e - f.mantissa_bits);
}

nlohmann::json number(double x) {
  return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json();
}

}  // namespace

double ratio(double a, double b) {
  return b != 0 ? a / b : kNaN;
}

ErrorMetrics compute_metrics(std::span<const double> test, std::span<const double> ref,
                             int64_t draws, const Format& format) {
  if (test.size() != ref.size()) {
    throw std::invalid_argument("metrics: test has " + std::to_string(test.size()) +
                                " elements, reference " + std::to_string(ref.size()));
  }
  if (draws < 1 || test.size() % draws != 0 || test.empty()) {
    throw std::invalid_argument("metrics: " + std::to_string(test.size()) +
                                " elements do not split into " + std::to_string(draws) + " draws");
  }
  ErrorMetrics m;
  m.count = static_cast<int64_t>(test.size());
  m.draws = draws;
  const size_t per_draw = test.size() / draws;
  std::vector<double> draw_bias(draws, 0.0), draw_mag(draws, 0.0);
  double sum_sq = 0, ref_sq = 0, sum_err = 0, sum_err_sq = 0;
  for (size_t i = 0; i < test.size(); ++i) {
    const double err = test[i] - ref[i];
    m.max_abs = std::max(m.max_abs, std::fabs(err));
    sum_sq += err * err;
    ref_sq += ref[i] * ref[i];
    sum_err += err;
    sum_err_sq += err * err;
    draw_bias[i / per_draw] += err;
    draw_mag[i / per_draw] += ref[i] < 0 ? -err : err;
    const double ulps = err / ulp_at(format, std::fabs(ref[i]));
    int bin =
        static_cast<int>(std::clamp(std::nearbyint(ulps), double{-ErrorMetrics::kHistogramLimit},
                                    double{ErrorMetrics::kHistogramLimit}));
    ++m.ulp_histogram[bin];
  }
  const auto n = static_cast<double>(test.size());
  m.rms = std::sqrt(sum_sq / n);
  m.ref_rms = std::sqrt(ref_sq / n);
  m.rel_frobenius = ref_sq > 0 ? std::sqrt(sum_sq / ref_sq) : kNaN;
  for (auto& b : draw_bias) b /= static_cast<double>(per_draw);
  for (auto& b : draw_mag) b /= static_cast<double>(per_draw);
  mean_and_se(draw_bias, m.bias, m.bias_se);
  mean_and_se(draw_mag, m.magnitude_bias, m.magnitude_bias_se);
  const double mean = sum_err / n;
  const double var = n > 1 ? (sum_err_sq - n * mean * mean) / (n - 1) : 0;
  m.naive_z = var > 0 ? mean / std::sqrt(var / n) : 0;
  std::vector<double> a(test.begin(), test.end()), b(ref.begin(), ref.end());
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  double w = 0;
  for (size_t i = 0; i < a.size(); ++i) w += std::fabs(a[i] - b[i]);
  m.wasserstein1 = w / n;
  return m;
}

nlohmann::json ErrorMetrics::to_json() const {
  nlohmann::json hist = nlohmann::json::object();
  for (const auto& [bin, c] : ulp_histogram) {
    std::string key = std::to_string(bin);
    if (bin == kHistogramLimit) key = ">=" + key;
    if (bin == -kHistogramLimit) key = "<=" + key;
    hist[key] = c;
  }
  return {{"count", count},
          {"draws", draws},
          {"max_abs", max_abs},
          {"rms", rms},
          {"rel_frobenius", number(rel_frobenius)},
          {"ref_rms", ref_rms},
          {"bias", bias},
          {"bias_se", number(bias_se)},
          {"bias_z", bias_se > 0 ? nlohmann::json(bias_z()) : nlohmann::json()},
          {"magnitude_bias", magnitude_bias},
          {"magnitude_bias_se", number(magnitude_bias_se)},
          {"magnitude_bias_z",
           magnitude_bias_se > 0 ? nlohmann::json(magnitude_bias_z()) : nlohmann::json()},
          {"naive_per_element_z", naive_z},
          {"wasserstein1", wasserstein1},
          {"ulp_histogram", hist}};
}

}  // namespace simprec::metrics
