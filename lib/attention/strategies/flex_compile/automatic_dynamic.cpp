// torch.compile's automatic dynamic shapes, as FlexAttention meets them: a graph's first call is
// compiled for its lengths (flex_compile=static), and once a length has changed the graph is
// recompiled for symbolic lengths (dynamic), which every later call of other lengths runs. The
// call's history is the parameter compiled_for: the (Sq, Sk, d) the graph was first compiled for
// (auto: this call's own). A causal call passes a block mask, a graph of its own.
#include "lib/attention/config.hpp"
#include "lib/attention/tensors.hpp"

namespace simprec::attention {
namespace {

class AutomaticDynamic final : public FlexCompile {
 public:
  AutomaticDynamic()
      : FlexCompile({.name = "automatic-dynamic",
                     .doc = "torch.compile's policy: static for the lengths the graph was first "
                            "compiled for (compiled_for), dynamic for any other"}) {}
  bool unfused(const AttentionConfig& c, const BlockGrid& g, int64_t i0,
               int64_t j0) const override {
    const bool first =
        c.compiled_for == std::array<int64_t, 3>{} ||
        (c.compiled_for[0] == g.nq && c.compiled_for[1] == g.nk && c.compiled_for[2] == g.d);
    static const FlexCompile& first_call = find_strategy<FlexCompile>("static");
    static const FlexCompile& recompiled = find_strategy<FlexCompile>("dynamic");
    return (first ? first_call : recompiled).unfused(c, g, i0, j0);
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(AutomaticDynamic)

}  // namespace simprec::attention
