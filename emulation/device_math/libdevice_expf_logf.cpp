#include "emulation/device_math/libdevice_expf_logf.hpp"

#include <algorithm>
#include <bit>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>

#include "emulation/device_math/sm90_mufu.hpp"

namespace simprec::device_math {
namespace {

float f32(uint32_t bits) {
  return std::bit_cast<float>(bits);
}

// fma.rm.f32 of t * 252 + (1.5 * 2^23 + 1) for t in [0, 1]: t * 252 is exact in double and the
// sum lies in [2^23, 2^24), where fp32's spacing is 1, so rounding toward minus infinity is the
// floor.
float fma_rm_magic(float t) {
  return static_cast<float>(std::floor(static_cast<double>(t) * 252.0 + 12582913.0));
}

}  // namespace

float libdevice_expf(float a) {
  // cvt.sat.f32.f32: clamped to [0, 1], NaN to 0.
  const float t = std::fma(a, f32(0x3bbb989d), 0.5f);  // a * log2(e)/252 + 1/2
  const float sat = std::isnan(t) ? 0.0f : std::clamp(t, 0.0f, 1.0f);
  const float j = fma_rm_magic(sat);               // 12582912 + k, k in [1, 253]
  const float shift = j + f32(0xcb40007f);         // k - 127, exact
  float q = std::fma(a, f32(0x3fb8aa3b), -shift);  // a * log2(e)_hi - (k - 127)
  q = std::fma(a, f32(0x32a57060), q);             // + a * log2(e)_lo
  const float scale = std::bit_cast<float>(std::bit_cast<uint32_t>(j) << 23);  // 2^(k - 127)
  return sm90_ex2_approx_ftz(q) * scale;
}

float libdevice_logf(float a) {
  const bool subnormal = a < 0x1p-126f;
  const float m = subnormal ? a * 0x1p23f : a;
  const float bias = subnormal ? -23.0f : 0.0f;
  const uint32_t bits = std::bit_cast<uint32_t>(m);
  const auto exponent_bits = static_cast<int32_t>((bits - 0x3f2aaaabu) & 0xff800000u);
  const float mantissa = std::bit_cast<float>(bits - static_cast<uint32_t>(exponent_bits));
  const float e = std::fma(static_cast<float>(exponent_bits), 0x1p-23f, bias);
  const float f = mantissa - 1.0f;
  float p = std::fma(f32(0xbe055027), f, f32(0x3e1039f6));
  for (const uint32_t c :
       {0xbdf8cdccu, 0x3e0f2955u, 0xbe2ad8b9u, 0x3e4ced0bu, 0xbe7fff22u, 0x3eaaaa78u, 0xbf000000u})
    p = std::fma(p, f, f32(c));
  p = f * p;
  p = std::fma(p, f, f);
  float r = std::fma(e, f32(0x3f317218), p);  // + e * ln(2)
  // Infinity, NaN and negative arguments (bit patterns from 0x7f800000 up): fma(m, inf, inf).
  if (!(bits < 0x7f800000u)) {
    const float inf = std::numeric_limits<float>::infinity();
    r = std::fma(m, inf, inf);
  }
  if (m == 0.0f) r = -std::numeric_limits<float>::infinity();
  return r;
}

}  // namespace simprec::device_math
