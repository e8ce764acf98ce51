// FlashAttention-2 upstream: c = fp32(scale log2 e) and P = exp2(fma(S, c, -round(m c))), the
// product exact inside the fma, so the max element need not give exactly 1
// (csrc/flash_attn/src/softmax.h, scale_apply_exp2).
#include <cmath>

#include "lib/attention/site_arithmetic.hpp"

namespace simprec::attention {
namespace {

class Exp2Fma final : public ExpArg {
 public:
  Exp2Fma()
      : ExpArg(
            {.name = "exp2-fma",
             .doc = "P = exp2(fma(S, c, -round(m c))) with c = scale log2 e rounded at "
                    "exp_arg, one rounding of the argument (FlashAttention-2's FFMA)",
             .tags = {"exp2", "folded-scale"},
             .draws = {{"exp_arg", "m c: the row's shift index; the argument: the score's index"},
                       {"exp", "P: the score's index"}}}) {}

  double shift_from_max(const SiteArithmetic& a, double m, uint64_t index) const override {
    return a.mul_at(Site::kExpArg, m, a.engine().scale_log2, index);
  }
  double shift_from_lse(const SiteArithmetic& a, double lse, uint64_t index) const override {
    return a.base2_shift_from_lse(lse, index);
  }
  double prob(const SiteArithmetic& a, double s, double shift, uint64_t index) const override {
    const double c = a.engine().scale_log2;
    // With an infinite or NaN operand the double fma is the result (TwoSum's error terms would
    // be NaN where it is an infinity).
    if (!std::isfinite(s) || !std::isfinite(c) || !std::isfinite(shift)) {
      return a.exp2_at(Site::kExp, a.at(Site::kExpArg, std::fma(s, c, -shift), index), index);
    }
    double ph, pl, h, l1, hi, lo;
    two_prod(s, c, ph, pl);
    two_sum(ph, -shift, h, l1);
    two_sum(h, l1 + pl, hi, lo);
    return a.exp2_at(Site::kExp, a.at_exact(Site::kExpArg, hi, lo, index), index);
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Exp2Fma)

}  // namespace simprec::attention
