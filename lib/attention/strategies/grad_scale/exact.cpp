// dQ = round(scale acc) and dK likewise: the scale applied in one rounding with the final cast.
#include "lib/attention/site_arithmetic.hpp"

namespace simprec::attention {
namespace {

class Exact final : public GradScale {
 public:
  Exact()
      : GradScale({.name = "exact",
                   .doc = "dQ and dK = scale acc rounded once at grad_out",
                   .draws = {{"grad_out", "(row, column, 0 for dQ, 1 for dK)"}}}) {}

  double grad(const SiteArithmetic& a, Site, double value, uint64_t index) const override {
    return a.mul_at(Site::kGradOut, value, a.engine().grad_scale, index);
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Exact)

}  // namespace simprec::attention
