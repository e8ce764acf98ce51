// PyTorch's SDPA flash backend on sm80/sm90 (aten/src/ATen/native/transformers/cuda/flash_attn):
// the head dimension is rounded up to the kernels' (32, 64, 96, 128). flash_api.cpp's
// set_params_splitkv asks num_splits_heuristic for the splits, with B*H*ceil(Sq/64) blocks
// against twice the SMs and ceil(Sk/block_n) key blocks, block_n = 256 (d <= 64) or 128
// (d <= 128). One split runs flash_fwd_kernel with 128x128 tiles (d <= 64) or 128x64 (d <= 128,
// sm90); more run flash_fwd_splitkv_kernel with 64 x block_n tiles and the combine kernel. The
// backward kernels take 128x128 (d <= 64) or 64x128 (d <= 128).
#include "lib/attention/dispatch.hpp"

namespace simprec::attention {
namespace {

class TorchFlash final : public Dispatch {
 public:
  TorchFlash()
      : Dispatch({.name = "torch-flash",
                  .doc = "PyTorch's flash backend: tiles by head dimension and split-KV by "
                         "FlashAttention-2's num_splits_heuristic (flash_api.cpp)"}) {}

  bool swaps_query_groups() const override { return true; }
  void resolve(AttentionConfig& c, const AttentionShape& s) const override {
    fill_automatic(c, s, name(), [&](int64_t hd) {
      const int64_t block_n = hd <= 64 ? 256 : 128;
      int splits = c.kv_splits;
      if (splits == 0) {
        // set_params_splitkv: 128 threads per block, hence twice the SMs; at most 128 splits.
        splits = flash_num_splits(dispatch_batch_heads(c, s) * ((s.nq + 63) / 64),
                                  2 * int64_t{c.sms}, (s.nk + block_n - 1) / block_n, 128);
      }
      const KernelTiles forward = splits > 1 ? KernelTiles{64, static_cast<int>(block_n)}
                                             : KernelTiles{128, hd <= 64 ? 128 : 64};
      const KernelTiles backward = hd <= 64 ? KernelTiles{128, 128} : KernelTiles{64, 128};
      return KernelChoice{forward, backward, splits};
    });
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(TorchFlash)

}  // namespace simprec::attention
