// A Triton kernel's LSE (m * c + log2(l)) / log2(e), the product contracted into an fma
// (examples/python/triton_flash_forward.py); the division correctly rounded at lse, or the
// device's where device_math has one.
#include "lib/attention/site_arithmetic.hpp"

namespace simprec::attention {
namespace {

class FmaLog2Div final : public Lse {
 public:
  FmaLog2Div()
      : Lse({.name = "fma-log2-div",
             .doc = "round(round(fma(m, c, round(log2 l))) / log2e'): a Triton kernel's "
                    "(m c + log2 l) / log2 e with the product contracted",
             .draws = {{"lse", "the quotient: (row, 0, 0); the log: + 1; the fma: + 2"}}}) {}

  double lse(const SiteArithmetic& a, const LseInput& in) const override {
    if (!in.shift.valid) return -kInf;
    return a.divf_at(Site::kLse, fma_log2_lse2(a, in), a.engine().log2e, a.idx(in.row, 0, 0));
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(FmaLog2Div)

}  // namespace simprec::attention
