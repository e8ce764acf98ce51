// No block mask: every key block in increasing order, up to the diagonal when causal.
#include "lib/attention/strategies/block_mask.hpp"

namespace simprec::attention {
namespace {

class None final : public BlockMask {
 public:
  None()
      : BlockMask({.name = "none",
                   .doc = "the key blocks in increasing order, up to the diagonal when causal"}) {}

  std::vector<int64_t> key_tiles(const BlockGrid& g, int64_t i0, int64_t i1) const override {
    const int64_t tiles = g.key_tiles();
    // Causal: a tile past the diagonal is masked for every row.
    const int64_t last = g.causal ? std::min(tiles - 1, (i1 - 1) / g.cols) : tiles - 1;
    std::vector<int64_t> order;
    for (int64_t t = 0; t <= last; ++t) order.push_back(t);
    return order;
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(None)

}  // namespace simprec::attention
