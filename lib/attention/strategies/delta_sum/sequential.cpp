// D = rowsum(dO o O) as one dot product over the row in column order (d's accumulation model).
#include "lib/attention/strategies/delta_sum.hpp"

namespace simprec::attention {
namespace {

class Sequential final : public DeltaSum {
 public:
  Sequential()
      : DeltaSum({.name = "sequential",
                  .doc = "one dot product over the row in column order (d's accumulation model)",
                  .draws = {{"d", "(row, 0, 0) and on, one per term"}}}) {}
  std::optional<LaneReduction> layout(int64_t, int64_t) const override { return std::nullopt; }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Sequential)

}  // namespace simprec::attention
