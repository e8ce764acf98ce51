// Slot delta_sum: the order in which a flash backward kernel adds the products of
// D = rowsum(dO o O), each addition rounded at d: the threads of a row, the columns each holds,
// and the butterfly that combines them (lane_reduction.hpp). One file per strategy in
// delta_sum/.
#pragma once

#include <cstdint>
#include <optional>

#include "lib/attention/lane_reduction.hpp"
#include "lib/attention/strategy.hpp"

namespace simprec::attention {

class DeltaSum : public Strategy {
 public:
  static constexpr SlotInfo kSlot{"delta_sum", "the order of D = rowsum(dO o O)'s additions",
                                  "sequential", SlotScope::kFlash, true};
  explicit DeltaSum(StrategyInfo info) : Strategy(kSlot, std::move(info)) {}
  // The threads' layout for a row of dv columns with backward tiles of bwd_cols keys;
  // std::nullopt: one dot product over the row in column order.
  virtual std::optional<LaneReduction> layout(int64_t dv, int64_t bwd_cols) const = 0;
};

}  // namespace simprec::attention
