// Arguments of the flash-attention kernels (kernels/flash/*.cuh), shared by the launchers of the
// flash_gpu plugin and the benchmark. Tensors are contiguous [B, H, N, D] (one "problem" per
// batch*head), device pointers.
#pragma once

#include <cstdint>
#include <type_traits>

#include "emulation/tiled_random.hpp"

namespace simprec::flash {

struct ForwardParams {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;  // the fp8 kernel takes V transposed: [B, H, D, Nk], keys permuted
  void* o = nullptr;
  float* lse = nullptr;  // [B, H, Nq]
  int problems = 0;      // B * H
  int seqlen_q = 0, seqlen_k = 0;
  double scale = 0;      // softmax scale (for the LSE)
  float scale_log2 = 0;  // fp32(scale * log2 e), the exponent's multiplier
  bool causal = false;
  bool beta_rowmax = false;  // paper A's mitigation
  double beta = 2.0;
  double eps_over_scale = 0;  // eps / scale: the repeat threshold on unscaled scores
  int sr_bits = 0;  // stochastic rounding of P with 8 random bits per element; 0: nearest even
  uint64_t seed = 0;
};

// The parameters of a forward kernel with stochastic rounding: Philox's round keys of p.seed
// come ready-made (kernel_params), so that a round's XOR reads its key from the constant bank
// instead of registers recomputed in every key block (wg128x64 with SR on the H100: 369 -> 400
// TFLOP/s; git show 45bcba0:docs/findings.md). The kernels without SR keep the plain struct, so
// that their code stays as it was (a larger parameter struct moved the plain kernels' speeds by
// +-4%).
struct SrForwardParams : ForwardParams {
  tiled_random::RoundKeys sr_keys{};
};
template <int kSrBits>
using KernelForwardParams = std::conditional_t<kSrBits == 0, ForwardParams, SrForwardParams>;
template <int kSrBits>
KernelForwardParams<kSrBits> kernel_params(const ForwardParams& p) {
  if constexpr (kSrBits == 0) {
    return p;
  } else {
    return SrForwardParams{p, tiled_random::round_keys(p.seed)};
  }
}

struct BackwardParams {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  const void* o = nullptr;
  const void* d_o = nullptr;
  const float* lse = nullptr;
  void* dq = nullptr;
  void* dk = nullptr;
  void* dv = nullptr;
  float* delta = nullptr;  // workspace [B, H, Nq]: D = rowsum(dO o O)
  float* shift = nullptr;  // workspace [B, H, Nq]: fp32(lse * log2 e)
  int problems = 0;
  int seqlen_q = 0, seqlen_k = 0;
  double scale = 0;
  float scale_log2 = 0;
  bool causal = false;
};

}  // namespace simprec::flash
