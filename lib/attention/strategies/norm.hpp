// Slot norm: flash attention's final normalisation of a row's O accumulator by its row sum l, at
// o_norm (with the descale of a quantised V). One file per strategy in norm/.
#pragma once

#include <cstdint>

#include "lib/attention/strategy.hpp"

namespace simprec::attention {

class SiteArithmetic;

class Norm : public Strategy {
 public:
  static constexpr SlotInfo kSlot{"norm", "flash attention's final normalisation of O by l",
                                  "reciprocal", SlotScope::kFlash};
  explicit Norm(StrategyInfo info) : Strategy(kSlot, std::move(info)) {}

  // out[c] for c < dv: row `row`'s acc[c] normalised by l.
  virtual void normalise(const SiteArithmetic& a, const double* acc, double l, double* out,
                         int64_t row, int64_t dv) const = 0;
};

}  // namespace simprec::attention
