// FlexAttention's backward (the Triton template's dK/dV program loops over the group's query
// heads, off_g ascending, adding into the same accumulators, then scales and casts once).
#include "lib/attention/strategies/kv_group_sum.hpp"

namespace simprec::attention {
namespace {

class Chained final : public KvGroupSum {
 public:
  Chained()
      : KvGroupSum({.name = "chained",
                    .doc = "the dK and dV accumulators carried from each query head of the group "
                           "to the next (increasing order), scaled and cast once after the last "
                           "(FlexAttention); standard attention as cast-then-sum"}) {}
  bool chained() const override { return true; }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Chained)

}  // namespace simprec::attention
