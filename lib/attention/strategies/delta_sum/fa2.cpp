// FlashAttention-2's dot_do_o (flash_bwd_preprocess_kernel.h): T = G/8 threads per row, G = 64
// when dv is a multiple of 64, else 32 (the backward traits' kBlockKSmem); thread t sums, from
// zero in column order, the chunks of 8 columns c with (c / 8) % T == t; then a butterfly
// all-reduce with offsets T/2, ..., 1.
#include "lib/attention/strategies/delta_sum.hpp"

namespace simprec::attention {
namespace {

class Fa2 final : public DeltaSum {
 public:
  Fa2()
      : DeltaSum({.name = "fa2",
                  .doc = "FlashAttention-2's dot_do_o: G/8 threads per row (G = 64 for dv a "
                         "multiple of 64, else 32), 8 columns per chunk, butterfly T/2, ..., 1",
                  .draws = {{"d",
                             "thread t's sum: (row, t, 0) and on; butterfly step k: (row, t, "
                             "1 + k)"}}}) {}
  std::optional<LaneReduction> layout(int64_t dv, int64_t) const override {
    const int threads = (dv % 64 == 0 ? 64 : 32) / 8;
    return LaneReduction(threads, 8, LaneReduction::offsets_down(threads), true);
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Fa2)

}  // namespace simprec::attention
