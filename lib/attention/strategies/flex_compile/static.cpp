// FlexAttention compiled for the shape (torch.compile's first compilation of a graph): the blocks
// a mask's select reaches form the argument unfused, the block mask's partial sparse blocks, and,
// where a length is not a multiple of 128 (Triton's IS_DIVISIBLE off, so every block checks its
// bounds with a select), every block of both passes (measured on an H100, docs/torch_kernels.md).
#include "lib/attention/config.hpp"

namespace simprec::attention {
namespace {

class Static final : public FlexCompile {
 public:
  Static()
      : FlexCompile({.name = "static",
                     .doc = "compiled for the shape: unfused in the block mask's partial sparse "
                            "blocks and, for a length not a multiple of 128, everywhere"}) {}
  bool unfused(const AttentionConfig& c, const BlockGrid& g, int64_t i0,
               int64_t j0) const override {
    if ((c.causal || g.masked_beyond_causal()) && c.block_mask->partial(g, i0, j0)) return true;
    return g.nq % kSparseBlock != 0 || g.nk % kSparseBlock != 0;
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(Static)

}  // namespace simprec::attention
