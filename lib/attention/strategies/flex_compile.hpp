// Slot flex_compile: the key blocks where the compiler does not fuse the exponent argument's last
// product and subtraction (FlexAttention's Triton kernels: a mask's select between them leaves no
// product to fuse); there exp_impl's unfused strategy applies. One file per strategy in
// flex_compile/.
#pragma once

#include <cstdint>

#include "lib/attention/strategies/block_mask.hpp"
#include "lib/attention/strategy.hpp"

namespace simprec::attention {

struct AttentionConfig;

class FlexCompile : public Strategy {
 public:
  static constexpr SlotInfo kSlot{"flex_compile",
                                  "the key blocks where the exponent argument is not fused "
                                  "(FlexAttention's compilation)",
                                  "none", SlotScope::kFlash};
  explicit FlexCompile(StrategyInfo info) : Strategy(kSlot, std::move(info)) {}
  // Whether the tile of query rows from i0 and keys from j0 forms its argument unfused, in the
  // forward and the backward pass alike.
  virtual bool unfused(const AttentionConfig& c, const BlockGrid& g, int64_t i0,
                       int64_t j0) const = 0;
};

}  // namespace simprec::attention
