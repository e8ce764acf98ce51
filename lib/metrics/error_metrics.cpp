#include "lib/metrics/error_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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
  // inf/inf is a NaN with its sign bit set on x86, printed "-nan"; every undefined ratio is the
  // same NaN.
  const double r = b != 0 ? a / b : kNaN;
  return std::isnan(r) ? kNaN : r;
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
  std::vector<int64_t> draw_count(draws, 0);
  std::vector<double> draw_max(draws, 0.0);
  double sum_sq = 0, ref_sq = 0, sum_err = 0, sum_err_sq = 0;
  for (size_t i = 0; i < test.size(); ++i) {
    if (std::isnan(test[i])) ++m.nan_count;
    if (std::isinf(test[i])) ++m.inf_count;
    if (!std::isfinite(test[i]) || !std::isfinite(ref[i])) {
      const bool agree = (std::isnan(test[i]) && std::isnan(ref[i])) || test[i] == ref[i];
      if (!agree) ++m.nonfinite_mismatch;
      continue;
    }
    const double err = test[i] - ref[i];
    m.max_abs = std::max(m.max_abs, std::fabs(err));
    draw_max[i / per_draw] = std::max(draw_max[i / per_draw], std::fabs(err));
    sum_sq += err * err;
    ref_sq += ref[i] * ref[i];
    sum_err += err;
    sum_err_sq += err * err;
    draw_bias[i / per_draw] += err;
    draw_mag[i / per_draw] += ref[i] < 0 ? -err : err;
    ++draw_count[i / per_draw];
    const double ulps = err / ulp_at(format, std::fabs(ref[i]));
    int bin =
        static_cast<int>(std::clamp(std::nearbyint(ulps), double{-ErrorMetrics::kHistogramLimit},
                                    double{ErrorMetrics::kHistogramLimit}));
    ++m.ulp_histogram[bin];
  }
  if (m.nonfinite_mismatch > 0) {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    m.max_abs = m.rms = m.rel_frobenius = m.draw_max_abs_mean = kInf;
    m.draw_max_abs_sd = kNaN;
    m.ref_rms = m.bias = m.bias_se = m.magnitude_bias = m.magnitude_bias_se = m.naive_z =
        m.wasserstein1 = kNaN;
    return m;
  }
  // Agreeing NaN or infinite pairs carry no error; the means are over the finite pairs.
  const auto n = static_cast<double>(test.size() - static_cast<size_t>(m.nan_count + m.inf_count));
  if (n == 0) {
    m.rms = m.rel_frobenius = m.ref_rms = m.bias = m.bias_se = m.magnitude_bias =
        m.magnitude_bias_se = m.naive_z = m.wasserstein1 = m.draw_max_abs_mean = m.draw_max_abs_sd =
            kNaN;
    return m;
  }
  m.rms = std::sqrt(sum_sq / n);
  m.ref_rms = std::sqrt(ref_sq / n);
  m.rel_frobenius = ref_sq > 0 ? std::sqrt(sum_sq / ref_sq) : kNaN;
  // Each draw's mean over its finite pairs; a draw without any has no mean and is left out.
  std::vector<double> bias_means, magnitude_means, draw_max_finite;
  for (int64_t d = 0; d < draws; ++d) {
    if (draw_count[d] == 0) continue;
    draw_max_finite.push_back(draw_max[d]);
    bias_means.push_back(draw_bias[d] / static_cast<double>(draw_count[d]));
    magnitude_means.push_back(draw_mag[d] / static_cast<double>(draw_count[d]));
  }
  draw_bias = std::move(bias_means);
  draw_mag = std::move(magnitude_means);
  mean_and_se(draw_bias, m.bias, m.bias_se);
  mean_and_se(draw_mag, m.magnitude_bias, m.magnitude_bias_se);
  mean_and_se(draw_max_finite, m.draw_max_abs_mean, m.draw_max_abs_sd);
  // The spread of the draws' maxima, not the standard error of their mean.
  m.draw_max_abs_sd *= std::sqrt(static_cast<double>(draw_max_finite.size()));
  const double mean = sum_err / n;
  const double var = n > 1 ? (sum_err_sq - n * mean * mean) / (n - 1) : 0;
  m.naive_z = var > 0 ? mean / std::sqrt(var / n) : 0;
  std::vector<double> a, b;
  for (size_t i = 0; i < test.size(); ++i) {
    if (!std::isfinite(test[i])) continue;
    a.push_back(test[i]);
    b.push_back(ref[i]);
  }
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  double w = 0;
  for (size_t i = 0; i < a.size(); ++i) w += std::fabs(a[i] - b[i]);
  m.wasserstein1 = w / n;
  return m;
}

std::string ErrorMetrics::nonfinite_text() const {
  if (nan_count == 0 && inf_count == 0 && nonfinite_mismatch == 0) return "";
  std::string text = std::to_string(nan_count) + " of " + std::to_string(count) + " values NaN, " +
                     std::to_string(inf_count) + " infinite";
  if (nonfinite_mismatch > 0) {
    text += "; " + std::to_string(nonfinite_mismatch) +
            " where the reference differs: no error statistic is finite";
  } else {
    text += ", the reference the same there";
  }
  return text;
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
          {"nan_count", nan_count},
          {"inf_count", inf_count},
          {"nonfinite_mismatch", nonfinite_mismatch},
          {"max_abs", number(max_abs)},
          {"draw_max_abs_mean", number(draw_max_abs_mean)},
          {"draw_max_abs_sd", number(draw_max_abs_sd)},
          {"rms", number(rms)},
          {"rel_frobenius", number(rel_frobenius)},
          {"ref_rms", number(ref_rms)},
          {"bias", number(bias)},
          {"bias_se", number(bias_se)},
          {"bias_z", bias_se > 0 ? nlohmann::json(bias_z()) : nlohmann::json()},
          {"magnitude_bias", number(magnitude_bias)},
          {"magnitude_bias_se", number(magnitude_bias_se)},
          {"magnitude_bias_z",
           magnitude_bias_se > 0 ? nlohmann::json(magnitude_bias_z()) : nlohmann::json()},
          {"naive_per_element_z", number(naive_z)},
          {"wasserstein1", number(wasserstein1)},
          {"ulp_histogram", hist}};
}

}  // namespace simprec::metrics
