// PyTorch's SDPA memory-efficient backend (mem_eff_attention, the CUTLASS kernels): forward 64x64
// (d <= 64) or 64x128 (d <= 128), no splits; backward 64x64 (d <= 64) or 128x128 (d <= 128). Its
// backward splits the keys (kernel_backward.h) unless the problem has enough parallelism already:
// with B*H >= 256 and Sk <= 2 Bc it runs one split.
#include "lib/attention/dispatch.hpp"

namespace simprec::attention {
namespace {

class TorchEfficient final : public Dispatch {
 public:
  TorchEfficient()
      : Dispatch({.name = "torch-efficient",
                  .doc = "PyTorch's memory-efficient backend: tiles by head dimension, no "
                         "key/value splits; the backward's split keys unless B*H >= 256 and "
                         "Sk <= 2 Bc"}) {}

  void resolve(AttentionConfig& c, const AttentionShape& s) const override {
    fill_automatic(c, s, name(), [](int64_t hd) {
      return hd <= 64 ? KernelChoice{{64, 64}, {64, 64}, 1}
                      : KernelChoice{{64, 128}, {128, 128}, 1};
    });
  }

  bool splits_keys(const AttentionConfig& c, const AttentionShape& s) const override {
    return !(dispatch_batch_heads(c, s) >= 256 && s.nk <= 2 * backward_tile(c).second);
  }
};

}  // namespace

SIMPREC_REGISTER_STRATEGIES(TorchEfficient)

}  // namespace simprec::attention
