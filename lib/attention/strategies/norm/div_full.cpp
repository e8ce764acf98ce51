// Triton's fp32 division acc / l on the H100: div.full.f32, O * rcp.approx(l) rounded at o_norm,
// with the measured rcp.approx.ftz (emulation/device_math/sm90_mufu.hpp) where l is an fp32
// value, or the reciprocal device_math or the caller supplies.
#include <optional>

#include "emulation/device_math/sm90_mufu.hpp"
#include "lib/attention/site_arithmetic.hpp"

namespace simprec::attention {
namespace {

class DivFull final : public Norm {
 public:
  DivFull()
      : Norm({.name = "div-full",
              .doc = "the H100's div.full.f32: O rcp.approx(l) rounded at o_norm (Triton's "
                     "division)",
              .draws = {{"o_norm",
                         "1/l where l is not an fp32 value: (row, 0, 0); O: (row, "
                         "column, 1)"}}}) {}

  void normalise(const SiteArithmetic& a, const double* acc, double l, double* out, int64_t row,
                 int64_t dv) const override {
    const float f = static_cast<float>(l);
    const double inv = static_cast<double>(f) == l
                           ? a.device_rcp(f).value_or(device_math::sm90_rcp_approx_ftz(f))
                           : a.at(Site::kONorm, 1.0 / l, a.idx(row, 0, 0));
    for (int64_t c = 0; c < dv; ++c) {
      out[c] =
          a.mul_at(Site::kONorm, acc[c], a.v_descaled(inv, c, a.idx(row, c, 3)), a.idx(row, c, 1));
    }
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(DivFull)

}  // namespace simprec::attention
