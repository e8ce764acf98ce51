// FlexAttention's delta kernel compiled by inductor as a persistent reduction (XBLOCK = 8 rows
// over 2 warps: 8 bf16 per thread): the row padded to a power of two P, P/8 threads per row,
// thread t sums columns [8t, 8t + 8) in order from zero (the padding's threads hold zeros), then a
// butterfly with offsets P/16, ..., 1.
#include "lib/attention/strategies/delta_sum.hpp"

namespace simprec::attention {
namespace {

class Triton final : public DeltaSum {
 public:
  Triton()
      : DeltaSum({.name = "triton",
                  .doc = "a Triton persistent reduction: the row padded to a power of two P, "
                         "8 columns per thread, butterfly P/16, ..., 1 (FlexAttention's delta "
                         "kernel)",
                  .draws = {{"d",
                             "thread t's sum: (row, t, 0) and on; butterfly step k: (row, t, "
                             "1 + k)"}}}) {}
  std::optional<LaneReduction> layout(int64_t dv, int64_t) const override {
    int64_t padded = 8;
    while (padded < dv) padded *= 2;
    const int threads = static_cast<int>(padded / 8);
    return LaneReduction(threads, 8, LaneReduction::offsets_down(threads), true);
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Triton)

}  // namespace simprec::attention
