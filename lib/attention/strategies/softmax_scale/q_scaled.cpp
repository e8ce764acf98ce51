// Q multiplied by the softmax scale before the scores, as kernels do that fold the scale into Q
// (the Triton tutorial's `q = q * qk_scale`, a numpy kernel's `q.astype(float32) * scale`): each
// element of Q (as rounded at the input site) times the scale rounded to fp32, the product
// rounded to fp32 to nearest even, and for q-scaled-input cast back to the input format (nearest
// even) before the products; the scores then use scale 1. Forward only: the backward's dQ would
// need the scale again, and kernels that fold it into Q differ in where they apply it.
#include <stdexcept>
#include <string>

#include "emulation/round.hpp"
#include "lib/attention/strategies/softmax_scale.hpp"

namespace simprec::attention {
namespace {

class QScaled : public SoftmaxScale {
 public:
  QScaled(StrategyInfo info, bool to_input) : SoftmaxScale(std::move(info)), to_input_(to_input) {}
  double scale(double) const override { return 1.0; }
  bool prescales_q() const override { return true; }
  void prescale_q(std::vector<double>& q, double given, const SiteSpec& input) const override {
    // The double product of an element (at most 24 significant bits) and the fp32 scale (24) is
    // exact, so one rounding to fp32 gives the correctly rounded fp32 product.
    if (input.format.precision() > 24) {
      throw std::invalid_argument(std::string("softmax_scale=") + std::string(name()) +
                                  " models Q in a format of at most 24 bits (fp32 or narrower); "
                                  "the input site's format is " +
                                  input.format.name());
    }
    RoundingContext fp32(formats::fp32), cast(input.format);
    const double s = fp32.round_value(given);
    for (double& x : q) {
      x = fp32.round_value(x * s);
      if (to_input_) x = cast.round_value(x);
    }
  }

 private:
  bool to_input_;
};

class QScaledFp32 final : public QScaled {
 public:
  QScaledFp32()
      : QScaled({.name = "q-scaled-fp32",
                 .doc = "Q times the fp32 scale, rounded to fp32, before the scores (scale 1 "
                        "after; forward only)"},
                false) {}
};

class QScaledInput final : public QScaled {
 public:
  QScaledInput()
      : QScaled({.name = "q-scaled-input",
                 .doc = "Q times the fp32 scale, rounded to fp32 then to the input format, "
                        "before the scores (scale 1 after; forward only)"},
                true) {}
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(QScaledFp32, QScaledInput)

}  // namespace simprec::attention
