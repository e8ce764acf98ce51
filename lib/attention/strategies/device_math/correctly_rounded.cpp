// No device function: every exp2, exp and log correctly rounded at its site.
#include "lib/attention/strategies/device_math.hpp"

namespace simprec::attention {
namespace {

class CorrectlyRounded final : public DeviceMath {
 public:
  CorrectlyRounded()
      : DeviceMath({.name = "correctly-rounded",
                    .doc = "exp2, exp and log correctly rounded at their sites"}) {}
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(CorrectlyRounded)

}  // namespace simprec::attention
