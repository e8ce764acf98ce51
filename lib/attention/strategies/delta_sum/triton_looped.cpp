// The same reduction compiled by inductor as a looped one (XBLOCK = 1, one warp per row): 32
// threads, thread t sums columns [tC, tC + C) in order from zero, C = P/32 (at least 1) for the
// row padded to a power of two P, then a butterfly with offsets 16, ..., 1. Inductor chose it for
// one held-out shape (docs/torch_kernels.md); its choice is not modelled.
#include "lib/attention/strategies/delta_sum.hpp"

namespace simprec::attention {
namespace {

class TritonLooped final : public DeltaSum {
 public:
  TritonLooped()
      : DeltaSum({.name = "triton-looped",
                  .doc = "a Triton looped reduction: one warp per row, 32 threads of P/32 "
                         "consecutive columns, butterfly 16, ..., 1",
                  .draws = {{"d",
                             "thread t's sum: (row, t, 0) and on; butterfly step k: (row, t, "
                             "1 + k)"}}}) {}
  std::optional<LaneReduction> layout(int64_t dv, int64_t) const override {
    int64_t padded = 32;
    while (padded < dv) padded *= 2;
    return LaneReduction(32, static_cast<int>(padded / 32), LaneReduction::offsets_down(32), true);
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(TritonLooped)

}  // namespace simprec::attention
