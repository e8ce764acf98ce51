// Split keys reaching a query block at the same step add their dQ higher key block first: the
// order the H100 gave most often against PyTorch's memory-efficient kernel (its thread blocks
// take a lock, in an order the hardware decides; docs/torch_kernels.md).
#include "lib/attention/strategies/query_order.hpp"

namespace simprec::attention {
namespace {

class Descending final : public SplitTies {
 public:
  Descending()
      : SplitTies({.name = "descending",
                   .doc = "the higher key block first: the order the H100 gave most often "
                          "(PyTorch's memory-efficient kernel)"}) {}
  void order(std::vector<SplitStep>& steps, uint64_t, int64_t) const override {
    sort_split_steps(steps, true);
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Descending)

}  // namespace simprec::attention
