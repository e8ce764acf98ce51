// The memory-efficient kernel's computeDelta (kernel_backward.h): Bc/32 threads per row (its 128
// threads per 64 queries at 64x64 tiles), chunks of 8 columns (1 where dv is not a multiple of 8)
// dealt out in turn; the butterfly's offsets are 1, ..., T/2.
#include <algorithm>

#include "lib/attention/strategies/delta_sum.hpp"

namespace simprec::attention {
namespace {

class MemEff final : public DeltaSum {
 public:
  MemEff()
      : DeltaSum({.name = "mem-eff",
                  .doc = "the memory-efficient kernel's computeDelta: Bc/32 threads per row, 8 "
                         "columns per chunk (1 when dv % 8 != 0), butterfly 1, ..., T/2",
                  .draws = {{"d",
                             "thread t's sum: (row, t, 0) and on; butterfly step k: (row, t, "
                             "1 + k)"}}}) {}
  std::optional<LaneReduction> layout(int64_t dv, int64_t bwd_cols) const override {
    const int threads = static_cast<int>(std::max<int64_t>(1, bwd_cols / 32));
    return LaneReduction(threads, dv % 8 != 0 ? 1 : 8, LaneReduction::offsets_up(threads), true);
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(MemEff)

}  // namespace simprec::attention
