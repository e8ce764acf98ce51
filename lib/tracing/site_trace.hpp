// Per-site statistics of the signed rounding error (rounded - exact), in absolute terms and in
// ulps of the site's format, with the fractions of exact results and of ties.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "emulation/format.hpp"

namespace simprec::tracing {

struct SiteTrace {
  uint64_t count = 0;
  uint64_t exact = 0;                      // rounded == exact
  uint64_t ties = 0;                       // the exact value was halfway between two neighbours
  double sum_error = 0, sum_error_sq = 0;  // absolute
  double sum_error_ulp = 0, sum_error_ulp_sq = 0;  // in ulps of the exact value's binade
  double sum_abs_exact = 0;

  // `exact_hi + exact_lo` is the value before rounding (lo may be 0), `rounded` the result.
  void record(const Format& format, double exact_hi, double exact_lo, double rounded) {
    if (!std::isfinite(rounded) || !std::isfinite(exact_hi)) return;
    ++count;
    const double error = (rounded - exact_hi) - exact_lo;
    sum_abs_exact += std::fabs(exact_hi);
    if (error == 0) {
      ++exact;
      return;
    }
    sum_error += error;
    sum_error_sq += error * error;
    const double magnitude = std::fabs(exact_hi) > 0 ? std::fabs(exact_hi) : std::fabs(rounded);
    int exponent = std::ilogb(magnitude);
    if (exponent < format.emin()) exponent = format.emin();
    const double ulp = std::ldexp(1.0, exponent - format.mantissa_bits);
    const double in_ulps = error / ulp;
    sum_error_ulp += in_ulps;
    sum_error_ulp_sq += in_ulps * in_ulps;
    if (std::fabs(in_ulps) == 0.5) ++ties;
  }
  void merge(const SiteTrace& o) {
    count += o.count;
    exact += o.exact;
    ties += o.ties;
    sum_error += o.sum_error;
    sum_error_sq += o.sum_error_sq;
    sum_error_ulp += o.sum_error_ulp;
    sum_error_ulp_sq += o.sum_error_ulp_sq;
    sum_abs_exact += o.sum_abs_exact;
  }
  double mean_error() const { return count ? sum_error / count : 0.0; }
  double rms_error() const { return count ? std::sqrt(sum_error_sq / count) : 0.0; }
  double mean_error_ulp() const { return count ? sum_error_ulp / count : 0.0; }
  double rms_error_ulp() const { return count ? std::sqrt(sum_error_ulp_sq / count) : 0.0; }
  double exact_fraction() const { return count ? static_cast<double>(exact) / count : 0.0; }
  double tie_fraction() const { return count ? static_cast<double>(ties) / count : 0.0; }
  nlohmann::json to_json() const;
};

}  // namespace simprec::tracing
