// Triton's FlexAttention (and the memory-efficient kernel): the score times the softmax scale,
// then times log2 e, each rounded (u(x) = round(round(x scale') log2e'), both constants rounded at
// exp_arg), minus the max's own u(m), then exp2.
#include "lib/attention/site_arithmetic.hpp"

namespace simprec::attention {
namespace {

class Exp2Scaled final : public ExpArg {
 public:
  Exp2Scaled()
      : ExpArg({.name = "exp2-scaled",
                .doc = "P = exp2(round(u(S) - u(m))), u(x) = round(round(x scale') log2e') with "
                       "both constants rounded at exp_arg (Triton's FlexAttention: the score "
                       "times SM_SCALE, then times RCP_LN2)",
                .tags = {"exp2", "scaled"},
                .draws = {{"exp_arg",
                           "u(m): the row's shift index and + 1; u(S): the score's index and + 1; "
                           "the argument: the score's index + 2"},
                          {"exp", "P: the score's index"}}}) {}

  double shift_from_max(const SiteArithmetic& a, double m, uint64_t index) const override {
    return a.scaled_log2(m, index);
  }
  double shift_from_lse(const SiteArithmetic& a, double lse, uint64_t index) const override {
    return a.base2_shift_from_lse(lse, index);
  }
  double prob(const SiteArithmetic& a, double s, double shift, uint64_t index) const override {
    const double arg = a.add_at(Site::kExpArg, a.scaled_log2(s, index), -shift, index + 2);
    return a.exp2_at(Site::kExp, arg, index);
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Exp2Scaled)

}  // namespace simprec::attention
