// Launcher of the wgmma forward kernel (flash_forward_wgmma.cuh): bf16 or fp16, d = 128, 128
// query rows per CTA (so N_q a multiple of 128), keys in blocks of 64. Builds the three TMA
// tensor maps of the call's Q, K and V.
#pragma once

#include "kernels/flash/flash_forward_wgmma.cuh"
#include "kernels/flash/flash_launch.cuh"

namespace simprec::flash {
namespace detail {

template <int kSrBits, class Kernel>
cudaError_t launch_wgmma(Kernel kernel, const ForwardParams& p, cudaStream_t stream) {
  using L = wgmma::Layout;
  CUtensorMap q_map, k_map, v_map;
  const uint64_t q_rows = static_cast<uint64_t>(p.problems) * p.seqlen_q;
  const uint64_t k_rows = static_cast<uint64_t>(p.problems) * p.seqlen_k;
  for (const cudaError_t e : {tma::encode_rows(&q_map, p.q, q_rows, L::kHeadDim, L::kBlockM),
                              tma::encode_rows(&k_map, p.k, k_rows, L::kHeadDim, L::kBlockN),
                              tma::encode_rows(&v_map, p.v, k_rows, L::kHeadDim, L::kBlockN)})
    if (e != cudaSuccess) return e;
  return launch(kernel, dim3(p.seqlen_q / L::kBlockM, p.problems), L::kThreads, L::kSmemBytes,
                stream, kernel_params<kSrBits>(p), q_map, k_map, v_map);
}

template <class Tag>
cudaError_t forward_wgmma(const ForwardParams& p, cudaStream_t stream) {
  if (p.beta_rowmax)
    return p.sr_bits ? launch_wgmma<8>(wgmma::flash_forward_wgmma_kernel<Tag, true, 8>, p, stream)
                     : launch_wgmma<0>(wgmma::flash_forward_wgmma_kernel<Tag, true, 0>, p, stream);
  return p.sr_bits ? launch_wgmma<8>(wgmma::flash_forward_wgmma_kernel<Tag, false, 8>, p, stream)
                   : launch_wgmma<0>(wgmma::flash_forward_wgmma_kernel<Tag, false, 0>, p, stream);
}

}  // namespace detail

// cudaErrorInvalidValue for e4m3, d != 128, N_q not a multiple of 128, N_k not one of 64, or
// sr_bits other than 0 and 8.
inline cudaError_t launch_forward_wgmma(Element element, int head_dim, const ForwardParams& p,
                                        cudaStream_t stream) {
  if (head_dim != 128 || p.seqlen_q % wgmma::Layout::kBlockM != 0 ||
      p.seqlen_k % wgmma::Layout::kBlockN != 0 || (p.sr_bits != 0 && p.sr_bits != 8))
    return cudaErrorInvalidValue;
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
