#include "lib/tracing/site_trace.hpp"

#include <nlohmann/json.hpp>

namespace simprec::tracing {

nlohmann::json SiteTrace::to_json() const {
  return {{"count", count},
          {"mean_error", mean_error()},
          {"rms_error", rms_error()},
          {"mean_error_ulp", mean_error_ulp()},
          {"rms_error_ulp", rms_error_ulp()},
          {"exact_fraction", exact_fraction()},
          {"tie_fraction", tie_fraction()},
          {"mean_abs_value", count ? sum_abs_exact / count : 0.0}};
}

}  // namespace simprec::tracing
