#include "emulation/device_math/libdevice_log2f.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>

namespace simprec::device_math {
namespace {

float f32(uint32_t bits) {
  return std::bit_cast<float>(bits);
}

// fma.rn.ftz.f32: subnormal operands and results are flushed to zero of their sign.
float ftz(float x) {
  return std::fabs(x) < 0x1p-126f ? std::copysign(0.0f, x) : x;
}
float fma_ftz(float a, float b, float c) {
  return ftz(std::fma(ftz(a), ftz(b), ftz(c)));
}

}  // namespace

float libdevice_log2f(float a) {
  // Subnormal arguments are scaled by 2^23 first, with -23 added back.
  const bool subnormal = a < 0x1p-126f;
  const float x = subnormal ? a * 0x1p23f : a;
  const float exponent_bias = subnormal ? -23.0f : 0.0f;
  const uint32_t xi = std::bit_cast<uint32_t>(x);
  const int32_t t = static_cast<int32_t>((xi - 0x3f3504f3u) & 0xff800000u);
  const float m = std::bit_cast<float>(xi - static_cast<uint32_t>(t));
  const float e = fma_ftz(static_cast<float>(t), 0x1p-23f, exponent_bias);
  const float f = m - 1.0f;
  float p = f32(0x3dc6b27f);
  for (const uint32_t c : {0xbe2c7f30u, 0x3e2fcf2au, 0xbe374e43u, 0x3e520bf4u, 0xbe763c8bu,
                           0x3e93bf99u, 0xbeb8aa49u, 0x3ef6384au, 0xbf38aa3bu})
    p = fma_ftz(p, f, f32(c));
  const float q = f * (f * p);
  const float r = fma_ftz(f, f32(0x3fb8aa3b), q);
  float result = e + r;
  // Infinity, NaN and negative arguments (bit patterns from 0x7f800000 up): fma(x, inf, inf).
  const float inf = std::numeric_limits<float>::infinity();
  if (!(xi < 0x7f800000u)) result = std::fma(x, inf, inf);
  // +-0 (after the scaling): -inf, chosen last (the PTX's setp.eq.f32 x, 0 and selp).
  return x == 0.0f ? -inf : result;
}

}  // namespace simprec::device_math
