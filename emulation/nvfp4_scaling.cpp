#include "emulation/nvfp4_scaling.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "emulation/arithmetic.hpp"
#include "emulation/round.hpp"

namespace simprec {
namespace {

// fp32 arithmetic through the emulation's correctly rounded operations (round to nearest
// even), so that no step depends on the host's floating-point environment.
struct Fp32 {
  RoundingContext ctx{formats::fp32};
  static uint64_t bits(float x) { return std::bit_cast<uint32_t>(x); }
  static float value(uint64_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b)); }
  float mul(float a, float b) { return value(simprec::mul(ctx, bits(a), bits(b))); }
  float div(float a, float b) { return value(simprec::div(ctx, bits(a), bits(b))); }
};

constexpr float kFloatMax = 0x1.fffffep127f;
const Format kBlockScale = [] {
  Format f = formats::e4m3fn;
  f.overflow = OverflowPolicy::kSaturate;  // cvt.rn.satfinite.e4m3x2.f32
  return f;
}();

}  // namespace

float nvfp4_tensor_encode_scale(float amax) {
  if (amax == 0) return 1.0f;
  Fp32 fp32;
  return std::min(fp32.div(448.0f * 6.0f, amax), kFloatMax);
}

BlockScaled nvfp4_quantize(std::span<const float> values, const BlockLayout& layout,
                           const ElementRounding& rounding) {
  BlockScaled out{layout, formats::fp4_e2m1, kBlockScale, {}, {}, 1.0};
  out.elements.assign(values.size(), 0);
  out.scales.assign(layout.block_count(values.size()), 0);
  float tensor_amax = 0;
  for (float v : values) {
    if (std::isfinite(v)) tensor_amax = std::max(tensor_amax, std::fabs(v));
  }
  Fp32 fp32;
  const float s_enc = nvfp4_tensor_encode_scale(tensor_amax);
  const float s_dec = fp32.div(1.0f, s_enc);
  out.tensor_scale = s_dec;
  RoundingContext element(formats::fp4_e2m1, rounding.rounding, rounding.random);
  RoundingContext to_scale(kBlockScale);
  for (size_t row_start = 0; row_start < values.size(); row_start += layout.row_length) {
    for (size_t start = 0; start < layout.row_length; start += layout.block_size) {
      const size_t begin = row_start + start;
      const size_t n = std::min(layout.block_size, layout.row_length - start);
      float block_amax = 0;
      bool finite = true;
      for (size_t i = begin; i < begin + n; ++i) {
        finite = finite && std::isfinite(values[i]);
        block_amax = std::max(block_amax, std::fabs(values[i]));
      }
      uint8_t& scale = out.scales[layout.block_of(begin)];
      if (!finite) {
        scale = static_cast<uint8_t>(kBlockScale.nan_bits());
        continue;
      }
      scale = static_cast<uint8_t>(
          to_scale.round(static_cast<double>(fp32.mul(fp32.div(block_amax, 6.0f), s_enc))));
      const auto s_b = static_cast<float>(decode(kBlockScale, scale));
      const float s_enc_b = std::min(fp32.div(1.0f, fp32.mul(s_b, s_dec)), kFloatMax);
      for (size_t i = begin; i < begin + n; ++i) {
        element.set_next_index(i);
        out.elements[i] =
            static_cast<uint8_t>(element.round(static_cast<double>(fp32.mul(values[i], s_enc_b))));
      }
    }
  }
  return out;
}

}  // namespace simprec
