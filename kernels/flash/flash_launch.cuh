// Launchers of the flash-attention kernels: one entry per pass that picks the template
// instance for an element type, head dimension and tile configuration. Included by the
// flash_gpu plugin and by the benchmark (one translation unit each).
#pragma once

#include <cuda_runtime.h>

#include "kernels/flash/flash_backward.cuh"
#include "kernels/flash/flash_forward.cuh"

namespace simprec::flash {

enum class Element { kBf16, kFp16, kE4m3 };

// A forward tile configuration: kBlockM query rows per CTA, kBlockN keys per block, warps.
struct TileConfig {
  int block_m, block_n, warps;
};
inline constexpr TileConfig kTile64x64{64, 64, 4};    // 16 rows per warp
inline constexpr TileConfig kTile128x64{128, 64, 4};  // 32 rows per warp (FA2's choice)
inline constexpr TileConfig kTile64x128{64, 128, 4};  // the e4m3 kernel's (128-byte V^T rows)

namespace detail {

// Launches kernel(args...) with `smem` bytes of dynamic shared memory.
template <class Kernel, class... Args>
cudaError_t launch(Kernel kernel, dim3 grid, int threads, int smem, cudaStream_t stream,
                   const Args&... args) {
  cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (e != cudaSuccess) return e;
  kernel<<<grid, threads, smem, stream>>>(args...);
  return cudaGetLastError();
}

template <class Tag, int kHeadDim, int kBlockM, int kBlockN, int kWarps>
cudaError_t forward(const ForwardParams& p, cudaStream_t stream) {
  using Cfg = ForwardConfig<Tag, kHeadDim, kBlockM, kBlockN, kWarps>;
  const dim3 grid(p.seqlen_q / kBlockM, p.problems);
  // Mitigations are template parameters, so that the unmitigated kernel pays nothing for them.
  if (p.sr_bits != 0 && p.sr_bits != 8) return cudaErrorInvalidValue;
  const int threads = Cfg::kThreads, smem = Cfg::kSmemBytes;
  if (p.beta_rowmax) {
    return p.sr_bits
               ? launch(flash_forward_kernel<Tag, kHeadDim, kBlockM, kBlockN, kWarps, true, 8>,
                        grid, threads, smem, stream, kernel_params<8>(p))
               : launch(flash_forward_kernel<Tag, kHeadDim, kBlockM, kBlockN, kWarps, true, 0>,
                        grid, threads, smem, stream, p);
  }
  return p.sr_bits ? launch(flash_forward_kernel<Tag, kHeadDim, kBlockM, kBlockN, kWarps, false, 8>,
                            grid, threads, smem, stream, kernel_params<8>(p))
                   : launch(flash_forward_kernel<Tag, kHeadDim, kBlockM, kBlockN, kWarps, false, 0>,
                            grid, threads, smem, stream, p);
}

template <class Tag, int kHeadDim>
cudaError_t forward_tiles(const TileConfig& tile, const ForwardParams& p, cudaStream_t stream) {
  if (tile.block_m == 64 && tile.block_n == 64 && tile.warps == 4)
    return forward<Tag, kHeadDim, 64, 64, 4>(p, stream);
  if (tile.block_m == 128 && tile.block_n == 64 && tile.warps == 4)
    return forward<Tag, kHeadDim, 128, 64, 4>(p, stream);
  return cudaErrorInvalidValue;
}

template <class Tag, int kHeadDim, int kBlock>
cudaError_t backward(BackwardParams p, cudaStream_t stream) {
  using Cfg = BackwardConfig<Tag, kHeadDim, kBlock, kBlock>;
  const int64_t rows = static_cast<int64_t>(p.problems) * p.seqlen_q;
  flash_backward_prepare<Tag, kHeadDim>
      <<<static_cast<unsigned>((rows + 127) / 128), 128, 0, stream>>>(p);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return e;
  auto dkdv = flash_backward_dkdv<Tag, kHeadDim, kBlock, kBlock>;
  e = cudaFuncSetAttribute(dkdv, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kDkdvSmem);
  if (e != cudaSuccess) return e;
  dkdv<<<dim3(p.seqlen_k / kBlock, p.problems), Cfg::kThreads, Cfg::kDkdvSmem, stream>>>(p);
  e = cudaGetLastError();
  if (e != cudaSuccess) return e;
  auto dq = flash_backward_dq<Tag, kHeadDim, kBlock, kBlock>;
  e = cudaFuncSetAttribute(dq, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kDqSmem);
  if (e != cudaSuccess) return e;
  dq<<<dim3(p.seqlen_q / kBlock, p.problems), Cfg::kThreads, Cfg::kDqSmem, stream>>>(p);
  return cudaGetLastError();
}

template <class Tag>
cudaError_t forward_any(int head_dim, const TileConfig& tile, const ForwardParams& p,
                        cudaStream_t stream) {
  if constexpr (kIsFp8<Tag>) {
    if (head_dim == 128 && tile.block_m == 64 && tile.block_n == 128 && tile.warps == 4 &&
        p.sr_bits == 0) {
      using Cfg = ForwardConfig<Tag, 128, 64, 128, 4>;
      const dim3 grid(p.seqlen_q / 64, p.problems);
      return p.beta_rowmax ? launch(flash_forward_kernel<Tag, 128, 64, 128, 4, true, 0>, grid,
                                    Cfg::kThreads, Cfg::kSmemBytes, stream, p)
                           : launch(flash_forward_kernel<Tag, 128, 64, 128, 4, false, 0>, grid,
                                    Cfg::kThreads, Cfg::kSmemBytes, stream, p);
    }
    return cudaErrorInvalidValue;
  } else {
    if (head_dim == 64) return forward_tiles<Tag, 64>(tile, p, stream);
    if (head_dim == 128) return forward_tiles<Tag, 128>(tile, p, stream);
    return cudaErrorInvalidValue;
  }
}

template <class Tag>
cudaError_t backward_any(int head_dim, int block, const BackwardParams& p, cudaStream_t stream) {
  if (block != 64) return cudaErrorInvalidValue;
  if (head_dim == 64) return backward<Tag, 64, 64>(p, stream);
  if (head_dim == 128) return backward<Tag, 128, 64>(p, stream);
  return cudaErrorInvalidValue;
}

}  // namespace detail

// cudaErrorInvalidValue for a head dimension or tile configuration without an instance. The
// e4m3 kernel: d = 128, 64x128 tiles, no stochastic rounding, V given transposed ([B,H,D,Nk]).
inline cudaError_t launch_forward(Element element, int head_dim, const TileConfig& tile,
                                  const ForwardParams& p, cudaStream_t stream) {
  switch (element) {
    case Element::kBf16:
      return detail::forward_any<Bf16Tag>(head_dim, tile, p, stream);
    case Element::kFp16:
      return detail::forward_any<Fp16Tag>(head_dim, tile, p, stream);
    case Element::kE4m3:
      return detail::forward_any<E4m3Tag>(head_dim, tile, p, stream);
  }
  return cudaErrorInvalidValue;
}

// Needs p.delta and p.shift workspaces of B*H*Nq floats each.
inline cudaError_t launch_backward(Element element, int head_dim, int block,
                                   const BackwardParams& p, cudaStream_t stream) {
  switch (element) {
    case Element::kBf16:
      return detail::backward_any<Bf16Tag>(head_dim, block, p, stream);
    case Element::kFp16:
      return detail::backward_any<Fp16Tag>(head_dim, block, p, stream);
    case Element::kE4m3:
      break;  // no fp8 backward
  }
  return cudaErrorInvalidValue;
}

}  // namespace simprec::flash
