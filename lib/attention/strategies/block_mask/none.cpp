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

  std::vector<int64_t> key_tiles(const BlockGrid& g, int64_t i0, int64_t i1) const override {
    const int64_t tiles = g.key_tiles();
    std::vector<int64_t> order;
    if (g.masked_beyond_causal()) {  // the tiles with a key some row of [i0, i1) sees
      for (int64_t t = 0; t < tiles; ++t) {
        if (g.visibility->any(i0, i1, t * g.cols, std::min(g.nk, (t + 1) * g.cols)))
          order.push_back(t);
      }
      return order;
    }
    // Causal: a tile past the diagonal is masked for every row.
    const int64_t last = g.causal ? std::min(tiles - 1, (i1 - 1) / g.cols) : tiles - 1;
    for (int64_t t = 0; t <= last; ++t) order.push_back(t);
    return order;
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(None)

}  // namespace simprec::attention
