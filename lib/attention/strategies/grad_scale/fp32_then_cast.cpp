// FlashAttention-2's epilogues and convert_dQ: acc * scale rounded in the accumulator's format
// (dq_acc, dk_acc), then cast at grad_out.
#include "lib/attention/site_arithmetic.hpp"

namespace simprec::attention {
namespace {

class Fp32ThenCast final : public GradScale {
 public:
  Fp32ThenCast()
      : GradScale({.name = "fp32-then-cast",
                   .doc = "acc scale rounded at the accumulator's site (dq_acc, dk_acc), then "
                          "cast at grad_out (FlashAttention-2's epilogue)",
                   .draws = {{"dq_acc, dk_acc, grad_out", "(row, column, 0 for dQ, 1 for dK)"}}}) {}

  double grad(const SiteArithmetic& a, Site acc, double value, uint64_t index) const override {
    return a.at(Site::kGradOut, a.mul_at(acc, value, a.engine().grad_scale, index), index);
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Fp32ThenCast)

}  // namespace simprec::attention
