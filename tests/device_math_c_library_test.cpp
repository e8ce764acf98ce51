// device_math=glibc is the C library this process runs with: its values against libm's
// functions called here directly (through volatile pointers, so that the compiler folds none),
// and the version results record. Its expf is not correctly rounded.
#include <gtest/gtest.h>
#include <math.h>

#include <bit>
#include <cstdint>
#include <string>

#include "emulation/elementary.hpp"
#include "lib/attention/strategies/device_math.hpp"

#if defined(__GLIBC__)
#include <gnu/libc-version.h>
#endif

namespace simprec::attention {
namespace {

float (*volatile const libm_expf)(float) = ::expf;
float (*volatile const libm_exp2f)(float) = ::exp2f;
float (*volatile const libm_logf)(float) = ::logf;
float (*volatile const libm_log2f)(float) = ::log2f;
double (*volatile const libm_exp)(double) = ::exp;
double (*volatile const libm_exp2)(double) = ::exp2;
double (*volatile const libm_log)(double) = ::log;
double (*volatile const libm_log2)(double) = ::log2;

bool same(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}
bool same_bits(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) ||
         std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

TEST(DeviceMathGlibc, IsTheInstalledLibm) {
  const auto& g = find_strategy<DeviceMath>("glibc");
  int64_t differ = 0;
  // Every 4099th fp32 bit pattern: all signs, binades, NaN and infinities.
  for (uint64_t b = 0; b <= UINT32_MAX; b += 4099) {
    const float x = std::bit_cast<float>(static_cast<uint32_t>(b));
    differ += !same_bits(*g.exp(x), libm_expf(x)) + !same_bits(*g.exp2(x), libm_exp2f(x)) +
              !same_bits(*g.log(x), libm_logf(x)) + !same_bits(*g.fast_log(x), libm_logf(x)) +
              !same_bits(*g.log2(x), libm_log2f(x));
    const double d = std::ldexp(static_cast<double>(x), static_cast<int>(b % 7) - 3);
    differ += !same(*g.exp_f64(d), libm_exp(d)) + !same(*g.exp2_f64(d), libm_exp2(d)) +
              !same(*g.log_f64(d), libm_log(d)) + !same(*g.log2_f64(d), libm_log2(d));
  }
  EXPECT_EQ(differ, 0);
  // A CPU's 1.0f / x and x / y are IEEE's: the emulation's own, nothing supplied.
  EXPECT_FALSE(g.rcp(3.0f).has_value());
  EXPECT_FALSE(g.div(1.0f, 3.0f).has_value());
}

TEST(DeviceMathGlibc, ResultsRecordTheVersion) {
  const std::string library = find_strategy<DeviceMath>("glibc").library();
#if defined(__GLIBC__)
  EXPECT_EQ(library, std::string("glibc ") + gnu_get_libc_version());
#else
  EXPECT_EQ(library, "an unknown C library");
#endif
  EXPECT_EQ(find_strategy<DeviceMath>("sm90").library(), "");
}

// Arguments where glibc 2.36's expf is not the correctly rounded fp32 (found by comparing it
// with mpmath's exp at 200 bits rounded to nearest, over every 997th bit pattern in [-87, -1]).
constexpr uint32_t kGlibc236ExpfMisrounded[] = {0xbf8455f1u, 0xbf8b0789u, 0xbf8dfef8u, 0xbfb7e09du};

// There the glibc strategy gives glibc's value, not the correctly rounded one.
TEST(DeviceMathGlibc, ExpfIsNotCorrectlyRounded) {
#if defined(__GLIBC__)
  if (std::string(gnu_get_libc_version()) != "2.36")
    GTEST_SKIP() << "the arguments are glibc 2.36's; this is glibc " << gnu_get_libc_version();
#else
  GTEST_SKIP() << "not glibc";
#endif
  const auto& g = find_strategy<DeviceMath>("glibc");
  for (const uint32_t bits : kGlibc236ExpfMisrounded) {
    const float x = std::bit_cast<float>(bits);
    EXPECT_NE(*g.exp(x), exp_fp32(x)) << std::hexfloat << x;
    EXPECT_EQ(*g.exp(x), libm_expf(x)) << std::hexfloat << x;
  }
}

}  // namespace
}  // namespace simprec::attention
