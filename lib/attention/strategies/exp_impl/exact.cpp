// P = exp(scale S - shift) with the argument in double and exp correctly rounded at exp once: the
// exponent as exact as the arithmetic allows, a reference for the others.
#include "lib/attention/site_arithmetic.hpp"

namespace simprec::attention {
namespace {

class Exact final : public ExpArg {
 public:
  Exact()
      : ExpArg({.name = "exact",
                .doc = "P = exp(scale S - scale m), the argument in double, exp correctly rounded "
                       "once at exp",
                .tags = {"exact"},
                .draws = {{"exp", "P: the score's index"}}}) {}

  double shift_from_max(const SiteArithmetic& a, double m, uint64_t) const override {
    return a.engine().scale * m;
  }
  double shift_from_lse(const SiteArithmetic&, double lse, uint64_t) const override { return lse; }
  double prob(const SiteArithmetic& a, double s, double shift, uint64_t index) const override {
    return a.exp_rounded(Site::kExp, a.engine().scale * s - shift, index, /*base2=*/false);
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Exact)

}  // namespace simprec::attention
