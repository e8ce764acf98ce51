// alpha = exp2(round(shift_old - shift_new)): the difference of the two exponent shifts (the
// rounded m c of exp_impl), then exp2, each at o_rescale: a kernel computing
// exp2f(shift_old - shift_new) (the memory-efficient kernel, simprec's own CUDA kernels).
#include "lib/attention/site_arithmetic.hpp"

namespace simprec::attention {
namespace {

class Exp2Shift final : public Rescale {
 public:
  Exp2Shift()
      : Rescale({.name = "exp2-shift",
                 .doc = "alpha = exp2(round(shift_old - shift_new)), the difference of the "
                        "exponent shifts, each step at o_rescale",
                 .needs = {{.key = "exp_impl", .tag = "exp2"}},
                 .draws = {{"o_rescale", "the argument: its index; alpha: the exp index"}}}) {}

  double alpha(const SiteArithmetic& a, const RescaleInput& in,
               const RescaleDraws& draws) const override {
    const double arg = a.add_at(Site::kORescale, in.shift_old, -in.shift_new, draws.argument);
    return a.exp2_at(Site::kORescale, arg, draws.exp);
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Exp2Shift)

}  // namespace simprec::attention
