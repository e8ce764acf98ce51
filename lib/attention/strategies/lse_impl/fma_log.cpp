// FlashAttention-2's LSE (softmax.h, normalize_softmax_lse): fma(m, scale, __logf(l)), m scale
// exact inside the fma, plus the rounded log, one rounding.
#include "lib/attention/site_arithmetic.hpp"

namespace simprec::attention {
namespace {

class FmaLog final : public Lse {
 public:
  FmaLog()
      : Lse({.name = "fma-log",
             .doc = "fma(m, scale, round(log l)): FlashAttention-2's fma(m, scale, __logf(l))",
             .draws = {{"lse", "the fma: (row, 0, 0); the log: + 1"}}}) {}

  double lse(const SiteArithmetic& a, const LseInput& in) const override {
    const uint64_t index = a.idx(in.row, 0, 0);
    const double log_l = a.log_at(Site::kLse, in.l, index + 1);
    return a.fma_at(Site::kLse, in.m, a.engine().scale, log_l, index);
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(FmaLog)

}  // namespace simprec::attention
