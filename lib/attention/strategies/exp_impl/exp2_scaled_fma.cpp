// exp2-scaled with the last product and the subtraction fused, as LLVM contracts
// `qk * RCP_LN2 - m` in FlexAttention's Triton kernel: fma(round(S scale'), log2e', -u(m)).
#include "lib/attention/site_arithmetic.hpp"

namespace simprec::attention {
namespace {

class Exp2ScaledFma final : public ExpArg {
 public:
  Exp2ScaledFma()
      : ExpArg({.name = "exp2-scaled-fma",
                .doc = "P = exp2(fma(round(S scale'), log2e', -u(m))), one rounding of the "
                       "argument (LLVM's contraction of exp2-scaled); exp2-scaled where "
                       "flex_compile unfuses the block",
                .tags = {"exp2", "scaled"},
                .draws = {{"exp_arg",
                           "u(m): the row's shift index and + 1; S scale': the score's index; the "
                           "argument: the score's index + 2"},
                          {"exp", "P: the score's index"}}}) {}

  double shift_from_max(const SiteArithmetic& a, double m, uint64_t index) const override {
    return a.scaled_log2(m, index);
  }
  double shift_from_lse(const SiteArithmetic& a, double lse, uint64_t index) const override {
    return a.base2_shift_from_lse(lse, index);
  }
  double prob(const SiteArithmetic& a, double s, double shift, uint64_t index) const override {
    const double t = a.mul_at(Site::kExpArg, s, a.engine().scale_rounded, index);
    const double arg = a.fma_at(Site::kExpArg, t, a.engine().log2e, -shift, index + 2);
    return a.exp2_at(Site::kExp, arg, index);
  }
  const ExpArg& unfused() const override {
    static const ExpArg& separate = find_strategy<ExpArg>("exp2-scaled");
    return separate;
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Exp2ScaledFma)

}  // namespace simprec::attention
