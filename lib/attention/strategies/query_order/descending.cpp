// FlashAttention-2's compute_dq_dk_dv_1colblock: each key block in turn takes its query blocks
// from the last to the first; dQ of a query block sees the key blocks in increasing order (the
// kernel's order of its atomic adds is left to the hardware).
#include <algorithm>

#include "lib/attention/strategies/query_order.hpp"

namespace simprec::attention {
namespace {

class Descending final : public QueryOrder {
 public:
  Descending()
      : QueryOrder({.name = "descending",
                    .doc = "each key block in turn takes its query blocks from the last to the "
                           "first (FlashAttention-2's compute_dq_dk_dv_1colblock)"}) {}
  std::vector<std::pair<int64_t, int64_t>> pairs(const SiteArithmetic&,
                                                 const BlockGrid& g) const override {
    std::vector<std::pair<int64_t, int64_t>> pairs;
    for (int64_t tile = 0; tile < g.key_tiles(); ++tile) {
      std::vector<int64_t> visible = g.visible_query_tiles(tile);
      std::reverse(visible.begin(), visible.end());
      for (const int64_t qtile : visible) pairs.emplace_back(tile, qtile);
    }
    return pairs;
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Descending)

}  // namespace simprec::attention
