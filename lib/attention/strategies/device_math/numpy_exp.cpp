// numpy's float32 np.exp alone (emulation/device_math/numpy_float32.hpp); every other function
// correctly rounded at its site. A numpy kernel that calls np.exp on float32 arrays but takes its
// logarithm in float64 (np.log of the doubles, rounded to float32) computes this; `numpy` would
// give it numpy's float32 np.log as well.
#include "emulation/device_math/numpy_float32.hpp"
#include "lib/attention/strategies/device_math.hpp"

namespace simprec::attention {
namespace {

class NumpyExp final : public DeviceMath {
 public:
  NumpyExp()
      : DeviceMath({.name = "numpy-exp",
                    .doc = "numpy's float32 np.exp; every other function correctly rounded at "
                           "its site (a float64 np.log rounded to float32, say)"}) {}

  std::optional<float> exp(float x) const override { return device_math::numpy_expf(x); }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(NumpyExp)

}  // namespace simprec::attention
