// The two ways alpha reaches the rowsum_lanes=4 partial sums of l (rowsum_rescale.hpp).
#include "lib/attention/strategies/rowsum_rescale.hpp"

namespace simprec::attention {
namespace {

class Mul final : public RowsumRescale {
 public:
  Mul()
      : RowsumRescale({.name = "mul",
                       .doc = "l alpha rounded at o_rescale, then the block's terms added at "
                              "rowsum"}) {}
};

class Fma final : public RowsumRescale {
 public:
  Fma()
      : RowsumRescale({.name = "fma",
                       .doc = "fma(l, alpha, first term) rounded once at rowsum, then the "
                              "rest: FlashAttention-2's row_sum *= scores_scale contracted by "
                              "nvcc into the next row_sum + p",
                       .needs = {{.key = "rowsum_lanes", .values = {"4"}}},
                       .tags = {"fma"},
                       .draws = {{"rowsum", "each lane's fma: the rescale of l's index"}}}) {}
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Mul, Fma)

}  // namespace simprec::attention
