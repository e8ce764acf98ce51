// Slot rowsum_rescale: how alpha rescales the rowsum_lanes=4 partial sums of l when a key block
// arrives. Both strategies are in rowsum_rescale.cpp: the running row sum reads the choice.
#pragma once

#include "lib/attention/strategy.hpp"

namespace simprec::attention {

class RowsumRescale : public Strategy {
 public:
  static constexpr SlotInfo kSlot{"rowsum_rescale",
                                  "how alpha rescales the rowsum_lanes=4 partial sums of l", "mul",
                                  SlotScope::kFlash};
  explicit RowsumRescale(StrategyInfo info) : Strategy(kSlot, std::move(info)) {}
  // Tag "fma": each lane's first term of the block enters as fma(l, alpha, p), one rounding.
  bool fuses_first_term() const { return has_tag("fma"); }
};

}  // namespace simprec::attention
