// Named, documented configurations (docs/attention.md has the table). Each takes the
// low-precision format F (bf16 by default); "wide" sites use A = fp32, or F itself when F is at
// least as precise as fp32 (so that every preset at F = fp64 computes entirely in fp64).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "lib/attention/config.hpp"

namespace simprec::attention {

// Presets: fp64, fp32, torch-math, fa2, paper-a, baseline-lp, flash-lp, paper-b, torch-flash,
// cuda-fa2, fa3-fp8, torch-efficient. Throws std::invalid_argument listing the known names.
AttentionConfig make_preset(std::string_view name, const Format& low_precision = formats::bf16);
std::vector<std::string> preset_names();
std::string_view preset_description(std::string_view name);

// The accumulation model of the fa2 preset's fp32 tensor-core products (S, P.V, dP, dQ, dK,
// dV) for low-precision format F: the bit-exact H100 models of docs/tensor_cores.md —
// mma.sync m16n8k16 for bf16 and fp16 (what FlashAttention-2 issues on sm_80/sm_90), wgmma for
// the FP8 formats (what FP8 flash attention uses on sm_90); one fp32 fma per term otherwise.
std::string fa2_tensor_core_accumulation(const Format& f);
// The cuda-fa2 preset's: mma.sync for every format (tc:sm90-mma-e4m3 / -e5m2 for FP8), as
// simprec's flash_gpu kernels issue it.
std::string cuda_fa2_tensor_core_accumulation(const Format& f);
// The torch-efficient preset's: mma.sync m16n8k8 (tc:sm90-mma-bf16-k8 / -fp16-k8), the
// instruction CUTLASS issues in PyTorch's memory-efficient kernels; fa2's for other formats.
std::string mem_eff_tensor_core_accumulation(const Format& f);

}  // namespace simprec::attention
