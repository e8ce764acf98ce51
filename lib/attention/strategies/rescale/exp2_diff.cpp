// FlashAttention-2's softmax_rescale_o (csrc/flash_attn/src/softmax.h): scores_scale =
// exp2f((scores_max_prev - scores_max_cur) * softmax_scale_log2), the raw maxima's difference and
// its product with c each rounded at o_rescale, then exp2.
#include "lib/attention/site_arithmetic.hpp"

namespace simprec::attention {
namespace {

class Exp2Diff final : public Rescale {
 public:
  Exp2Diff()
      : Rescale({.name = "exp2-diff",
                 .doc = "alpha = exp2(round(round(m_old - m_new) c)), the raw maxima's "
                        "difference times c, each step at o_rescale (FlashAttention-2's "
                        "softmax_rescale_o)",
                 .needs = {{.key = "exp_impl", .tag = "exp2"}},
                 .draws = {{"o_rescale",
                            "the difference: the argument index; its product: the second "
                            "argument index; alpha: the exp index"}}}) {}

  double alpha(const SiteArithmetic& a, const RescaleInput& in,
               const RescaleDraws& draws) const override {
    const double diff = a.add_at(Site::kORescale, in.m_old, -in.m_new, draws.argument);
    const double arg =
        a.mul_at(Site::kORescale, diff, a.engine().scale_log2, draws.argument_product);
    return a.exp2_at(Site::kORescale, arg, draws.exp);
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Exp2Diff)

}  // namespace simprec::attention
