// The memory-efficient kernel's LSE (kernel_forward.h): mi / kLog2e + logf(s_prime), the base-2
// shift turned back into natural units, plus logf(l).
#include "lib/attention/site_arithmetic.hpp"

namespace simprec::attention {
namespace {

class ShiftDivLog2e final : public Lse {
 public:
  ShiftDivLog2e()
      : Lse({.name = "shift-div-log2e",
             .doc = "round(round(shift / log2e') + round(logf l)), the exp2 shift back in "
                    "natural units (the memory-efficient kernel's mi / kLog2e + logf(s_prime)); "
                    "exact where the shift is not in base 2",
             .draws = {{"lse", "the sum: (row, 0, 0); the quotient: + 1; the log: + 2"}}}) {}

  double lse(const SiteArithmetic& a, const LseInput& in) const override {
    if (!in.shift.valid || !in.shift.impl->base2()) return exact_lse(a, in);
    const uint64_t index = a.idx(in.row, 0, 0);
    const double natural = a.divf_at(Site::kLse, in.shift.offset, a.engine().log2e, index + 1);
    return a.add_at(Site::kLse, natural, a.logf_at(Site::kLse, in.l, index + 2), index);
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(ShiftDivLog2e)

}  // namespace simprec::attention
