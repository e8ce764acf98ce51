// Presets of the block-FMA model. sm_90 presets marked verified were fitted to, and are checked
// against, H100 outputs in tests/data/tensor_core/ (docs/findings.md has the evidence); the
// others restate published models (Fasi et al. 2021, Khattak & Mikaitis 2025) unchecked here.
#include <stdexcept>

#include "emulation/did_you_mean.hpp"
#include "emulation/excerpt.hpp"
#include "emulation/tensor_core.hpp"

namespace simprec {
namespace {

constexpr const char* kH100Evidence =
    "bit-exact on 1,048,576 H100 outputs (tests/data/tensor_core, tests/tensor_core_hw_test.cpp)";
constexpr const char* kInferredEvidence =
    "not measured: inferred from the measured sibling instruction with the other input format";
constexpr const char* kK8Evidence =
    "bit-exact on 262,144 H100 outputs of K = 64 chains (one probe; a subset in "
    "tests/data/tensor_core/mma_bf16_k8_h100.bin, tests/tensor_core_k8_test.cpp), and the "
    "instruction of PyTorch's memory-efficient attention (tests/torch_sdpa_test.cpp)";
constexpr const char* kMixedEvidence =
    "not measured: the measured single-format fp8 siblings' arithmetic, each operand decoded in "
    "its own format";
constexpr const char* kMixedGemmEvidence =
    "through whole GEMMs only: torch._scaled_mm e5m2 x e4m3 on an H200 (tests/data/gemm, "
    "python/tests/test_gemm_recordings.py); not probed instruction by instruction";
constexpr const char* kFp4Evidence =
    "not checked: the fp8 tcgen05 preset's published parameters with e2m1 inputs (for NVFP4 "
    "GEMM models, docs/gemm.md)";
constexpr const char* kLiteratureEvidence =
    "published model (Fasi et al. 2021; Khattak & Mikaitis 2025); not checked on hardware here";

struct Spec {
  const char* name;
  const char* instruction;
  const char* gpu;
  Format input_a;
  Format input_b;
  Format accumulator;
  int m, n, k;
  int block_size;
  int kept_fraction_bits;
  RoundingMode block_rounding;
  int block_result_precision;
  KGrouping grouping;
  CEntry c_entry;
  bool through_fp16;
  bool verified;
  const char* evidence;
};

constexpr auto rtz = RoundingMode::kTowardZero;
constexpr auto rne = RoundingMode::kNearestEven;
constexpr auto contiguous = KGrouping::kContiguous;
constexpr auto pairs = KGrouping::kInterleaved;
constexpr auto first = CEntry::kFirstBlock;
constexpr auto separate = CEntry::kSeparateAddition;
const Format fp32 = formats::fp32;
const Format fp16 = formats::fp16;
const Format bf16 = formats::bf16;
const Format e4m3 = formats::e4m3fn;
const Format e5m2 = formats::e5m2;
const Format e2m1 = formats::fp4_e2m1;

// clang-format off
const Spec kSpecs[] = {
  // H100, mma.sync: one block of 16 products plus C, 2 extra alignment bits, truncated.
  {"tc:sm90-mma-bf16", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", "H100 (sm_90)",
   bf16, bf16, fp32, 16, 8, 16, 16, 25, rtz, 24, contiguous, first, false, true, kH100Evidence},
  {"tc:sm90-mma-fp16", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "H100 (sm_90)",
   fp16, fp16, fp32, 16, 8, 16, 16, 25, rtz, 24, contiguous, first, false, true, kH100Evidence},
  {"tc:sm90-mma-fp16acc", "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16", "H100 (sm_90)",
   fp16, fp16, fp16, 16, 8, 16, 16, 25, rne, 11, contiguous, first, false, true, kH100Evidence},
  // H100, mma.sync with k = 8: one block of 8 products plus C (as the k = 16 instruction with
  // half its products zero).
  {"tc:sm90-mma-bf16-k8", "mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32", "H100 (sm_90)",
   bf16, bf16, fp32, 16, 8, 8, 8, 25, rtz, 24, contiguous, first, false, false, kK8Evidence},
  {"tc:sm90-mma-fp16-k8", "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32", "H100 (sm_90)",
   fp16, fp16, fp32, 16, 8, 8, 8, 25, rtz, 24, contiguous, first, false, false, kInferredEvidence},
  // H100, mma.sync on fp8: ptxas unpacks to fp16 and issues two HMMA.16816 (pairs of k
  // interleaved between them) from +0, then adds C with FADD/HADD.
  {"tc:sm90-mma-e4m3", "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", "H100 (sm_90)",
   e4m3, e4m3, fp32, 16, 8, 32, 16, 25, rtz, 24, pairs, separate, true, true, kH100Evidence},
  {"tc:sm90-mma-e5m2", "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32", "H100 (sm_90)",
   e5m2, e5m2, fp32, 16, 8, 32, 16, 25, rtz, 24, pairs, separate, true, true, kH100Evidence},
  // One e5m2 and one e4m3 operand (A's format first): the same unpacking to fp16, so the same
  // arithmetic on the same fp16 values.
  {"tc:sm90-mma-e5m2-e4m3", "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e4m3.f32", "H100 (sm_90)",
   e5m2, e4m3, fp32, 16, 8, 32, 16, 25, rtz, 24, pairs, separate, true, false, kMixedEvidence},
  {"tc:sm90-mma-e4m3-e5m2", "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32", "H100 (sm_90)",
   e4m3, e5m2, fp32, 16, 8, 32, 16, 25, rtz, 24, pairs, separate, true, false, kMixedEvidence},
  {"tc:sm90-mma-e4m3-fp16acc", "mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16", "H100 (sm_90)",
   e4m3, e4m3, fp16, 16, 8, 32, 16, 25, rne, 11, pairs, separate, true, true, kH100Evidence},
  {"tc:sm90-mma-e5m2-fp16acc", "mma.sync.aligned.m16n8k32.row.col.f16.e5m2.e5m2.f16", "H100 (sm_90)",
   e5m2, e5m2, fp16, 16, 8, 32, 16, 25, rne, 11, pairs, separate, true, false, kInferredEvidence},
  // H100, wgmma (shape m64nNk16 / m64nNk32; N does not change the arithmetic).
  {"tc:sm90-wgmma-bf16", "wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16", "H100 (sm_90a)",
   bf16, bf16, fp32, 64, 8, 16, 16, 25, rtz, 24, contiguous, first, false, true, kH100Evidence},
  {"tc:sm90-wgmma-fp16", "wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16", "H100 (sm_90a)",
   fp16, fp16, fp32, 64, 8, 16, 16, 25, rtz, 24, contiguous, first, false, true, kH100Evidence},
  {"tc:sm90-wgmma-fp16acc", "wgmma.mma_async.sync.aligned.m64nNk16.f16.f16.f16", "H100 (sm_90a)",
   fp16, fp16, fp16, 64, 8, 16, 16, 25, rne, 11, contiguous, first, false, true, kH100Evidence},
  // fp8 wgmma: one block of 32 products plus C with only 13 fraction bits kept below the
  // alignment exponent, and a block result truncated to 14 significant bits.
  {"tc:sm90-wgmma-e4m3", "wgmma.mma_async.sync.aligned.m64nNk32.f32.e4m3.e4m3", "H100 (sm_90a)",
   e4m3, e4m3, fp32, 64, 8, 32, 32, 13, rtz, 14, contiguous, first, false, true, kH100Evidence},
  {"tc:sm90-wgmma-e5m2", "wgmma.mma_async.sync.aligned.m64nNk32.f32.e5m2.e5m2", "H100 (sm_90a)",
   e5m2, e5m2, fp32, 64, 8, 32, 32, 13, rtz, 14, contiguous, first, false, true, kH100Evidence},
  // One e5m2 and one e4m3 operand (A's format first), the same datapath.
  {"tc:sm90-wgmma-e5m2-e4m3", "wgmma.mma_async.sync.aligned.m64nNk32.f32.e5m2.e4m3", "H100 (sm_90a)",
   e5m2, e4m3, fp32, 64, 8, 32, 32, 13, rtz, 14, contiguous, first, false, false, kMixedGemmEvidence},
  {"tc:sm90-wgmma-e4m3-e5m2", "wgmma.mma_async.sync.aligned.m64nNk32.f32.e4m3.e5m2", "H100 (sm_90a)",
   e4m3, e5m2, fp32, 64, 8, 32, 32, 13, rtz, 14, contiguous, first, false, false, kMixedEvidence},
  {"tc:sm90-wgmma-e4m3-fp16acc", "wgmma.mma_async.sync.aligned.m64nNk32.f16.e4m3.e4m3", "H100 (sm_90a)",
   e4m3, e4m3, fp16, 64, 8, 32, 32, 13, rne, 11, contiguous, first, false, true, kH100Evidence},
  {"tc:sm90-wgmma-e5m2-fp16acc", "wgmma.mma_async.sync.aligned.m64nNk32.f16.e5m2.e5m2", "H100 (sm_90a)",
   e5m2, e5m2, fp16, 64, 8, 32, 32, 13, rne, 11, contiguous, first, false, false, kInferredEvidence},
  // A100: blocks of 8 products, 1 extra bit.
  {"tc:sm80-mma-bf16", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", "A100 (sm_80)",
   bf16, bf16, fp32, 16, 8, 16, 8, 24, rtz, 24, contiguous, first, false, false, kLiteratureEvidence},
  {"tc:sm80-mma-fp16", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "A100 (sm_80)",
   fp16, fp16, fp32, 16, 8, 16, 8, 24, rtz, 24, contiguous, first, false, false, kLiteratureEvidence},
  {"tc:sm80-mma-fp16acc", "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16", "A100 (sm_80)",
   fp16, fp16, fp16, 16, 8, 16, 8, 24, rne, 11, contiguous, first, false, false, kLiteratureEvidence},
  // V100: blocks of 4 products, no extra bit.
  {"tc:sm70-mma-fp16", "mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32", "V100 (sm_70)",
   fp16, fp16, fp32, 8, 8, 4, 4, 23, rtz, 24, contiguous, first, false, false, kLiteratureEvidence},
  {"tc:sm70-mma-fp16acc", "mma.sync.aligned.m8n8k4.row.col.f16.f16.f16.f16", "V100 (sm_70)",
   fp16, fp16, fp16, 8, 8, 4, 4, 23, rne, 11, contiguous, first, false, false, kLiteratureEvidence},
  // B200: 16 products (32 for fp8), 2 extra bits, truncated.
  {"tc:sm100-tcgen05-bf16", "tcgen05.mma.cta_group::1.kind::f16 (bf16, fp32 accumulator)", "B200 (sm_100)",
   bf16, bf16, fp32, 64, 8, 16, 16, 25, rtz, 24, contiguous, first, false, false, kLiteratureEvidence},
  {"tc:sm100-tcgen05-fp16", "tcgen05.mma.cta_group::1.kind::f16 (fp16, fp32 accumulator)", "B200 (sm_100)",
   fp16, fp16, fp32, 64, 8, 16, 16, 25, rtz, 24, contiguous, first, false, false, kLiteratureEvidence},
  {"tc:sm100-tcgen05-e4m3", "tcgen05.mma.cta_group::1.kind::f8f6f4 (e4m3, fp32 accumulator)", "B200 (sm_100)",
   e4m3, e4m3, fp32, 64, 8, 32, 32, 25, rtz, 24, contiguous, first, false, false, kLiteratureEvidence},
  {"tc:sm100-tcgen05-e5m2", "tcgen05.mma.cta_group::1.kind::f8f6f4 (e5m2, fp32 accumulator)", "B200 (sm_100)",
   e5m2, e5m2, fp32, 64, 8, 32, 32, 25, rtz, 24, contiguous, first, false, false, kLiteratureEvidence},
  {"tc:sm100-tcgen05-e2m1", "tcgen05.mma.cta_group::1.kind::f8f6f4 (e2m1, fp32 accumulator)", "B200 (sm_100)",
   e2m1, e2m1, fp32, 64, 8, 32, 32, 25, rtz, 24, contiguous, first, false, false, kFp4Evidence},
};
// clang-format on

TensorCoreModel make_model(const Spec& s) {
  TensorCoreModel m;
  m.name = s.name;
  m.instruction = s.instruction;
  m.gpu = s.gpu;
  m.input_a = s.input_a;
  m.input_b = s.input_b;
  m.accumulator = s.accumulator;
  m.m = s.m;
  m.n = s.n;
  m.k = s.k;
  m.block_size = s.block_size;
  m.kept_fraction_bits = s.kept_fraction_bits;
  m.alignment = AlignmentExponent::kOperandSum;
  m.truncation = TermTruncation::kTowardZero;
  m.grouping = s.grouping;
  m.c_entry = s.c_entry;
  if (s.through_fp16) m.datapath_input = formats::fp16;
  m.block_rounding = s.block_rounding;
  // Measured on the H100 (docs/findings.md, "Signed zeros"): mma.sync m16n8k16 with fp32
  // accumulators returns +0 for a -0 C plus -0 products.
  m.zero_is_always_positive = std::string_view(s.name) == "tc:sm90-mma-bf16" ||
                              std::string_view(s.name) == "tc:sm90-mma-fp16";
  m.block_result_precision = s.block_result_precision;
  m.verified = s.verified;
  m.evidence = s.evidence;
  return m;
}

}  // namespace

const std::vector<TensorCoreModel>& tensor_core_models() {
  static const std::vector<TensorCoreModel> models = [] {
    std::vector<TensorCoreModel> v;
    for (const Spec& s : kSpecs) v.push_back(make_model(s));
    return v;
  }();
  return models;
}

const TensorCoreModel& tensor_core_model(std::string_view name) {
  for (const TensorCoreModel& m : tensor_core_models()) {
    if (m.name == name) return m;
  }
  std::string known;
  std::vector<std::string> names;
  for (const TensorCoreModel& m : tensor_core_models()) {
    known += (known.empty() ? "" : ", ") + m.name;
    names.push_back(m.name);
  }
  throw std::invalid_argument("unknown tensor-core model '" + excerpt(name) + "'" +
                              did_you_mean(name, names) + ": expected one of " + known);
}

}  // namespace simprec
