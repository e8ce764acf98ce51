// Triton's contraction of exp2(shift_old - m_new * c) into exp2(fma(-c, m_new, shift_old)): the
// new shift's product exact, one rounding. Where the max stayed, the argument is the rounding error
// of m c, not zero, so l and O are rescaled after every key block but a row's first.
#include "lib/attention/site_arithmetic.hpp"

namespace simprec::attention {
namespace {

class Exp2ShiftFma final : public Rescale {
 public:
  Exp2ShiftFma()
      : Rescale({.name = "exp2-shift-fma",
                 .doc = "alpha = exp2(fma(-c, m_new, shift_old)) after every key block, one "
                        "rounding of the argument at o_rescale (Triton's contraction)",
                 .needs = {{.key = "exp_impl", .tag = "exp2"}},
                 .tags = {"every-block"},
                 .draws = {{"o_rescale", "the argument: its index; alpha: the exp index"}}}) {}

  double alpha(const SiteArithmetic& a, const RescaleInput& in,
               const RescaleDraws& draws) const override {
    const double arg =
        a.fma_at(Site::kORescale, -in.m_new, a.engine().scale_log2, in.shift_old, draws.argument);
    return a.exp2_at(Site::kORescale, arg, draws.exp);
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Exp2ShiftFma)

}  // namespace simprec::attention
