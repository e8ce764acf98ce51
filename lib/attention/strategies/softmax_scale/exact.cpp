// The softmax scale as given (in double), or 1/sqrt(d) in double.
#include "lib/attention/strategies/softmax_scale.hpp"

namespace simprec::attention {
namespace {

class Exact final : public SoftmaxScale {
 public:
  Exact()
      : SoftmaxScale(
            {.name = "exact", .doc = "the scale as given (default 1/sqrt(d)), in double"}) {}
  double scale(double given) const override { return given; }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Exact)

}  // namespace simprec::attention
