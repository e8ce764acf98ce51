#include "emulation/device_math/numpy_float32.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace simprec::device_math {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

float nan_of_sign(bool negative) {
  return std::bit_cast<float>(negative ? 0xffc00000u : 0x7fc00000u);
}

}  // namespace

float numpy_expf(float x) {
  if (std::isnan(x)) return nan_of_sign(false);
  if (x >= 88.72283935546875f) return kInf;
  if (x <= -103.97208404541015625f) return 0.0f;
  // The nearest integer to x log2(e): exact while |q| < 2^22, which the range above keeps.
  float q = x * 0x1.715476p+0f;
  q = (q + 0x1.8p23f) - 0x1.8p23f;
  // Cody and Waite's reduction, r = x - q ln 2 with ln 2 in two parts.
  float r = std::fma(q, -6.93145752e-1f, x);
  r = std::fma(q, -1.42860677e-6f, r);
  float num = std::fma(5.082762527590693718096e-04f, r, 6.757896990527504603057e-03f);
  num = std::fma(num, r, 5.114512081637298353406e-02f);
  num = std::fma(num, r, 2.473615434895520810817e-01f);
  num = std::fma(num, r, 7.257664613233124478488e-01f);
  num = std::fma(num, r, 9.999999999980870924916e-01f);
  float den = std::fma(2.159509375685829852307e-02f, r, -2.742335390411667452936e-01f);
  den = std::fma(den, r, 1.0f);
  const float p = num / den;
  // p 2^q: exact in double, then one rounding to fp32 (AVX-512's scalef, and AVX2's exponent
  // addition followed by a division by a power of two where the result is subnormal).
  return static_cast<float>(std::ldexp(static_cast<double>(p), static_cast<int>(q)));
}

float numpy_logf(float x) {
  if (std::isnan(x)) return nan_of_sign(false);
  if (x < 0.0f) return nan_of_sign(true);
  if (x == 0.0f) return -kInf;
  if (x == kInf) return kInf;
  // x = 2^e m with m in [1/2, 1) (subnormal x scaled by 2^100 first, which is exact).
  const bool subnormal = x < 0x1p-126f;
  const uint32_t bits = std::bit_cast<uint32_t>(subnormal ? x * 0x1p100f : x);
  float e =
      static_cast<float>(static_cast<int32_t>(bits >> 23) - 126) - (subnormal ? 100.0f : 0.0f);
  float m = std::bit_cast<float>((bits & 0x7fffffu) | (126u << 23));
  if (m <= 0.707106781186547524400844362104849039f) {
    m = m + m;
    e = e - 1.0f;
  }
  const float f = m - 1.0f;
  float num = std::fma(2.589979117907922693523e-02f, f, 3.808837741388407920751e-01f);
  num = std::fma(num, f, 1.480000633576506585156e+00f);
  num = std::fma(num, f, 2.112677543073053063722e+00f);
  num = std::fma(num, f, 9.999999999999998702752e-01f);
  num = std::fma(num, f, 0.0f);
  float den = std::fma(5.875095403124574342950e-03f, f, 1.546476374983906719538e-01f);
  den = std::fma(den, f, 9.864942958519418960339e-01f);
  den = std::fma(den, f, 2.453006071784736363091e+00f);
  den = std::fma(den, f, 2.612677543073109236779e+00f);
  den = std::fma(den, f, 1.0f);
  return std::fma(e, 0.693147180559945309417232121458176568f, num / den);
}

}  // namespace simprec::device_math
