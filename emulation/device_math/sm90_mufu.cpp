#include "emulation/device_math/sm90_mufu.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "emulation/device_math/measured_table.hpp"

namespace simprec::device_math {
namespace {

constexpr int kFractionBits = 23;
constexpr uint32_t kEntries = uint32_t{1} << kFractionBits;

// A measured table, decoded on first use (thread-safe: one static per table):
//   kSm90Ex2Negative  ex2(-1 + j * 2^-23), results in [0.5, 1)
//   kSm90Ex2Positive  ex2(j * 2^-23), results in [1, 2)
//   kSm90RcpMantissa  rcp(1 + m * 2^-23), results in (0.5, 1]
//   kSm90Lg2Mantissa  lg2(1 + m * 2^-23), results in [0, 1)
template <MeasuredTable T>
const std::vector<uint32_t>& table() {
  static const std::vector<uint32_t> values = decode_measured_table(T);
  return values;
}

// y * 2^k with results below 2^-126 flushed to +0 (the product is exact otherwise).
float scaled_ftz(float y, int k) {
  const double v = std::ldexp(static_cast<double>(y), k);
  if (v < 0x1p-126) return 0.0f;
  if (v >= 0x1p128) return std::numeric_limits<float>::infinity();
  return static_cast<float>(v);
}

}  // namespace

float sm90_ex2_approx_ftz(float x) {
  if (std::isnan(x)) return std::numeric_limits<float>::quiet_NaN();
  if (x <= -127.0f) return 0.0f;  // below 2^-126 (including -inf): flushed
  if (x >= 128.0f) return std::numeric_limits<float>::infinity();
  const float n = std::trunc(x);
  const float f = x - n;  // exact
  // q = f truncated toward zero to the 2^-23 grid: +-i * 2^-23 with i in [0, 2^23).
  const auto i = static_cast<uint32_t>(std::trunc(std::fabs(static_cast<double>(f)) * 0x1p23));
  float e;
  if (f >= 0.0f) {
    e = std::bit_cast<float>(table<MeasuredTable::kSm90Ex2Positive>()[i]);  // ex2(i * 2^-23)
  } else {
    e = i == 0 ? 1.0f
               : std::bit_cast<float>(
                     table<MeasuredTable::kSm90Ex2Negative>()[kEntries - i]);  // ex2(-i 2^-23)
  }
  return scaled_ftz(e, static_cast<int>(n));
}

float sm90_rcp_approx_ftz(float y) {
  if (std::isnan(y)) return std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  if (std::isinf(y)) return std::signbit(y) ? -0.0f : 0.0f;
  if (std::fabs(y) < 0x1p-126f) return std::signbit(y) ? -inf : inf;  // flushed to zero first
  const uint32_t bits = std::bit_cast<uint32_t>(y);
  const int e = static_cast<int>((bits >> 23) & 0xff) - 127;
  const float r =
      std::bit_cast<float>(table<MeasuredTable::kSm90RcpMantissa>()[bits & (kEntries - 1)]);
  const double v = std::ldexp(static_cast<double>(r), -e);
  const float magnitude = v < 0x1p-126 ? 0.0f : static_cast<float>(v);
  return std::signbit(y) ? -magnitude : magnitude;
}

float sm90_div_full(float x, float y) {
  // The PTX's full range: a divisor beyond 2^126 is scaled by 1/4, a subnormal one by 2^24,
  // each with x, before x * rcp.approx(y).
  const float a = std::fabs(y);
  if (a > 0x1p126f) {
    x *= 0.25f;
    y *= 0.25f;
  } else if (a < 0x1p-126f) {
    x *= 0x1p24f;
    y *= 0x1p24f;
  }
  return x * sm90_rcp_approx_ftz(y);
}

float sm90_div_approx_ftz(float x, float y) {
  const auto flushed = [](float v) {
    return std::fabs(v) < 0x1p-126f ? std::copysign(0.0f, v) : v;
  };
  return flushed(flushed(x) * sm90_rcp_approx_ftz(y));
}

std::optional<float> sm90_ex2_approx(float x) {
  if (x < -126.0f) return std::nullopt;
  return sm90_ex2_approx_ftz(x);
}

std::optional<float> sm90_lg2_approx_ftz(float x) {
  if (std::isnan(x)) return std::numeric_limits<float>::quiet_NaN();
  if (x == std::numeric_limits<float>::infinity()) return x;
  // The PTX ISA's special values, subnormals flushed to zero first.
  if (std::fabs(x) < 0x1p-126f) return -std::numeric_limits<float>::infinity();
  if (x < 0.0f) return std::numeric_limits<float>::quiet_NaN();
  if (!(x >= 1.0f)) return std::nullopt;
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const int e = static_cast<int>(bits >> 23) - 127;
  const float l =
      std::bit_cast<float>(table<MeasuredTable::kSm90Lg2Mantissa>()[bits & (kEntries - 1)]);
  if (e == 0) return l;
  // e + l rounded toward zero: exact in double, then truncated to fp32's 24 bits.
  const double exact = static_cast<double>(e) + static_cast<double>(l);
  float r = static_cast<float>(exact);  // to nearest
  if (std::fabs(static_cast<double>(r)) > std::fabs(exact)) r = std::nextafter(r, 0.0f);
  return r;
}

float sm90_fast_expf(float x) {
  return sm90_ex2_approx_ftz(x * 0x1.715476p+0f);  // float(log2(e)) = 0x3fb8aa3b
}

std::optional<float> sm90_triton_expf(float x) {
  return sm90_ex2_approx(x * 0x1.715476p+0f);
}

std::optional<float> sm90_fast_logf(float x) {
  const std::optional<float> l = sm90_lg2_approx_ftz(x);
  if (!l) return std::nullopt;
  return *l * 0x1.62e430p-1f;  // float(ln 2) = 0x3f317218
}

}  // namespace simprec::device_math
