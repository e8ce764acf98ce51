// Slot softmax_scale: the softmax scale as the kernel holds it (the given scale, or 1/sqrt(d)).
// One file per strategy in softmax_scale/.
#pragma once

#include "lib/attention/strategy.hpp"

namespace simprec::attention {

class SoftmaxScale : public Strategy {
 public:
  static constexpr SlotInfo kSlot{"softmax_scale",
                                  "the softmax scale as the kernel receives and rounds it", "exact",
                                  SlotScope::kAll};
  explicit SoftmaxScale(StrategyInfo info) : Strategy(kSlot, std::move(info)) {}
  virtual double scale(double given) const = 0;
};

}  // namespace simprec::attention
