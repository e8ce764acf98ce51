// The memory-efficient kernel's backward: dS times the scale before its cast, so that dQ and dK
// accumulate scaled terms and are cast unscaled.
#include "lib/attention/site_arithmetic.hpp"

namespace simprec::attention {
namespace {

class ScaleDs final : public GradScale {
 public:
  ScaleDs()
      : GradScale({.name = "ds",
                   .doc = "dS scale rounded at ds before the cast at ds_cast; dQ and dK cast "
                          "unscaled (the memory-efficient kernel)",
                   .draws = {{"ds", "dS scale: the dS index + 2"},
                             {"grad_out", "(row, column, 0 for dQ, 1 for dK)"}}}) {}

  double ds(const SiteArithmetic& a, double ds, uint64_t index) const override {
    return a.mul_at(Site::kDs, ds, a.engine().grad_scale, index + 2);
  }
  double grad(const SiteArithmetic& a, Site, double value, uint64_t index) const override {
    return a.at(Site::kGradOut, value, index);
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(ScaleDs)

}  // namespace simprec::attention
