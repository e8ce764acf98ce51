// FlexAttention compiled for symbolic lengths (torch.compile's dynamic shapes, after a
// recompilation for a new length): every block checks its bounds, so no block fuses.
#include "lib/attention/strategies/flex_compile.hpp"

namespace simprec::attention {
namespace {

class Dynamic final : public FlexCompile {
 public:
  Dynamic()
      : FlexCompile(
            {.name = "dynamic", .doc = "compiled for symbolic lengths: every block unfused"}) {}
  bool unfused(const AttentionConfig&, const BlockGrid&, int64_t, int64_t) const override {
    return true;
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Dynamic)

}  // namespace simprec::attention
