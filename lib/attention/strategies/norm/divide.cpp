// O / l rounded once at o_norm (PyTorch's oc.div_(l) in paper A's reference, SageAttention's
// acc / l_i); the device's division where device_math has one.
#include "lib/attention/site_arithmetic.hpp"

namespace simprec::attention {
namespace {

class Divide final : public Norm {
 public:
  Divide()
      : Norm({.name = "divide",
              .doc = "O / l rounded once at o_norm",
              .draws = {{"o_norm", "O: (row, column, 1)"}}}) {}

  void normalise(const SiteArithmetic& a, const double* acc, double l, double* out, int64_t row,
                 int64_t dv) const override {
    for (int64_t c = 0; c < dv; ++c) {
      out[c] =
          a.v_descaled(a.divf_at(Site::kONorm, acc[c], l, a.idx(row, c, 1)), c, a.idx(row, c, 3));
    }
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Divide)

}  // namespace simprec::attention
