// The softmax scale rounded to fp32 once, to nearest even: a kernel that receives the scale as a
// float argument or computes it in float (FlashAttention-2's `float softmax_scale`, a Triton
// kernel's fp32 `sm_scale`). Every use of the scale (the exponent's constants, the LSE, the
// gradients' scaling) then sees the rounded value.
#include "emulation/round.hpp"
#include "lib/attention/strategies/softmax_scale.hpp"

namespace simprec::attention {
namespace {

class Fp32 final : public SoftmaxScale {
 public:
  Fp32()
      : SoftmaxScale({.name = "fp32",
                      .doc = "the scale rounded to fp32 (nearest even) before any use: a kernel "
                             "that takes or computes it as a float"}) {}
  double scale(double given) const override {
    return RoundingContext(formats::fp32).round_value(given);
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Fp32)

}  // namespace simprec::attention
