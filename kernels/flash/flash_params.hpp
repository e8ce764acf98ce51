// Arguments of the flash-attention kernels (kernels/flash/*.cuh), shared by the launchers of the
// flash_gpu plugin and the benchmark. Tensors are contiguous [B, H, N, D] (one "problem" per
// batch*head), device pointers.
#pragma once

#include <cstdint>

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
