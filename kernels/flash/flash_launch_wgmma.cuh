// Launcher of the wgmma forward prototype (flash_forward_wgmma.cuh): bf16 or fp16, d = 128,
// 64 query rows per CTA. Only the benchmark includes it; the plugin does not offer the kernel
// (docs/gpu_kernels.md says what it lacks).
#pragma once

#include "kernels/flash/flash_forward_wgmma.cuh"
#include "kernels/flash/flash_launch.cuh"

namespace simprec::flash {
namespace detail {

template <class Tag>
cudaError_t forward_wgmma(const ForwardParams& p, cudaStream_t stream) {
  const dim3 grid(p.seqlen_q / 64, p.problems);
  constexpr int kSmem = wgmma::kWgmmaSmemBytes;
  if (p.beta_rowmax)
    return p.sr_bits ? launch(wgmma::flash_forward_wgmma_kernel<Tag, 128, true, 8>, grid, 128,
                              kSmem, stream, p)
                     : launch(wgmma::flash_forward_wgmma_kernel<Tag, 128, true, 0>, grid, 128,
                              kSmem, stream, p);
  return p.sr_bits ? launch(wgmma::flash_forward_wgmma_kernel<Tag, 128, false, 8>, grid, 128, kSmem,
                            stream, p)
                   : launch(wgmma::flash_forward_wgmma_kernel<Tag, 128, false, 0>, grid, 128, kSmem,
                            stream, p);
}

}  // namespace detail

// cudaErrorInvalidValue for e4m3, d != 128 or sr_bits other than 0 and 8.
inline cudaError_t launch_forward_wgmma(Element element, int head_dim, const ForwardParams& p,
                                        cudaStream_t stream) {
  if (head_dim != 128 || (p.sr_bits != 0 && p.sr_bits != 8)) return cudaErrorInvalidValue;
  switch (element) {
    case Element::kBf16:
      return detail::forward_wgmma<Bf16Tag>(p, stream);
    case Element::kFp16:
      return detail::forward_wgmma<Fp16Tag>(p, stream);
    case Element::kE4m3:
      break;
  }
  return cudaErrorInvalidValue;
}

}  // namespace simprec::flash
