// alpha = exp(scale (m_old - m_new)) from the exact difference, rounded once at o_rescale.
#include "lib/attention/site_arithmetic.hpp"

namespace simprec::attention {
namespace {

class Exact final : public Rescale {
 public:
  Exact()
      : Rescale({.name = "exact",
                 .doc = "alpha = exp(scale (m_old - m_new)), rounded once at o_rescale",
                 .draws = {{"o_rescale", "alpha: the rescale's exp index"}}}) {}

  double alpha(const SiteArithmetic& a, const RescaleInput& in,
               const RescaleDraws& draws) const override {
    return a.exp_rounded(Site::kORescale, a.engine().scale * (in.m_old - in.m_new), draws.exp,
                         /*base2=*/false);
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Exact)

}  // namespace simprec::attention
