// PyTorch's flash backend (flash_api.cpp, mha_bwd): each query head's dK and dV written in the
// output format (dk_expanded), then at::sum over the group, which accumulates 16-bit formats in
// fp32.
#include "lib/attention/strategies/kv_group_sum.hpp"

namespace simprec::attention {
namespace {

class CastThenSum final : public KvGroupSum {
 public:
  CastThenSum()
      : KvGroupSum({.name = "cast-then-sum",
                    .doc = "each query head's dK and dV cast at grad_out, then summed over the "
                           "group in increasing order (in fp32 for formats of 16 bits or fewer, "
                           "else in grad_out's format) and the sum cast at grad_out (PyTorch's "
                           "flash backend)"}) {}
  bool chained() const override { return false; }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(CastThenSum)

}  // namespace simprec::attention
