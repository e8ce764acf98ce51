// Slot kv_group_sum: how grouped-query attention's gradients of a key/value head come from its
// group of query heads (lib/attention/kv_heads.hpp). One file per strategy in kv_group_sum/.
#pragma once

#include "lib/attention/strategy.hpp"

namespace simprec::attention {

class KvGroupSum : public Strategy {
 public:
  static constexpr SlotInfo kSlot{"kv_group_sum",
                                  "how dK and dV of a key/value head come from its group of "
                                  "query heads (grouped-query attention)",
                                  "cast-then-sum", SlotScope::kAll, /*backward_only=*/true};
  explicit KvGroupSum(StrategyInfo info) : Strategy(kSlot, std::move(info)) {}
  // Whether each head's dK and dV accumulators continue from the previous head's, the group's
  // heads in increasing order, and are scaled and cast once after the last (else each head's
  // gradients are cast, then summed).
  virtual bool chained() const = 0;
};

}  // namespace simprec::attention
