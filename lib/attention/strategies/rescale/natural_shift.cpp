// A natural-exp kernel that keeps each row's max as its rounded, scaled form m = fp32(max S scale)
// (exp_impl=natural's shift) rescales with alpha = expf(fp32(m_old - m_new)): the difference of
// the two shifts rounded at o_rescale, then exp at o_rescale (the device's expf where device_math
// has one). A plain CPU or CUDA online softmax written from the textbook does this.
#include "lib/attention/site_arithmetic.hpp"

namespace simprec::attention {
namespace {

class NaturalShift final : public Rescale {
 public:
  NaturalShift()
      : Rescale({.name = "natural-shift",
                 .doc = "alpha = exp(round(shift_old - shift_new)), the rounded scaled maxima of "
                        "a natural-exp kernel (m = fp32(max S scale)), each step at o_rescale",
                 .needs = {{.key = "exp_impl", .values = {"natural"}}},
                 .draws = {{"o_rescale", "the argument: its index; alpha: the exp index"}}}) {}

  double alpha(const SiteArithmetic& a, const RescaleInput& in,
               const RescaleDraws& draws) const override {
    const double arg = a.add_at(Site::kORescale, in.shift_old, -in.shift_new, draws.argument);
    return a.expf_at(Site::kORescale, arg, draws.exp);
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(NaturalShift)

}  // namespace simprec::attention
