// The machine's C library as a CPU kernel calls it (c_library_math.hpp): the installed libm's
// values, whatever its version, which results record (device_math_library).
#include "lib/attention/strategies/device_math/c_library_math.hpp"

namespace simprec::attention {
namespace {

class Glibc final : public CLibraryMath {
 public:
  Glibc()
      : CLibraryMath({.name = "glibc",
                      .doc = "the C library's expf, exp2f, logf, log2f (fp32; logf for __logf) "
                             "and exp, exp2, log, log2 (fp64) as installed on this machine: "
                             "results record its version"}) {}
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Glibc)

}  // namespace simprec::attention
