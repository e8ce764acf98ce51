// MX block scaling as the OCP Microscaling Formats specification v1.0 defines it (§6.3): blocks
// of 32 values share an E8M0 scale X = 2^(floor(log2(amax)) - emax_elem), amax the block's
// largest magnitude and emax_elem the exponent of the element format's largest normal; each
// value is stored as V / X rounded into the element format, normal values beyond its largest
// one clamped to it with their sign. docs/block_scaling.md has the rules and their sources.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "emulation/block_scaling.hpp"

namespace simprec {

inline constexpr size_t kMxBlockSize = 32;

// The concrete MX formats of the spec's Table 1.
struct MxScheme {
  std::string_view name;  // "mxfp8_e4m3", ...
  Format element;
};
const std::vector<MxScheme>& mx_schemes();

// The E8M0 encoding of one block's shared scale. Beyond the spec, which assumes finite inputs:
// a block holding NaN or infinity, or whose scale would exceed 2^127 (only float64 input can
// get there), has the NaN scale (as the OCP reference code, microsoft/microxcaling, gives); an
// all-zero block, or one whose scale would be below 2^-127, has the smallest scale 2^-127.
uint64_t mx_shared_scale(std::span<const double> block, const Format& element);

// Quantizes `values` (rows of layout.row_length) with the element format `element` (any
// signed format up to 8 bits; its overflow policy is replaced by the spec's saturation).
// Elements of a NaN-scaled block are +0. Throws std::invalid_argument for a bad layout or
// element format.
BlockScaled mx_quantize(std::span<const double> values, const BlockLayout& layout, Format element,
                        const ElementRounding& rounding);

}  // namespace simprec
