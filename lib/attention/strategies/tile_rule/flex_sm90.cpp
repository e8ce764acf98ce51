// PyTorch 2.11's FlexAttention forward on sm_90 (read from the kernels torch.compile generated on
// an H100): by head dimension, d <= 64: 128x128, d <= 96: 64x64, otherwise 128x64; with fewer than
// 128 queries the flex-decoding kernel: max(16, Sq rounded up to a power of two) x 64 tiles, two
// warps side by side over each key block (rowsum_warps = 2). Its 264 key splits leave every key in
// the first split at the recorded shapes (the split's length rounds up to a multiple of the sparse
// block), so its combination step multiplies by exp2(0) = 1 and adds zeros: exact.
#include "lib/attention/config.hpp"

namespace simprec::attention {
namespace {

class FlexSm90 final : public TileRule {
 public:
  FlexSm90()
      : TileRule({.name = "flex-sm90",
                  .doc = "FlexAttention's forward on sm_90: d <= 64 128x128, d <= 96 64x64, "
                         "else 128x64; fewer than 128 queries: the decoding kernel's "
                         "max(16, Sq to a power of 2) x 64 over 2 warps"}) {}

  void resolve(AttentionConfig& c, int64_t nq, int64_t d) const override {
    if (nq < 128) {
      int rows = 16;
      while (rows < nq) rows *= 2;
      c.block_rows = rows;
      c.block_cols = 64;
      c.rowsum_warps = 2;
    } else {
      c.block_rows = d <= 64 ? 128 : d <= 96 ? 64 : 128;
      c.block_cols = d <= 64 ? 128 : 64;
    }
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(FlexSm90)

}  // namespace simprec::attention
