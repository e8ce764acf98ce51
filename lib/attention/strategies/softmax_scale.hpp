// Slot softmax_scale: the softmax scale as the kernel holds it (the given scale, or 1/sqrt(d)).
// One file per strategy in softmax_scale/.
#pragma once

#include <vector>

#include "lib/attention/site.hpp"
#include "lib/attention/strategy.hpp"

namespace simprec::attention {

class SoftmaxScale : public Strategy {
 public:
  static constexpr SlotInfo kSlot{"softmax_scale",
                                  "the softmax scale as the kernel receives and rounds it", "exact",
                                  SlotScope::kAll};
  explicit SoftmaxScale(StrategyInfo info) : Strategy(kSlot, std::move(info)) {}
  virtual double scale(double given) const = 0;
  // Whether the kernel multiplies Q by the scale before the scores (the scores then use scale 1).
  virtual bool prescales_q() const { return false; }
  // Q, rounded at the input site, multiplied by the scale as such a kernel does it.
  virtual void prescale_q(std::vector<double>& /*q*/, double /*given*/,
                          const SiteSpec& /*input*/) const {}
};

}  // namespace simprec::attention
