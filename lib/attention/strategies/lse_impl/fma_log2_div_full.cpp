// fma-log2-div with the division as the H100's div.full.f32, which Triton emits for an fp32 `/`:
// x * rcp.approx(y) rounded to nearest even (emulation/device_math/sm90_mufu.hpp).
#include "lib/attention/site_arithmetic.hpp"

namespace simprec::attention {
namespace {

class FmaLog2DivFull final : public Lse {
 public:
  FmaLog2DivFull()
      : Lse({.name = "fma-log2-div-full",
             .doc = "fma-log2-div with the division by div.full.f32 (Triton's fp32 division on "
                    "the H100)",
             .draws = {{"lse", "the quotient: (row, 0, 0); the log: + 1; the fma: + 2"}}}) {}

  double lse(const SiteArithmetic& a, const LseInput& in) const override {
    if (!in.shift.valid) return -kInf;
    return a.div_full_at(Site::kLse, fma_log2_lse2(a, in), a.engine().log2e, a.idx(in.row, 0, 0));
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(FmaLog2DivFull)

}  // namespace simprec::attention
