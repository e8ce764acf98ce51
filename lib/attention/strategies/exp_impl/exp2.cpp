// P = exp2(round(S c) - round(m c)), c = fp32(scale log2 e): the product and the subtraction
// rounded apart (PyTorch's vendored FlashAttention-2, built with UNFUSE_FMA, so the max element
// gives exactly exp2(0) = 1).
#include "lib/attention/site_arithmetic.hpp"

namespace simprec::attention {
namespace {

class Exp2 final : public ExpArg {
 public:
  Exp2()
      : ExpArg({.name = "exp2",
                .doc = "P = exp2(round(round(S c) - round(m c))) with c = scale log2 e rounded at "
                       "exp_arg (FlashAttention-2 built with UNFUSE_FMA)",
                .tags = {"exp2", "folded-scale"},
                .draws = {{"exp_arg",
                           "m c: the row's shift index; S c: the score's index; the argument: "
                           "the score's index + 1"},
                          {"exp", "P: the score's index"}}}) {}

  double shift_from_max(const SiteArithmetic& a, double m, uint64_t index) const override {
    return a.mul_at(Site::kExpArg, m, a.engine().scale_log2, index);
  }
  double shift_from_lse(const SiteArithmetic& a, double lse, uint64_t index) const override {
    return a.base2_shift_from_lse(lse, index);
  }
  double prob(const SiteArithmetic& a, double s, double shift, uint64_t index) const override {
    const double xs = a.mul_at(Site::kExpArg, s, a.engine().scale_log2, index);
    const double arg = a.add_at(Site::kExpArg, xs, -shift, index + 1);
    return a.exp2_at(Site::kExp, arg, index);
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Exp2)

}  // namespace simprec::attention
