// The key blocks one after the other, each taking its query blocks in increasing order: dQ of a
// query block sees the key blocks in increasing order.
#include "lib/attention/strategies/query_order.hpp"

namespace simprec::attention {
namespace {

class Ascending final : public QueryOrder {
 public:
  Ascending()
      : QueryOrder({.name = "ascending",
                    .doc = "each key block in turn takes its query blocks in increasing order"}) {}
  std::vector<std::pair<int64_t, int64_t>> pairs(const SiteArithmetic&,
                                                 const BlockGrid& g) const override {
    std::vector<std::pair<int64_t, int64_t>> pairs;
    for (int64_t tile = 0; tile < g.key_tiles(); ++tile) {
      for (const int64_t qtile : g.visible_query_tiles(tile)) pairs.emplace_back(tile, qtile);
    }
    return pairs;
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Ascending)

}  // namespace simprec::attention
