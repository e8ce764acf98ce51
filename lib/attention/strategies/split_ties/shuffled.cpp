// Split keys reaching a query block at the same step in an order drawn from the seed: what an
// arbitrary fixed order predicts, to compare the measured order against.
#include "emulation/random.hpp"
#include "lib/attention/strategies/query_order.hpp"

namespace simprec::attention {
namespace {

// The stream of the shuffle, apart from the sites' streams (site.cpp).
constexpr uint64_t kSplitTiesStream = 0x7135000000000000ULL;

class Shuffled final : public SplitTies {
 public:
  Shuffled()
      : SplitTies({.name = "shuffled",
                   .doc = "an order drawn from seed: what an arbitrary fixed order predicts",
                   .draws = {{"its own stream (seed, problem)",
                              "one draw per swap of a Fisher-Yates shuffle of each step's key "
                              "blocks"}}}) {}
  // Fisher-Yates over each step's run, from the counter-based stream: the same order on every
  // platform and thread count.
  void order(std::vector<SplitStep>& steps, uint64_t seed, int64_t p) const override {
    sort_split_steps(steps, false);
    const RandomStream stream{seed, kSplitTiesStream + static_cast<uint64_t>(p)};
    uint64_t draw = 0;
    for (size_t a = 0; a < steps.size();) {
      size_t b = a;
      while (b < steps.size() && steps[b].step == steps[a].step) ++b;
      for (size_t n = b - a; n > 1; --n) {
        std::swap(steps[a + n - 1], steps[a + random_bits(stream, draw++) % n]);
      }
      a = b;
    }
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Shuffled)

}  // namespace simprec::attention
