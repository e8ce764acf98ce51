#include "lib/gemm/gemm_arrays.hpp"

#include <climits>
#include <span>
#include <stdexcept>
#include <string>

#include "emulation/round.hpp"
#include "lib/limits/checked_arithmetic.hpp"
#include "lib/limits/memory_bound.hpp"
#include "lib/mma/batched_mma.hpp"

namespace simprec::gemm {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::vector<uint16_t> narrow(const std::vector<uint32_t>& bits) {
  return std::vector<uint16_t>(bits.begin(), bits.end());
}

std::span<const float> floats(const std::optional<NpyArray>& array, const char* what) {
  if (!array) return {};
  if (array->type != NpyType::kFloat32) {
    throw std::invalid_argument(std::string(what) + ": dtype " + npy_type_name(array->type) +
                                "; expected float32 values");
  }
  return array->as<float>();
}

// Block scales as float values, from encodings of `format` or float32 values of it, checked to
// be rows x cols.
std::vector<float> block_scales(const std::optional<NpyArray>& array, const Format& format,
                                const char* what, int64_t rows, int64_t cols) {
  if (!array) return {};
  if (array->shape != std::vector<int64_t>{rows, cols}) {
    throw std::invalid_argument(std::string(what) + " " + shape_text(array->shape) +
                                ": expected (" + std::to_string(rows) + ", " +
                                std::to_string(cols) + ")");
  }
  std::vector<float> values;
  for (const uint32_t bits : encodings(*array, format, what))
    values.push_back(static_cast<float>(decode(format, bits)));
  return values;
}

}  // namespace

NpyArray gemm_arrays(const GemmNumerics& numerics, const NpyArray& a, const NpyArray& b,
                     const GemmArrayScales& scales, unsigned threads) {
  if (a.shape.size() != 2 || b.shape.size() != 2 || a.shape[1] != b.shape[0]) {
    throw std::invalid_argument("A " + shape_text(a.shape) + " and B " + shape_text(b.shape) +
                                ": expected M x K and K x N");
  }
  const int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
  if (m < 1 || n < 1 || k < 1 || m > INT_MAX || n > INT_MAX || k > INT_MAX) {
    throw std::invalid_argument("A " + shape_text(a.shape) + " and B " + shape_text(b.shape) +
                                ": M, N and K must each be in [1, 2^31)");
  }
  // D's size is checked, and the memory of the run (D, a piece's and a chain's M x N results,
  // their encodings) estimated, before anything is allocated: small A and B can ask for a D of
  // terabytes.
  const std::vector<int64_t> d_shape = {m, n};
  limits::MemoryEstimate estimate;
  estimate.add(limits::checked_product(std::span<const int64_t>(d_shape), "D (M x N)"),
               6 * sizeof(float));
  limits::check_memory(estimate, limits::memory_limit(""), "D " + shape_text(d_shape));
  const TensorCoreModel& tc = *numerics.instruction;
  const std::vector<uint16_t> a_bits = narrow(encodings(a, tc.input_a, "A"));
  const std::vector<uint16_t> b_bits = narrow(encodings(b, tc.input_b, "B"));
  GemmOperands o;
  o.m = static_cast<int>(m);
  o.n = static_cast<int>(n);
  o.k = static_cast<int>(k);
  o.a = a_bits;
  o.b = b_bits;
  o.scale_a = floats(scales.scale_a, "scale_a");
  o.scale_b = floats(scales.scale_b, "scale_b");
  o.bias = floats(scales.bias, "bias");
  const int block = block_length(numerics.block_scales);
  if (!block && (scales.block_scale_a || scales.block_scale_b)) {
    throw std::invalid_argument(
        std::string(scales.block_scale_a ? "block_scale_a" : "block_scale_b") +
        " given, but the numerics have block_scales=none");
  }
  const int64_t blocks = block ? (k + block - 1) / block : 0;
  const Format scale_format = block_scale_format(numerics.block_scales);
  const std::vector<float> block_a =
      block_scales(scales.block_scale_a, scale_format, "block_scale_a", m, blocks);
  const std::vector<float> block_b =
      block_scales(scales.block_scale_b, scale_format, "block_scale_b", blocks, n);
  o.block_scale_a = block_a;
  o.block_scale_b = block_b;
  const std::vector<float> d = run_gemm(numerics, o, threads);
  return make_npy<float>({m, n}, d);
}

}  // namespace simprec::gemm
