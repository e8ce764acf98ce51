// No block mask: every key block in increasing order, up to the diagonal when causal.
#include "lib/attention/strategies/block_mask.hpp"

namespace simprec::attention {
namespace {

class None final : public BlockMask {
 public:
  None()
      : BlockMask(
            {.name = "none",
             .doc =
                 "the key blocks in increasing order that some query of the block sees (up to the "
                 "diagonal when causal)"}) {}

  std::vector<int64_t> key_tiles(const BlockGrid& g, int64_t i0, int64_t /*i1*/) const override {
    // The tiles with a key some row of the block sees (causal: up to the diagonal).
    std::vector<int64_t> order;
    for (int64_t t = 0; t < g.key_tiles(); ++t) {
      if (g.visible(i0 / g.rows, t)) order.push_back(t);
    }
    return order;
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(None)

}  // namespace simprec::attention
