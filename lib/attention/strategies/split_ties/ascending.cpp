// Split keys reaching a query block at the same step add their dQ lower key block first.
#include "lib/attention/strategies/query_order.hpp"

namespace simprec::attention {
namespace {

class Ascending final : public SplitTies {
 public:
  Ascending() : SplitTies({.name = "ascending", .doc = "the lower key block first"}) {}
  void order(std::vector<SplitStep>& steps, uint64_t, int64_t) const override {
    sort_split_steps(steps, false);
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Ascending)

}  // namespace simprec::attention
