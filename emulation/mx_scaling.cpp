#include "emulation/mx_scaling.hpp"

#include <algorithm>
#include <cmath>

#include "emulation/round.hpp"
#include "emulation/unrounded.hpp"

namespace simprec {
namespace {

// floor(log2(|x|)) of a finite nonzero double, exactly (from its bits, no libm).
int64_t floor_log2(double x) {
  const Unrounded u = unrounded_from_double(x);
  return u.exponent + highest_bit(u.significand);
}

Format saturating(Format element) {
  element.overflow = OverflowPolicy::kSaturate;
  return element;
}

}  // namespace

const std::vector<MxScheme>& mx_schemes() {
  static const std::vector<MxScheme> schemes = {
      {"mxfp8_e4m3", saturating(formats::e4m3fn)},
      {"mxfp8_e5m2", saturating(formats::e5m2)},
      {"mxfp6_e2m3", formats::fp6_e2m3},
      {"mxfp6_e3m2", formats::fp6_e3m2},
      {"mxfp4", formats::fp4_e2m1},
  };
  return schemes;
}

uint64_t mx_shared_scale(std::span<const double> block, const Format& element) {
  const Format& scale = formats::e8m0;
  double amax = 0;
  for (double v : block) {
    if (!std::isfinite(v)) return scale.nan_bits();
    amax = std::max(amax, std::fabs(v));
  }
  if (amax == 0) return 0;
  const int64_t shared_exponent = floor_log2(amax) - element.emax();
  if (shared_exponent > scale.emax()) return scale.nan_bits();
  return static_cast<uint64_t>(std::max<int64_t>(shared_exponent, scale.emin()) - scale.emin());
}

BlockScaled mx_quantize(std::span<const double> values, const BlockLayout& layout, Format element,
                        const ElementRounding& rounding) {
  element = saturating(element);
  if (auto problem = element.validate(); !problem.empty()) {
    throw std::invalid_argument("MX element format " + element.name() + ": " + problem);
  }
  if (element.width() > 8 || !element.has_sign()) {
    throw std::invalid_argument("MX element format " + element.name() +
                                ": expected a signed format of at most 8 bits");
  }
  BlockScaled out{layout, element, formats::e8m0, {}, {}, 1.0};
  out.elements.assign(values.size(), 0);
  out.scales.assign(layout.block_count(values.size()), 0);
  RoundingContext ctx(element, rounding.rounding, rounding.random);
  for (size_t row_start = 0; row_start < values.size(); row_start += layout.row_length) {
    for (size_t start = 0; start < layout.row_length; start += layout.block_size) {
      const size_t begin = row_start + start;
      const size_t n = std::min(layout.block_size, layout.row_length - start);
      const uint64_t scale_bits = mx_shared_scale(values.subspan(begin, n), element);
      out.scales[layout.block_of(begin)] = static_cast<uint8_t>(scale_bits);
      if (formats::e8m0.is_nan_bits(scale_bits)) continue;
      const int64_t shared_exponent = static_cast<int64_t>(scale_bits) + formats::e8m0.emin();
      for (size_t i = begin; i < begin + n; ++i) {
        // V / X exactly: X is a power of two, so only the exponent changes.
        Unrounded scaled = unrounded_from_double(values[i]);
        scaled.exponent -= shared_exponent;
        ctx.set_next_index(i);
        out.elements[i] = static_cast<uint8_t>(ctx.round(scaled));
      }
    }
  }
  return out;
}

}  // namespace simprec
