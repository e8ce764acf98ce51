// The LSE of a natural-exp kernel that keeps each row's max as its rounded, scaled form
// m = fp32(max S scale) (exp_impl=natural's shift): fp32(m + logf(l)), the log rounded at lse (the
// device's logf where device_math has one), then the sum.
#include "lib/attention/site_arithmetic.hpp"

namespace simprec::attention {
namespace {

class ShiftLog final : public Lse {
 public:
  ShiftLog()
      : Lse({.name = "shift-log",
             .doc = "round(shift + round(log l)) with the natural exp's shift round(m scale): a "
                    "kernel's fp32(m + logf(l)) with m = fp32(max S scale)",
             .needs = {{.key = "exp_impl", .values = {"natural"}}},
             .draws = {{"lse", "the sum: (row, 0, 0); the log: + 1"}}}) {}

  double lse(const SiteArithmetic& a, const LseInput& in) const override {
    if (!in.shift.valid) return -kInf;
    const uint64_t index = a.idx(in.row, 0, 0);
    const double log_l = a.logf_at(Site::kLse, in.l, index + 1);
    return a.add_at(Site::kLse, in.shift.offset, log_l, index);
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(ShiftLog)

}  // namespace simprec::attention
