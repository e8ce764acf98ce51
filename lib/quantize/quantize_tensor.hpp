// A tensor quantized into a block-scaled format (MX or NVFP4, docs/block_scaling.md) as
// `simprec quantize` and the Python package's simprec.quantize both do it: the scheme by name,
// blocks along the last axis, and what the outputs hold (element encodings, block scales,
// NVFP4's tensor scale, dequantized values).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "emulation/block_scaling.hpp"
#include "lib/npy/npy.hpp"

namespace simprec::quantize {

struct QuantizeOptions {
  std::string scheme;  // an MX scheme (mx_schemes()) or "nvfp4"
  Rounding rounding;   // of the elements; value i takes random index i of stream 0 under seed
  uint64_t seed = 0;
  int64_t block_size = 0;  // values per block; 0: the scheme's own (32 for MX, 16 for NVFP4)
};

inline constexpr int64_t kMaxBlockSize = int64_t{1} << 30;

struct QuantizedTensor {
  BlockScaled blocks;
  std::vector<int64_t> shape;        // the input's
  std::vector<int64_t> scale_shape;  // the input's with the last axis -> blocks per row
  std::vector<double> dequantized;   // element x block scale x tensor scale, exact
  bool nvfp4 = false;                // blocks.tensor_scale is NVFP4's fp32 decode scale
};

// "mxfp8_e4m3 mxfp8_e5m2 mxfp6_e2m3 mxfp6_e3m2 mxfp4 nvfp4".
std::string scheme_names();
bool is_scheme(std::string_view name);

// Throws std::invalid_argument naming the offending value and what was expected: an unknown
// scheme, a block size outside [1, 2^30], a dtype the scheme does not take (MX: float32 or
// float64; NVFP4: float32), a tensor that is not whole rows.
QuantizedTensor quantize_tensor(const NpyArray& array, const QuantizeOptions& options);

}  // namespace simprec::quantize
