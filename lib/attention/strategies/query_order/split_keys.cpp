// The memory-efficient kernel's backward pass with split keys (kernel_backward.h): the thread
// block of key block s starts at query block s (mod the number of query blocks) and wraps around,
// the key blocks running side by side, so dQ of a query block sees them in the order they reach it
// (key block s at step (i - s) mod n; those of one step in split_ties' order). Causal masks start
// every key block at its first visible query block. Where the dispatch's kernel selection runs one
// split (Dispatch::splits_keys), the key blocks run one after the other in increasing order.
#include "lib/attention/site_arithmetic.hpp"

namespace simprec::attention {
namespace {

class SplitKeys final : public QueryOrder {
 public:
  SplitKeys()
      : QueryOrder({
            .name = "split-keys",
            .doc = "key block s starts at query block s and wraps around; dQ adds the "
                   "key blocks in the order they reach it (split_ties for one step): "
                   "the memory-efficient kernel",
        }) {}

  std::vector<std::pair<int64_t, int64_t>> pairs(const SiteArithmetic& a,
                                                 const BlockGrid& g) const override {
    const AttentionConfig& c = a.engine().cfg;
    if (!c.dispatch->splits_keys(c, a.engine().shape)) {
      return find_strategy<QueryOrder>("ascending").pairs(a, g);
    }
    std::vector<SplitStep> steps;
    for (int64_t tile = 0; tile < g.key_tiles(); ++tile) {
      std::vector<int64_t> visible;
      if (!g.causal) {
        // Every query block from block `tile` on, wrapping around; those a mask hides from the
        // key block add nothing and are left out.
        for (int64_t at = 0; at < g.query_tiles(); ++at) {
          const int64_t qtile = (tile + at) % g.query_tiles();
          if (g.visible(qtile, tile)) visible.push_back(qtile);
        }
      } else {
        visible = g.visible_query_tiles(tile);
      }
      for (size_t at = 0; at < visible.size(); ++at) {
        steps.push_back({static_cast<int64_t>(at), tile, visible[at]});
      }
    }
    c.split_ties->order(steps, c.seed, a.problem());
    std::vector<std::pair<int64_t, int64_t>> pairs;
    pairs.reserve(steps.size());
    for (const SplitStep& x : steps) pairs.emplace_back(x.tile, x.qtile);
    return pairs;
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(SplitKeys)

}  // namespace simprec::attention
