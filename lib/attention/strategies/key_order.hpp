// Slot key_order: the forward pass's order over a query block's key blocks. Both strategies are
// in key_order.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "lib/attention/strategy.hpp"

namespace simprec::attention {

class KeyOrder : public Strategy {
 public:
  static constexpr SlotInfo kSlot{"key_order",
                                  "the forward pass's order over a query block's key blocks",
                                  "ascending", SlotScope::kFlash};
  explicit KeyOrder(StrategyInfo info) : Strategy(kSlot, std::move(info)) {}
  // Puts the block mask's order of key tiles into this one.
  virtual void order(std::vector<int64_t>& tiles) const = 0;
};

}  // namespace simprec::attention
