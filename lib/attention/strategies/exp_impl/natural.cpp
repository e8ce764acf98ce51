// P = exp(round(S scale) - round(m scale)): the scaled score and the scaled max each rounded at
// exp_arg, their difference rounded, then exp (PyTorch's math backend, paper A's reference; the
// max element gives exactly 1). In the backward pass the shift is the LSE rounded at exp_arg.
#include "lib/attention/site_arithmetic.hpp"

namespace simprec::attention {
namespace {

class Natural final : public ExpArg {
 public:
  Natural()
      : ExpArg({.name = "natural",
                .doc = "P = exp(round(round(S scale) - round(m scale))), each step rounded at "
                       "exp_arg, exp at exp (the device's expf where device_math has one)",
                .tags = {"natural"},
                .draws = {{"exp_arg",
                           "the scaled max: the row's shift index; S scale: the score's index; "
                           "the argument: the score's index + 1"},
                          {"exp", "P: the score's index"}}}) {}

  double shift_from_max(const SiteArithmetic& a, double m, uint64_t index) const override {
    return a.mul_at(Site::kExpArg, m, a.engine().scale, index);
  }
  double shift_from_lse(const SiteArithmetic& a, double lse, uint64_t index) const override {
    return a.at(Site::kExpArg, lse, index);
  }
  double prob(const SiteArithmetic& a, double s, double shift, uint64_t index) const override {
    const double xs = a.mul_at(Site::kExpArg, s, a.engine().scale, index);
    const double arg = a.add_at(Site::kExpArg, xs, -shift, index + 1);
    return a.expf_at(Site::kExp, arg, index);
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Natural)

}  // namespace simprec::attention
