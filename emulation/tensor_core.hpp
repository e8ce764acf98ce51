// Tensor-core arithmetic as a parametrised block fused multiply-add (Fasi et al. 2021; Khattak &
// Mikaitis 2025): the products of a block of k terms are exact, the block's products and the
// accumulator C are aligned to one exponent, bits below a window are dropped, the aligned terms
// are added exactly and the sum is rounded once into the accumulator format. Longer K chains
// blocks. Computed with integers only; docs/tensor_cores.md lists the presets.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "emulation/accumulation.hpp"
#include "emulation/format.hpp"
#include "emulation/rounding_mode.hpp"

namespace simprec {

// Which exponent a term brings to the alignment (the block aligns to the largest).
enum class AlignmentExponent : uint8_t {
  kOperandSum,  // e(a) + e(b): a product's significand in [1, 4) is not renormalised first
  kProduct,     // the exact product's exponent, floor(log2 |a*b|)
};

// How the bits of an aligned term below the window are dropped.
enum class TermTruncation : uint8_t {
  kTowardZero,  // of the magnitude (sign-magnitude alignment)
  kDown,        // toward minus infinity (two's complement alignment)
};

// How the K products of one instruction are split into blocks.
enum class KGrouping : uint8_t {
  kContiguous,  // block b holds k = b*block_size .. (b+1)*block_size - 1
  kInterleaved  // block b holds k with (k / 2) % blocks == b: pairs dealt round-robin
};

// Where the accumulator C enters an instruction.
enum class CEntry : uint8_t {
  kFirstBlock,  // aligned with the first block's products, like one more term
  // The blocks start from +0 and C is added to their result by one IEEE addition rounded to
  // nearest in the accumulator format: how ptxas lowers mma.sync on fp8 for sm_90 (two
  // fp16 HMMAs, then FADD/HADD).
  kSeparateAddition,
};

struct TensorCoreModel {
  std::string name;         // registry name, "tc:sm90-mma-bf16"
  std::string instruction;  // PTX instruction
  std::string gpu;          // "H100 (sm_90)"
  // A's and B's formats: the same but for FP8 instructions that take one e4m3 and one e5m2
  // operand (PTX's wgmma ...e5m2.e4m3, mma.sync ...e5m2.e4m3).
  Format input_a;
  Format input_b;
  Format accumulator;         // C and D: fp32 or fp16
  int m = 16, n = 8, k = 16;  // instruction shape
  // One block: this many products are aligned together with the running accumulator.
  int block_size = 16;
  // Bits kept below the alignment exponent: the accumulator's fraction bits plus the extra
  // alignment bits (fp32 + 2 = 25); may be fewer than the accumulator's (fp8 wgmma: 13).
  int kept_fraction_bits = 25;
  AlignmentExponent alignment = AlignmentExponent::kOperandSum;
  TermTruncation truncation = TermTruncation::kTowardZero;
  KGrouping grouping = KGrouping::kContiguous;
  CEntry c_entry = CEntry::kFirstBlock;
  // Inputs converted (exactly) to this format before the blocks, as when fp8 runs through
  // fp16 HMMAs: it changes which exponent an fp8 subnormal brings to the alignment. Empty:
  // the datapath takes the input format itself.
  std::optional<Format> datapath_input;
  // Rounding of each block's exact (truncated-term) sum into the accumulator format, and the
  // significand bits it keeps (the accumulator's precision unless narrower).
  RoundingMode block_rounding = RoundingMode::kTowardZero;
  int block_result_precision = 24;
  // The sign of an exact zero result: IEEE 754's rule (-0 only when every term, C included, is
  // -0) or always +0, as measured for mma.sync with fp32 accumulators on the H100 (a -0 C plus
  // -0 products gives +0).
  bool zero_is_always_positive = false;
  // Whether the hardware was checked bit for bit (tests/tensor_core_hw_test.cpp) or the preset
  // comes from the literature.
  bool verified = false;
  std::string evidence;

  int blocks_per_instruction() const { return k / block_size; }
  bool same_inputs() const { return input_a == input_b; }
  // "bf16", or "e5m2.e4m3" (A's, then B's) when they differ.
  std::string input_name() const {
    return same_inputs() ? input_a.name() : input_a.name() + "." + input_b.name();
  }
};

// All presets, sm_70 to sm_100; names start with "tc:".
const std::vector<TensorCoreModel>& tensor_core_models();
// Throws std::invalid_argument naming the model and listing the known ones.
const TensorCoreModel& tensor_core_model(std::string_view name);

// d = c + sum_k a[k*a_stride] * b[k*b_stride] as the model's instruction chain computes it, for
// any length (chained instructions of model.k, the last padded with zeros). a and b are
// encodings of model.input_a and model.input_b, c and the result encodings of
// model.accumulator. Integers only.
uint32_t tensor_core_dot(const TensorCoreModel& model, const uint16_t* a, std::ptrdiff_t a_stride,
                         const uint16_t* b, std::ptrdiff_t b_stride, int length, uint32_t c);

// D = A*B + C for row-major A (M x K), B (K x N), C and D (M x N), encodings as above. The fast
// path (bf16, fp16 or fp8 inputs, fp32 accumulator) vectorises over N; results equal
// tensor_core_dot's.
// threads = 0: resolve_threads(0) (parallel.hpp).
std::vector<uint32_t> tensor_core_gemm(const TensorCoreModel& model, std::span<const uint16_t> a,
                                       std::span<const uint16_t> b, std::span<const uint32_t> c,
                                       int m, int n, int k, unsigned threads = 1);

// Whether tensor_core_gemm computes the model with its vectorised kernels (otherwise the
// integer reference computes every output; both give the same bits).
bool tensor_core_gemm_fast_path(const TensorCoreModel& model);

// The same on values held as floats, in place: c (m x n, row stride ldc) becomes A*B + c, where
// a(i, kk) = a[i * a_row + kk * a_col] and b(kk, j) = b[kk * ldb + j] are values of
// model.input_a and model.input_b and the model accumulates in fp32 (std::invalid_argument
// otherwise, naming the value). One thread; what attention's tiles call, without encoding and
// decoding every operand.
void tensor_core_gemm_in_place(const TensorCoreModel& model, int m, int n, int k, const float* a,
                               std::ptrdiff_t a_row, std::ptrdiff_t a_col, const float* b,
                               std::ptrdiff_t ldb, float* c, std::ptrdiff_t ldc);

// One operand of tensor_core_gemm_in_place laid out for its fast kernels once, for products that
// read it again (attention multiplies each tile of Q, K, V and dO many times): a copy, not a
// view. Packing checks the values as tensor_core_gemm_in_place does (std::invalid_argument
// naming the first that is not a value of the operand's input format, as "A value" or "B value").
// One thread at a time: a product may fill the operand's encodings for the reference on first need.
class TensorCoreOperand {
 public:
  // The left operand A (m x k), a(i, kk) = a[i * a_row + kk * a_col].
  void pack_left(const TensorCoreModel& model, int m, int k, const float* a, std::ptrdiff_t a_row,
                 std::ptrdiff_t a_col);
  // The right operand B (k x n), b(kk, j) = b[kk * ldb + j].
  void pack_right(const TensorCoreModel& model, int k, int n, const float* b, std::ptrdiff_t ldb);

 private:
  friend void tensor_core_gemm_in_place(const TensorCoreOperand& a, const TensorCoreOperand& b,
                                        float* c, std::ptrdiff_t ldc);
  // Checks the model and the sizes and records them; fast_ and kp_ follow from them.
  void start(const TensorCoreModel& model, bool left, int rows, int cols);
  // Encodes the values (x(i, j) = at(i, j)) into bits_, checking each.
  void encode_from(const std::function<float(int, int)>& at);
  // The encodings of the values, row-major.
  const std::vector<uint16_t>& encodings() const;

  const TensorCoreModel* model_ = nullptr;
  bool left_ = true;
  int rows_ = 0, cols_ = 0;  // m x k (left) or k x n (right)
  // Laid out for the kernels (tensor_core_gemm_kernels.hpp's Packed, k padded to kp_), or else
  // (a model or shape the kernels do not take) kept as encodings only.
  bool fast_ = false;
  int kp_ = 0;
  std::vector<float> values_;
  std::vector<int32_t> a_exp_;
  std::vector<int16_t> b_exp_;
  // Rows (left) or columns (right, bit j % 32 of word j / 32) holding a NaN or an infinity.
  std::vector<uint8_t> row_special_;
  std::vector<uint32_t> col_special_;
  bool any_special_ = false;
  // Encodings, filled when packing (values whose low half is not zero: NaN payloads, or another
  // model than the kernels') or on first need by the reference.
  mutable std::vector<uint16_t> bits_;
  mutable bool encoded_ = false;
};

// c (m x n, row stride ldc) becomes A*B + c for operands packed with the same model, A left
// (m x k) and B right (k x n); std::invalid_argument when they do not fit together. Equal to
// tensor_core_gemm_in_place on the unpacked operands, bit for bit.
void tensor_core_gemm_in_place(const TensorCoreOperand& a, const TensorCoreOperand& b, float* c,
                               std::ptrdiff_t ldc);

// A preset as an accumulation model: dot(a, b, c) takes a and b exactly representable in A's
// and B's input formats and c in the accumulator format (std::invalid_argument otherwise), computes
// the instruction chain over the whole length and rounds the result into ctx's format (no change
// when that is the accumulator format). sum(terms, init) multiplies by ones.
std::unique_ptr<Accumulation> make_tensor_core_accumulation(const TensorCoreModel& model);

// Every preset as (name, maker): what the accumulation registry adds when it is built
// (emulation/accumulation.cpp asks for it, so no static initialiser is needed).
std::vector<std::pair<std::string, std::function<std::unique_ptr<Accumulation>()>>>
tensor_core_accumulations();
// Adds every preset to the registry again (e.g. after a test replaced one); harmless to repeat.
void register_tensor_core_models();

}  // namespace simprec
