// numpy's own float32 np.exp and np.log (its AVX2/FMA3 and AVX-512F code, one algorithm:
// emulation/device_math/numpy_float32.hpp), and the C library's exp2f, log2f and fp64 exp, exp2,
// log, log2 (c_library_math.hpp), which numpy calls for np.exp2, np.log2 and float64 arrays on
// x86-64 CPUs without AVX512_SKX (with it, PyPI's numpy takes them from Intel's SVML, which is
// not modelled). Division and 1 / x are IEEE's, correctly rounded. The C library's values are
// the running one's, so results record its version.
#include "emulation/device_math/numpy_float32.hpp"
#include "lib/attention/strategies/device_math/c_library_math.hpp"

namespace simprec::attention {
namespace {

class Numpy final : public CLibraryMath {
 public:
  Numpy()
      : CLibraryMath({.name = "numpy",
                      .doc = "numpy's float32 np.exp and np.log (its SIMD code: equal to numpy "
                             "2.5.2 on every 4th block of 2^16 float32s), np.exp2, np.log2 and "
                             "float64 functions "
                             "the C library's as installed"}) {}

  std::optional<float> exp(float x) const override { return device_math::numpy_expf(x); }
  std::optional<float> log(float x) const override { return device_math::numpy_logf(x); }
  std::optional<float> fast_log(float x) const override { return device_math::numpy_logf(x); }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Numpy)

}  // namespace simprec::attention
