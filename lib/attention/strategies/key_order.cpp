// The forward pass's two orders over a query block's key blocks (key_order.hpp).
#include <algorithm>

#include "lib/attention/strategies/key_order.hpp"

namespace simprec::attention {
namespace {

class Ascending final : public KeyOrder {
 public:
  Ascending() : KeyOrder({.name = "ascending", .doc = "the block mask's order"}) {}
  void order(std::vector<int64_t>&) const override {}
};

class Descending final : public KeyOrder {
 public:
  Descending()
      : KeyOrder({.name = "descending",
                  .doc = "the block mask's order reversed, last key block first "
                         "(FlashAttention-2's compute_attn_1rowblock)"}) {}
  void order(std::vector<int64_t>& tiles) const override {
    std::reverse(tiles.begin(), tiles.end());
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Ascending, Descending)

}  // namespace simprec::attention
