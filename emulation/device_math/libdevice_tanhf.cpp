#include "emulation/device_math/libdevice_tanhf.hpp"

#include <bit>
#include <cmath>
#include <cstdint>

#include "emulation/device_math/sm90_mufu.hpp"

namespace simprec::device_math {
namespace {

float f32(uint32_t bits) {
  return std::bit_cast<float>(bits);
}

float tanh_of(float x) {
  const float a = std::fabs(x);
  if (a >= f32(0x3F19999Au)) {  // 0.6
    const float e = sm90_ex2_approx_ftz(a * f32(0x4038AA3Bu));
    const float r = sm90_rcp_approx_ftz(e + 1.0f);
    const float big = a >= f32(0x41102CB4u) ? 1.0f : std::fma(r, -2.0f, 1.0f);
    return std::copysign(big, x);
  }
  const float x2 = x * x;
  float p = std::fma(f32(0x3C80F082u), x2, f32(0xBD563CAEu));
  p = std::fma(p, x2, f32(0x3E085941u));
  p = std::fma(p, x2, f32(0xBEAAA9EDu));
  p = std::fma(p, x2, 0.0f);
  return std::fma(p, x, x);
}

}  // namespace

float libdevice_tanhf(float x) {
  if (std::isnan(x)) return x;
  return tanh_of(x);
}

float triton_tanhf(float x) {
  if (std::isnan(x)) return x;
  if (std::fabs(x) < 0x1p-126f) return std::copysign(0.0f, x);
  return tanh_of(x);
}

}  // namespace simprec::device_math
