#include "lib/quantize/quantize_tensor.hpp"

#include <stdexcept>

#include "emulation/excerpt.hpp"
#include "emulation/mx_scaling.hpp"
#include "emulation/nvfp4_scaling.hpp"

namespace simprec::quantize {
namespace {

const MxScheme* find_mx_scheme(std::string_view name) {
  for (const MxScheme& s : mx_schemes()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

}  // namespace

std::string scheme_names() {
  std::string names;
  for (const MxScheme& s : mx_schemes()) names += std::string(s.name) + " ";
  return names + "nvfp4";
}

bool is_scheme(std::string_view name) {
  return name == "nvfp4" || find_mx_scheme(name);
}

QuantizedTensor quantize_tensor(const NpyArray& array, const QuantizeOptions& options) {
  const MxScheme* mx = find_mx_scheme(options.scheme);
  if (!mx && options.scheme != "nvfp4") {
    throw std::invalid_argument("scheme '" + excerpt(options.scheme) + "': expected one of " +
                                scheme_names());
  }
  if (options.block_size < 0 || options.block_size > kMaxBlockSize) {
    throw std::invalid_argument("block size " + std::to_string(options.block_size) +
                                ": expected 1..2^30");
  }
  if (array.type != NpyType::kFloat32 && (mx == nullptr || array.type != NpyType::kFloat64)) {
    throw std::invalid_argument(
        "dtype " + npy_type_name(array.type) + " is not accepted (expected " +
        (mx ? "float32 or float64" : "float32: NVFP4 computes in fp32") + ")");
  }
  BlockLayout layout;
  layout.row_length = array.shape.empty() ? 1 : static_cast<size_t>(array.shape.back());
  layout.block_size = options.block_size > 0 ? static_cast<size_t>(options.block_size)
                      : mx                   ? kMxBlockSize
                                             : kNvfp4BlockSize;
  const ElementRounding rounding{options.rounding, RandomStream{options.seed, 0}};
  QuantizedTensor out;
  out.nvfp4 = mx == nullptr;
  out.blocks = mx ? mx_quantize(array.to_doubles(), layout, mx->element, rounding)
                  : nvfp4_quantize(array.as<float>(), layout, rounding);
  out.shape = array.shape;
  out.scale_shape = array.shape;
  if (out.scale_shape.empty()) out.scale_shape.push_back(1);
  out.scale_shape.back() = static_cast<int64_t>(layout.blocks_per_row());
  out.dequantized.resize(out.blocks.elements.size());
  for (size_t i = 0; i < out.dequantized.size(); ++i) {
    out.dequantized[i] = out.blocks.dequantized(i);
  }
  return out;
}

}  // namespace simprec::quantize
