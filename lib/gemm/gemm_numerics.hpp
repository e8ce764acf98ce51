// A GEMM numerics spec: one line of text that says how a GEMM kernel computes D = A*B around the
// tensor-core instructions, in the grammar of attention's numerics specs (numerics_spec.hpp):
//
//   PRESET[,KEY=VALUE...]
//
// e.g. "scaled-mm-e4m3,out=fp32" or "cublas-bf16,split_k=cublas-sm90,tile=64x32,cluster=8". Each
// key once; keys in any order. The keys (gemm_keys(), in canonical order):
//   instruction  the tensor-core model chained along K (an fp32-accumulating "tc:" preset)
//   promote      none, or N: the chain restarts from +0 every N elements of K and its result is
//                added to an fp32 accumulator (FP8 without fast accumulation: 128)
//   split_k      a split-K strategy (split_k.hpp): none, pieces:N, length:L or cublas-sm90
//   tile         MxN, the output tile of cublas-sm90's kernel (it caps the pieces)
//   cluster      1, 2, 4 or 8, the CTAs of a cluster of cublas-sm90's kernel
//   problem      auto or MxN: the whole GEMM's output size cublas-sm90 weighs
//   block_scales none, mxfp8 (E8M0 scales of 32 elements of K) or nvfp4 (e4m3 scales of 16): each
//                block a chain of its own, its result times the two blocks' scales, added in fp32
//   scaling      none, tensor (one scale per operand) or row (one per row of A, per column of B)
//   scale_order  alpha (D times fl(scale_a * scale_b), cuBLAS's alpha) or b-then-a
//   out          the output format: fp32, bf16 or fp16 (rounded to nearest even)
// A bias, when given, is added in fp32 after the scales and before the output cast (cuBLASLt's
// bias epilogue). docs/gemm.md has the grammar, the presets and the measured table.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "emulation/format.hpp"
#include "emulation/tensor_core.hpp"

namespace simprec::gemm {

class SplitKStrategy;

enum class Scaling : uint8_t { kNone, kTensor, kRow };
enum class BlockScales : uint8_t { kNone, kMxfp8, kNvfp4 };
// Elements of K per scale, and the scales' format: MXFP8 32, E8M0 (OCP MX v1.0); NVFP4 16, e4m3.
int block_length(BlockScales b);
Format block_scale_format(BlockScales b);
enum class ScaleOrder : uint8_t { kAlpha, kBThenA };

struct GemmNumerics {
  std::string preset;
  const TensorCoreModel* instruction = nullptr;
  int promote_every = 0;  // elements of K; 0: never (the chain runs over the whole piece)
  const SplitKStrategy* split_k = nullptr;
  int split_value = 0;  // pieces:N's N, length:L's L
  int tile_m = 64, tile_n = 64;
  int cluster = 1;
  // The whole GEMM's M and N that cublas-sm90 weighs; 0: the run's own (a run on some rows of a
  // larger GEMM gives the larger one's).
  int64_t problem_m = 0, problem_n = 0;
  BlockScales block_scales = BlockScales::kNone;
  Scaling scaling = Scaling::kNone;
  ScaleOrder scale_order = ScaleOrder::kAlpha;
  Format out = formats::fp32;
};

// One key of the spec: its doc, what its values look like, and how it is read and written.
struct GemmKey {
  std::string_view key;
  std::string_view doc;                                      // one line
  std::string_view syntax;                                   // the accepted values
  std::function<void(GemmNumerics&, std::string_view)> set;  // throws std::invalid_argument
  std::function<std::string(const GemmNumerics&)> get;
};
std::span<const GemmKey> gemm_keys();

struct GemmPreset {
  std::string_view name;
  std::string_view doc;          // one line: the kernel it models and the evidence
  std::string_view assignments;  // KEY=VALUE,... over the defaults of GemmNumerics
};
std::span<const GemmPreset> gemm_presets();
// The preset's numerics; throws std::invalid_argument naming it, with a did-you-mean.
GemmNumerics make_gemm_preset(std::string_view name);

// Parses a spec and checks it (check_gemm_numerics). Throws std::invalid_argument naming the
// offending item and what was expected.
GemmNumerics parse_gemm_numerics(std::string_view text);
// What every run refuses, whatever its operands: an instruction that does not accumulate in fp32.
void check_gemm_numerics(const GemmNumerics& numerics);
// The preset, then each key whose value differs from the preset's, in gemm_keys() order. Reads
// back to the same numerics.
std::string canonical_gemm_numerics(const GemmNumerics& numerics);

// The Markdown reference: presets (with their canonical text), keys, split-K strategies.
std::string gemm_reference_markdown();

}  // namespace simprec::gemm
