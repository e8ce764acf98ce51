#include "lib/attention/preset.hpp"

#include <stdexcept>

namespace simprec::attention {
namespace {

struct PresetInfo {
  std::string_view name;
  std::string_view description;
};

constexpr PresetInfo kPresets[] = {
    {"fp64", "flash attention with every site in fp64 (inputs in F)"},
    {"fp32", "flash attention with every site in fp32 (inputs in F), output fp32"},
    {"torch-math",
     "PyTorch SDPA math backend: standard attention, F inputs upcast to fp32, fp32 softmax and "
     "products, P kept in fp32, O and gradients cast to F"},
    {"fa2",
     "FlashAttention-2 CUDA (docs/numerics.md §1): fp32 tensor-core products, exp2 with the scale "
     "folded into one FMA, fp32 row sum of the un-cast P, P cast to F (RNE) before P.V, fp32 "
     "rescale and normalisation, one cast of O to F; backward recomputes P from the LSE, "
     "D = rowsum(dO o O) in fp32, P and dS cast to F before their products"},
    {"paper-a",
     "paper A's reference implementation (PyTorch autocast): S, exp argument, exp and row sum in "
     "F; each block's P.V product accumulated in fp32 and rounded to F; O rescaled and "
     "accumulated across blocks in F; O/l in F"},
    {"baseline-lp",
     "standard attention with every intermediate in F, products accumulated in fp32 and "
     "rounded once to F (the 'Is Flash Attention Stable?' micro-benchmark baseline)"},
    {"flash-lp",
     "flash attention with every intermediate in F, O rescaled and updated in F at every "
     "key/value block (the same micro-benchmark's flash variant)"},
    {"paper-b",
     "paper B's ('Is Flash Attention Stable?') numerical re-implementation: FlashAttention-1's "
     "Algorithm 1 (flash_state=normalised: O, l and m renormalised and written back after every "
     "key/value tile) with every intermediate and the running state in F, products and sums "
     "accumulated exactly and rounded once to F, tiles from FA1's rule for an SRAM of M = 16384 "
     "elements (sram; Br = min(ceil(M/4d), d), Bc = ceil(M/4d); block_order swaps them)"},
    {"torch-flash",
     "PyTorch's SDPA flash backend (its vendored FA2, built with UNFUSE_FMA, sm80 code on sm_90): "
     "fa2 with the exponent argument rounded twice, the row sum in the quad's 4 lanes, alpha = "
     "exp2(round(m_old - m_new) * c), LSE = fma(m, scale, log l), key blocks last to first, "
     "tiles and split-KV (O and LSE per split in fp32, merged by the combine kernel) as "
     "flash_api.cpp dispatches them by shape (dispatch=torch-flash; batch_heads= and sms= for "
     "a run of fewer heads than the real problem); backward: D by 8 threads per row and a "
     "butterfly, query "
     "blocks last to first, dQ per key block added in fp32, lse * fp32(log2 e), dQ and dK scaled "
     "in fp32 then cast; the H100's ex2.approx and __logf, and libdevice's expf and logf in the "
     "combine kernel (device_math=sm90). Agreement with "
     "PyTorch 2.11 on an H100 per shape: docs/torch_kernels.md"},
    {"cuda-fa2",
     "simprec's own CUDA FlashAttention-2 kernels (plugin flash_gpu): fa2 with mma.sync "
     "tensor-core models for every product (fp8 included), the row sum as four partial sums "
     "combined at the end, alpha = exp2 of the difference of the exponent shifts, 64x64 tiles, "
     "beta-rowmax's threshold and shifted max in fp32; O and gradients in F (bf16 for e4m3fn); "
     "with an exp2 table, the device's exp2"},
    {"fa3-fp8",
     "FlashAttention-3-style FP8 forward on an H100 (docs/fp8_attention.md): Q, K, V in F "
     "(e4m3fn), products by the wgmma fp8 model (32 products per block, 13 kept fraction "
     "bits, 14-bit block result) chained over the key blocks in one fp32 accumulator, fp32 "
     "softmax with exp2 by one FMA, P times 256 cast to F, O normalised in fp32 and cast to "
     "bf16 (F when F is at least as wide); 128x128 tiles; pv_promote=K for two-level "
     "accumulation. Inputs are cast without per-head or per-block scales. Backward as fa2"},
    {"sage",
     "SageAttention (docs/numerics.md §9; F = fp16): K minus its mean over the keys, Q times "
     "fp32(scale log2 e), Q and K in INT8 with one scale per block of 128 queries or 64 keys "
     "(amax/127, round half away), the integer scores exact, dequantised in fp32 in log2 units; "
     "exp2(x - m); alpha = exp2(m_old - m_new); the row sum in fp32 in column order; P in fp16 "
     "times V in fp16 by mma.sync with an fp16 accumulator per "
     "64-key block, added to an fp32 O; O / l; forward only"},
    {"sage2",
     "SageAttention2's H100 kernel (docs/numerics.md §9): sage's smoothing and INT8 Q and K "
     "with Q scales per 16 rows (its per-warp granularity) and K scales per 128 keys; V in "
     "e4m3 with one scale per channel (amax/448); P times 256 cast to e4m3; P.V by the wgmma "
     "fp8 model (13 kept fraction bits per 32 products) per 128-key block, promoted to an fp32 "
     "O after each block; O times fp32(fp32(1/l) v_scale), cast to F; forward only"},
    {"torch-efficient",
     "PyTorch's SDPA memory-efficient backend (xformers/CUTLASS; tiles by head dimension, "
     "dispatch=torch-efficient: 64x64 forward and backward for d <= 64, 64x128 forward and "
     "128x128 backward up to 128): "
     "mma.sync m16n8k8 for every product, S times the fp32 scale, then times fp32 log2 e, each "
     "rounded, minus the row max, exp2; alpha = exp2 of "
     "the shift difference, row sums per warp of 32 columns, LSE = shift / log2 e + log l; "
     "backward: P = exp(round(S*scale) - LSE) cast to F and used cast in dS, dS scaled before "
     "its cast, D by 2 threads per row, split keys (key block s starts at query block s, dQ "
     "chained in the order the blocks reach it, the higher key block first); the H100's "
     "ex2.approx and libdevice's expf "
     "and logf (device_math=sm90). Agreement with PyTorch 2.11 on an H100 per "
     "shape: docs/torch_kernels.md"},
    {"torch-flex",
     "PyTorch's FlexAttention (the Triton kernels torch.compile generates, PyTorch 2.11 and "
     "Triton 3.6 on sm_90): fp32 tensor-core products, the score times the fp32 scale, rounded, "
     "then fma(t, fp32 log2 e, -max) (a separate product and subtraction in blocks a mask "
     "selects in: flex_compile=static; =dynamic for a kernel compiled for symbolic lengths), "
     "exp2; alpha = exp2 of the difference of "
     "the maxima; each key block's row sum in the quad's 4 lanes, added to l by fma(l, alpha, "
     "sum); O / l as div.full.f32; LSE = m + log2 l in base 2 (reported times ln 2); tiles by "
     "head dimension (128x128 for d <= 64, 64x64 for d <= 96, else 128x64); causal through the "
     "128x128 block mask (its partial blocks first); backward: P recomputed from the base-2 "
     "LSE, D = rowsum(dO o O), dQ, dK, dV chained in increasing order, dQ and dK scaled in fp32 "
     "then cast; the H100's ex2.approx and libdevice's log2f (device_math=sm90)"},
};

// paper B gives no SRAM size; 16384 elements (64 KiB of fp32) gives FlashAttention-1's 64 x 64
// tiles at d = 64.
constexpr int64_t kPaperBSram = 16384;

SiteSpec spec(const Format& f, std::string_view accumulation = "sequential") {
  return SiteSpec{f, Rounding{}, std::string(accumulation)};
}

}  // namespace

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const auto& p : kPresets) names.emplace_back(p.name);
  return names;
}

std::string_view preset_description(std::string_view name) {
  for (const auto& p : kPresets) {
    if (p.name == name) return p.description;
  }
  return {};
}

std::string cuda_fa2_tensor_core_accumulation(const Format& f) {
  if (f == formats::e4m3fn) return "tc:sm90-mma-e4m3";
  if (f == formats::e5m2) return "tc:sm90-mma-e5m2";
  return fa2_tensor_core_accumulation(f);
}

std::string mem_eff_tensor_core_accumulation(const Format& f) {
  if (f == formats::bf16) return "tc:sm90-mma-bf16-k8";
  if (f == formats::fp16) return "tc:sm90-mma-fp16-k8";
  return fa2_tensor_core_accumulation(f);
}

std::string fa2_tensor_core_accumulation(const Format& f) {
  if (f == formats::bf16) return "tc:sm90-mma-bf16";
  if (f == formats::fp16) return "tc:sm90-mma-fp16";
  if (f == formats::e4m3fn) return "tc:sm90-wgmma-e4m3";
  if (f == formats::e5m2) return "tc:sm90-wgmma-e5m2";
  return "sequential";
}

AttentionConfig make_preset(std::string_view name, const Format& f) {
  if (const std::string problem = f.validate(); !problem.empty()) {
    throw std::invalid_argument("preset format: " + problem);
  }
  require_sign(f, "attention's values");
  AttentionConfig c;
  c.preset = std::string(name);
  c.low_precision = f;
  // The wide format: fp32, unless F is at least as precise.
  const Format a = f.precision() >= formats::fp32.precision() ? f : formats::fp32;
  const auto all = [&c](const SiteSpec& s) {
    for (auto& site : c.sites) site = s;
  };
  const auto set = [&c](Site site, const SiteSpec& s) { c.site(site) = s; };
  // The tensor-core products: S, P.V, dP, dQ, dK, dV accumulated in A with `model`.
  const auto set_products = [&](const std::string& model) {
    for (Site s : {Site::kS, Site::kPvAcc, Site::kDp, Site::kDqAcc, Site::kDkAcc, Site::kDvAcc}) {
      set(s, spec(a, model));
    }
  };

  if (name == "fp64") {
    c.exp_impl = ExpImpl::kNatural;
    all(spec(formats::fp64));
  } else if (name == "fp32") {
    c.exp_impl = ExpImpl::kNatural;
    all(spec(a));
  } else if (name == "torch-math") {
    c.algorithm = Algorithm::kStandard;
    c.exp_impl = ExpImpl::kNatural;
    all(spec(a));
    set(Site::kOOut, spec(f));
    set(Site::kGradOut, spec(f));
  } else if (name == "fa2") {
    c.exp_impl = ExpImpl::kExp2Fma;
    all(spec(a));
    set_products(fa2_tensor_core_accumulation(f));
    for (Site s : {Site::kPCast, Site::kOOut, Site::kPCastBwd, Site::kDsCast, Site::kGradOut}) {
      set(s, spec(f));
    }
  } else if (name == "torch-flash") {
    // Measured against PyTorch 2.11 on an H100 (tests/torch_sdpa_test.cpp): fa2's numerics
    // with the unfused exponent argument and the kernel's tile sizes.
    c = make_preset("fa2", f);
    c.preset = "torch-flash";
    c.exp_impl = ExpImpl::kExp2;
    // The kernels flash_api.cpp dispatches by shape (dispatch.hpp): tiles by head dimension,
    // split-KV with its combine kernel when few query blocks would leave SMs idle; key blocks
    // last to first.
    c.dispatch = Dispatch::kTorchFlash;
    c.block_rows = c.block_cols = 0;
    c.kv_splits = 0;
    c.key_order = KeyOrder::kDescending;
    // The forward kernel's softmax (softmax.h): per-thread row sums combined by the quad's
    // all-reduce, alpha from the raw maxima, LSE by fma with __logf.
    c.rowsum_lanes = 4;
    c.rowsum_rescale = RowsumRescale::kFma;
    c.rescale = RescaleImpl::kExp2Diff;
    c.lse_impl = LseImpl::kFmaLog;
    // The backward kernels (flash_bwd_kernel.h, seqk-parallel, and its dot_do_o and convert_dQ).
    c.delta_sum = DeltaSum::kFa2;
    c.query_order = QueryOrder::kDescending;
    c.dq_mode = DqMode::kBlockPartials;
    c.grad_scale = GradScale::kFp32ThenCast;
    c.lse_log2e = LseLog2e::kFp32Log2e;
    // The H100's ex2.approx.ftz and __logf, measured exhaustively, and libdevice's expf and
    // logf in the split-KV combine kernel (PyTorch builds it without --use_fast_math), from
    // emulation/device_math/: with rowsum_rescale=fma bit-identical O and LSE on every shape of
    // tests/data/torch_kernels (docs/torch_kernels.md).
    c.device_math = DeviceMath::kSm90;
  } else if (name == "torch-flex") {
    // The Triton templates of torch/_inductor/kernel/flex (flex_attention.py and
    // flex_backward.py) as generated for an H100: forward_block_mn's arithmetic, the block
    // mask's order and the sm_90 tile choice.
    c = make_preset("fa2", f);
    c.preset = "torch-flex";
    c.rescale = RescaleImpl::kExp2Shift;
    c.rowsum_block = RowsumBlock::kQuadFma;
    // acc / l_i: Triton's fp32 division, div.full.f32 (x * rcp.approx(y), emulation/device_math).
    c.norm_mode = NormMode::kDivFull;
    c.lse_impl = LseImpl::kLog2;
    c.block_mask = BlockMask::kDiagonalFirst;
    // Triton contracts the multiply by log2 e with the subtraction of the max into an fma,
    // except where a mask's select stands between them (FlexCompile): measured on an H100.
    c.exp_impl = ExpImpl::kExp2ScaledFma;
    c.flex_compile = FlexCompile::kStatic;
    c.tile_rule = TileRule::kFlexSm90;
    c.grad_scale = GradScale::kFp32ThenCast;
    c.delta_sum = DeltaSum::kTriton;
    // Triton's tl.exp2 is the H100's ex2.approx.ftz (emulation/device_math/).
    c.device_math = DeviceMath::kSm90;
  } else if (name == "cuda-fa2") {
    c = make_preset("fa2", f);
    c.preset = "cuda-fa2";
    set_products(cuda_fa2_tensor_core_accumulation(f));
    c.beta_rowmax.arithmetic = BetaArithmetic::kFp32;  // when enabled: the kernels' FADD, FMUL
    c.rowsum_lanes = 4;
    c.rescale = RescaleImpl::kExp2Shift;
    c.block_rows = 64;
    c.block_cols = 64;
    if (f == formats::e4m3fn) {
      set(Site::kOOut, spec(formats::bf16));
      set(Site::kGradOut, spec(formats::bf16));
    }
  } else if (name == "fa3-fp8") {
    c = make_preset("fa2", f);
    c.preset = "fa3-fp8";
    c.block_rows = 128;
    c.block_cols = 128;
    // P in [0, 1] times 2^8 is at most 256 < 448 and keeps P down to 2^-17 out of e4m3's
    // subnormals; a power of two, so the descale of O is exact.
    c.p_scale = 256;
    if (f.precision() < formats::bf16.precision()) set(Site::kOOut, spec(formats::bf16));
  } else if (name == "sage" || name == "sage2") {
    // SageAttention's kernels (docs/numerics.md §9): sage the Triton per-block kernel
    // (quant_per_block.py, attn_qk_int8_per_block.py), sage2 the sm90 CUDA kernel
    // (qk_int_sv_f8_cuda_sm90.cu) with qk_quant_gran=per_warp.
    const bool sage1 = name == "sage";
    if (sage1 && f != formats::fp16) {
      throw std::invalid_argument(
          "sage: its P.V is an fp16 product of fp16 V (the kernel "
          "converts bf16 V to fp16 first, which is not modelled): "
          "format must be fp16, not " +
          f.name());
    }
    c = make_preset("fa2", f);
    c.preset = std::string(name);
    c.quant.k_smooth = true;
    c.quant.qk_int8 = true;
    c.quant.qk_scale = QuantScale::kBlock;
    // INT8 products summed exactly: every partial sum is an integer below 127^2 d < 2^24 for
    // d <= 1040, so the int32 accumulator converts to fp32 exactly.
    set(Site::kS, spec(formats::fp32, "exact"));
    c.rescale = RescaleImpl::kExp2Diff;  // exp2(m_prev - m_new), the maxima in log2 units
    if (sage1) {
      c.block_rows = 128;
      c.block_cols = 64;
      c.pv_mode = PvMode::kPerBlock;  // tl.dot(p, v, out_dtype=fp16), added to acc
      set(Site::kPvAcc, spec(formats::fp16, "tc:sm90-mma-fp16acc"));
      c.norm_mode = NormMode::kDivide;  // acc / l_i
    } else {
      c.block_rows = 16;  // WARP_Q: one Q scale per warp's 16 rows
      c.block_cols = 128;
      c.quant.v = formats::e4m3fn;
      c.quant.v_scale = QuantScale::kChannel;
      set(Site::kPCast, spec(formats::e4m3fn));
      c.p_scale = 256;
      set(Site::kPvAcc, spec(formats::fp32, "tc:sm90-wgmma-e4m3"));
      c.pv_promote_blocks = 1;  // RO_temp from zero per block, then RO += RO_temp in fp32
    }
  } else if (name == "torch-efficient") {
    // PyTorch's memory-efficient kernels (kernel_forward.h, kernel_backward.h, 64x64 for
    // d <= 64): CUTLASS GEMMs with mma.sync m16n8k8 (gemm_kernel_utils.h), the forward pass's
    // iterative_softmax, and the backward pass's split keys.
    c = make_preset("fa2", f);
    c.preset = "torch-efficient";
    set_products(mem_eff_tensor_core_accumulation(f));
    // The bias-capable kernels scale the scores first (accum = p.scale * accum), then
    // iterative_softmax multiplies by kLog2e: two fp32 roundings (exact at d = 64).
    c.exp_impl = ExpImpl::kExp2Scaled;
    c.rescale = RescaleImpl::kExp2Shift;
    c.rowsum_block = RowsumBlock::kWarpGroups;
    c.lse_impl = LseImpl::kShiftDivLog2e;
    c.dispatch = Dispatch::kTorchEfficient;  // tiles by head dimension (dispatch.hpp)
    c.block_rows = c.block_cols = 0;
    c.bwd_exp_impl = ExpImpl::kNatural;
    c.ds_p = DsProb::kCast;
    c.grad_scale = GradScale::kScaleDs;
    c.query_order = QueryOrder::kSplitKeys;
    c.delta_sum = DeltaSum::kMemEff;
    // exp2f is the H100's ex2.approx; expf (the backward's P) and logf (the LSE) libdevice's,
    // the kernels being built without --use_fast_math (emulation/device_math/).
    c.device_math = DeviceMath::kSm90;
  } else if (name == "paper-a") {
    c.exp_impl = ExpImpl::kNatural;
    c.pv_mode = PvMode::kPerBlock;
    c.norm_mode = NormMode::kDivide;
    all(spec(f));
    // A bf16 matmul or reduction accumulates in fp32 and rounds once; modelled as one rounding
    // of the exact sum (they differ only when fp32 accumulation error crosses an F boundary).
    // The gradients accumulate across blocks in F (bf16 tensors updated with add_).
    for (Site s : {Site::kS, Site::kRowsum, Site::kPvAcc, Site::kD, Site::kDp, Site::kDqAcc,
                   Site::kDkAcc, Site::kDvAcc}) {
      set(s, spec(f, "exact"));
    }
  } else if (name == "baseline-lp") {
    c.algorithm = Algorithm::kStandard;
    c.exp_impl = ExpImpl::kNatural;
    all(spec(f));
    for (Site s : {Site::kS, Site::kRowsum, Site::kPvAcc, Site::kD, Site::kDp, Site::kDqAcc,
                   Site::kDkAcc, Site::kDvAcc}) {
      set(s, spec(f, "exact"));
    }
  } else if (name == "paper-b") {
    c = make_preset("flash-lp", f);
    c.preset = "paper-b";
    c.flash_state = FlashState::kNormalised;
    c.sram = kPaperBSram;
  } else if (name == "flash-lp") {
    c.exp_impl = ExpImpl::kNatural;
    c.norm_mode = NormMode::kDivide;
    all(spec(f));
    for (Site s : {Site::kS, Site::kRowsum, Site::kPvAcc, Site::kD, Site::kDp, Site::kDqAcc,
                   Site::kDkAcc, Site::kDvAcc}) {
      set(s, spec(f, "exact"));
    }
  } else {
    std::string known;
    for (const auto& p : kPresets) known += (known.empty() ? "" : ", ") + std::string(p.name);
    throw std::invalid_argument("unknown preset '" + std::string(name) + "' (known: " + known +
                                ")");
  }
  set(Site::kInput, spec(f));
  return c;
}

}  // namespace simprec::attention
