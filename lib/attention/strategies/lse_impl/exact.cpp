// LSE = round(m scale + log l) in one rounding at lse, log l in double (or, with a device_math
// that supplies __logf, the device's __logf, rounded at lse where it has no value).
#include "lib/attention/site_arithmetic.hpp"

namespace simprec::attention {
namespace {

class Exact final : public Lse {
 public:
  Exact()
      : Lse({.name = "exact",
             .doc = "round(m scale + log l), log in double (the device's __logf where "
                    "device_math supplies one)",
             .draws = {{"lse", "(row, 0, 0); the device's log: + 1"}}}) {}

  double lse(const SiteArithmetic& a, const LseInput& in) const override {
    return exact_lse(a, in);
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Exact)

}  // namespace simprec::attention
