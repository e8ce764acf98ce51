// Slot grad_scale: where the softmax scale enters the gradients dQ and dK. One file per strategy
// in grad_scale/.
#pragma once

#include <cstdint>

#include "lib/attention/site.hpp"
#include "lib/attention/strategy.hpp"

namespace simprec::attention {

class SiteArithmetic;

class GradScale : public Strategy {
 public:
  static constexpr SlotInfo kSlot{"grad_scale", "where the softmax scale enters dQ and dK", "exact",
                                  SlotScope::kAll, true};
  explicit GradScale(StrategyInfo info) : Strategy(kSlot, std::move(info)) {}

  // dS after its product P o (dP - D), before its cast at ds_cast.
  virtual double ds(const SiteArithmetic& a, double ds, uint64_t index) const { return ds; }
  // dQ or dK from its accumulator `value` (at site `acc`), cast into the output format.
  virtual double grad(const SiteArithmetic& a, Site acc, double value, uint64_t index) const = 0;
};

}  // namespace simprec::attention
