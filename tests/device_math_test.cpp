// The H100's ex2.approx.ftz.f32 and lg2.approx.ftz.f32 as modelled from the measured tables
// (emulation/device_math/sm90_mufu.hpp) against outputs recorded on an H100 by other probes
// than the one that measured the tables, and against MPFR for the error bound.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <vector>

#include "emulation/device_math/libdevice_expf_logf.hpp"
#include "emulation/device_math/libdevice_log2f.hpp"
#include "emulation/device_math/sm90_mufu.hpp"
#include "emulation/tensor_core_vectors.hpp"

namespace simprec {
namespace {

namespace tcv = tc_vectors;

std::vector<uint32_t> read_words(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  const std::vector<char> bytes{std::istreambuf_iterator<char>(f), {}};
  std::vector<uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), words.size() * 4);
  return words;
}

// tests/data/tensor_core/ex2_approx_ftz.first: the H100's ex2.approx.ftz.f32 of the element-wise
// probe inputs (kernels/probe_main.cu, recorded before the tables were measured).
TEST(DeviceMath, Sm90Ex2ReproducesTheRecordedH100Outputs) {
  const std::vector<uint32_t> recorded = read_words(std::filesystem::path(SIMPREC_SOURCE_DIR) /
                                                    "tests/data/tensor_core/ex2_approx_ftz.first");
  ASSERT_EQ(recorded.size(), tcv::kElementSubset);
  int64_t mismatches = 0;
  for (uint32_t i = 0; i < tcv::kElementSubset; ++i) {
    const float x = std::bit_cast<float>(tcv::elementwise_input(tcv::kElementSeed, i));
    const float y = device_math::sm90_ex2_approx_ftz(x);
    const uint32_t want = recorded[i];
    const bool both_nan = std::isnan(y) && std::isnan(std::bit_cast<float>(want));
    if (!both_nan && std::bit_cast<uint32_t>(y) != want) {
      if (++mismatches <= 10)
        ADD_FAILURE() << "x=" << std::hexfloat << x << ": H100 " << std::bit_cast<float>(want)
                      << ", model " << y;
    }
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(DeviceMath, Sm90Ex2Structure) {
  EXPECT_EQ(device_math::sm90_ex2_approx_ftz(0.0f), 1.0f);
  EXPECT_EQ(device_math::sm90_ex2_approx_ftz(-1.0f), 0.5f);
  EXPECT_EQ(device_math::sm90_ex2_approx_ftz(-127.0f), 0.0f);  // 2^-127: flushed
  EXPECT_EQ(device_math::sm90_ex2_approx_ftz(-INFINITY), 0.0f);
  EXPECT_TRUE(std::isnan(device_math::sm90_ex2_approx_ftz(NAN)));
  EXPECT_EQ(device_math::sm90_ex2_approx_ftz(128.0f), INFINITY);
  EXPECT_EQ(device_math::sm90_ex2_approx_ftz(1.0f), 2.0f);
  // Measured: the fraction is truncated toward zero to 2^-23, so every x in (-2^-23, 0) gives 1.
  EXPECT_EQ(device_math::sm90_ex2_approx_ftz(-0x1p-24f), 1.0f);
  EXPECT_EQ(device_math::sm90_ex2_approx_ftz(-0x1.fffffep-24f), 1.0f);
}

// Within 2 ulp of the fp32 nearest to exp2 and log2 (what docs/findings.md measured for the
// instructions): a check of the tables' decoding, not of their exactness (the recorded outputs
// above and the exhaustive device run are).
TEST(DeviceMath, Sm90FunctionsAreWithinTwoUlps) {
  for (uint32_t i = 0; i < (1u << 16); ++i) {
    const float x = -126.0f * static_cast<float>(i) / 65536.0f;
    const double want = static_cast<float>(std::exp2(static_cast<double>(x)));
    const float y = device_math::sm90_ex2_approx_ftz(x);
    if (want < 0x1p-126) continue;
    const double ulp = std::ldexp(1.0, std::ilogb(want) - 23);
    EXPECT_LE(std::fabs(y - want), 2 * ulp) << std::hexfloat << x;
  }
  for (uint32_t i = 0; i < (1u << 16); ++i) {
    const float x = 1.0f + static_cast<float>(i) * 31.0f;
    const double want = static_cast<float>(std::log2(static_cast<double>(x)));
    const float y = *device_math::sm90_lg2_approx_ftz(x);
    const double ulp = want == 0 ? 0x1p-149 : std::ldexp(1.0, std::ilogb(want) - 23);
    EXPECT_LE(std::fabs(y - want), 2 * ulp + 0x1p-22) << std::hexfloat << x;
  }
  EXPECT_EQ(device_math::sm90_lg2_approx_ftz(1.0f), 0.0f);
  EXPECT_FALSE(device_math::sm90_lg2_approx_ftz(0.5f).has_value());
}

// tests/data/device_math/sm90_lg2_approx_ftz_sample.bin: lg2.approx.ftz.f32 of
// x_i = (1 + ((i * 2654435761) mod 2^23) 2^-23) 2^(i mod 25), i < 2^16, on the H100
// (mufu_probe --tables): the table at e = 0, the rule e + lg2(1.m) toward zero above.
TEST(DeviceMath, Sm90Lg2ReproducesTheRecordedSample) {
  const std::vector<uint32_t> recorded =
      read_words(std::filesystem::path(SIMPREC_SOURCE_DIR) /
                 "tests/data/device_math/sm90_lg2_approx_ftz_sample.bin");
  ASSERT_EQ(recorded.size(), 1u << 16);
  int64_t mismatches = 0;
  for (uint32_t i = 0; i < recorded.size(); ++i) {
    const uint32_t m = static_cast<uint32_t>((uint64_t{i} * 2654435761u) & 0x7fffffu);
    const float x = std::bit_cast<float>(((127u + i % 25u) << 23) | m);
    const float y = *device_math::sm90_lg2_approx_ftz(x);
    if (std::bit_cast<uint32_t>(y) != recorded[i] && ++mismatches <= 10)
      ADD_FAILURE() << std::hexfloat << "x=" << x << ": H100 " << std::bit_cast<float>(recorded[i])
                    << ", model " << y;
  }
  EXPECT_EQ(mismatches, 0);
}

// rcp.approx and div.full: the structure the device run measured (tests/data/device_math/
// sm90_rcp_div_counts.txt: 0 mismatches) applied to known values.
TEST(DeviceMath, Sm90RcpAndDivFull) {
  EXPECT_EQ(device_math::sm90_rcp_approx_ftz(1.0f), 1.0f);
  EXPECT_EQ(device_math::sm90_rcp_approx_ftz(2.0f), 0.5f);
  EXPECT_EQ(device_math::sm90_rcp_approx_ftz(-4.0f), -0.25f);
  EXPECT_EQ(device_math::sm90_rcp_approx_ftz(0.0f), INFINITY);
  EXPECT_EQ(device_math::sm90_rcp_approx_ftz(INFINITY), 0.0f);
  for (uint32_t i = 1; i < (1u << 16); ++i) {
    const float y = 1.0f + static_cast<float>(i) * 0x1p-16f;
    const float r = device_math::sm90_rcp_approx_ftz(y);
    EXPECT_LE(std::fabs(static_cast<double>(r) - 1.0 / y), 0x1p-23) << std::hexfloat << y;
    EXPECT_EQ(device_math::sm90_rcp_approx_ftz(y * 8.0f), r / 8.0f);  // exact scaling
    EXPECT_EQ(device_math::sm90_div_full(3.0f, y), 3.0f * r);
    EXPECT_EQ(device_math::sm90_div_approx_ftz(3.0f, y), 3.0f * r);
  }
  // The PTX ISA: div.full is full range (1 / 2^127 exactly: the divisor scaled first), and
  // div.approx gives 0 for a divisor above 2^126, where its reciprocal flushes.
  EXPECT_EQ(device_math::sm90_div_full(1.0f, 0x1p127f), 0x1p-127f);
  EXPECT_EQ(device_math::sm90_div_full(-1.0f, 0x1p-140f), -0x1p140f);
  EXPECT_EQ(device_math::sm90_div_approx_ftz(1.0f, 0x1p127f), 0.0f);
}

// log2f of +-0 is -inf (libdevice's explicit case), of a negative number NaN.
TEST(DeviceMath, LibdeviceLog2fSpecialValues) {
  EXPECT_EQ(device_math::libdevice_log2f(0.0f), -INFINITY);
  EXPECT_EQ(device_math::libdevice_log2f(-0.0f), -INFINITY);
  EXPECT_EQ(device_math::libdevice_log2f(0x1p-149f), -149.0f);
  EXPECT_TRUE(std::isnan(device_math::libdevice_log2f(-0x1p-149f)));
}

// libdevice's log2f: within 1 ulp of log2 (its documented bound) over [1, 2^20), and exact at
// powers of two.
TEST(DeviceMath, LibdeviceLog2f) {
  for (int e = -20; e <= 20; ++e)
    EXPECT_EQ(device_math::libdevice_log2f(std::ldexp(1.0f, e)), static_cast<float>(e));
  for (uint32_t i = 0; i < (1u << 16); ++i) {
    const float x = 1.0f + static_cast<float>(i) * 16.0f + static_cast<float>(i % 7) / 8.0f;
    const double want = std::log2(static_cast<double>(x));
    const float y = device_math::libdevice_log2f(x);
    const double ulp = want == 0 ? 0x1p-149 : std::ldexp(1.0, std::ilogb(want) - 23);
    EXPECT_LE(std::fabs(y - want), ulp) << std::hexfloat << x;
  }
  EXPECT_TRUE(std::isnan(device_math::libdevice_log2f(-1.0f)));
  EXPECT_EQ(device_math::libdevice_log2f(INFINITY), INFINITY);
}

// libdevice's expf and logf: within their documented bounds (2 ulp for expf, 1 ulp for logf) of
// exp and log in long double over a sweep of arguments, exact where the result is, and the
// special values of the CUDA math API. Their bit-exactness on the device is what the attention
// recordings check (docs/torch_kernels.md: with them the flash split-KV combine reproduces O and
// LSE bit for bit).
TEST(DeviceMath, LibdeviceExpf) {
  EXPECT_EQ(device_math::libdevice_expf(0.0f), 1.0f);
  EXPECT_EQ(device_math::libdevice_expf(-INFINITY), 0.0f);
  EXPECT_EQ(device_math::libdevice_expf(INFINITY), INFINITY);
  EXPECT_EQ(device_math::libdevice_expf(89.0f), INFINITY);
  EXPECT_TRUE(std::isnan(device_math::libdevice_expf(NAN)));
  int64_t beyond_half_ulp = 0;
  for (uint32_t i = 0; i <= (1u << 16); ++i) {
    const float x = -87.0f + 175.0f * static_cast<float>(i) / 65536.0f;  // normal results
    const long double want = std::exp(static_cast<long double>(x));
    const float y = device_math::libdevice_expf(x);
    const long double ulp = std::ldexp(1.0L, std::ilogb(static_cast<float>(want)) - 23);
    const long double err = std::fabs(static_cast<long double>(y) - want) / ulp;
    EXPECT_LE(err, 2.0L) << std::hexfloat << x;
    beyond_half_ulp += err > 0.5L;
  }
  // Not correctly rounded everywhere (else a correctly rounded exp would model it): 19871 of
  // these 65537 arguments (30.3%) are more than half an ulp off.
  EXPECT_GT(beyond_half_ulp, 0);
}

TEST(DeviceMath, LibdeviceLogf) {
  EXPECT_EQ(device_math::libdevice_logf(1.0f), 0.0f);
  EXPECT_EQ(device_math::libdevice_logf(0.0f), -INFINITY);
  EXPECT_EQ(device_math::libdevice_logf(-0.0f), -INFINITY);
  EXPECT_EQ(device_math::libdevice_logf(INFINITY), INFINITY);
  EXPECT_TRUE(std::isnan(device_math::libdevice_logf(-1.0f)));
  EXPECT_TRUE(std::isnan(device_math::libdevice_logf(NAN)));
  for (uint32_t i = 0; i < (1u << 16); ++i) {
    // Subnormal, below and above 1, and the sums of exponentials the combine kernel takes.
    const float x =
        std::ldexp(1.0f + static_cast<float>(i % 4096) / 4096.0f, static_cast<int>(i % 300) - 149);
    if (x == 0.0f || std::isinf(x)) continue;
    const long double want = std::log(static_cast<long double>(x));
    const float y = device_math::libdevice_logf(x);
    const long double ulp =
        want == 0 ? 0x1p-149L : std::ldexp(1.0L, std::ilogb(static_cast<float>(want)) - 23);
    EXPECT_LE(std::fabs(static_cast<long double>(y) - want), ulp) << std::hexfloat << x;
  }
}

}  // namespace
}  // namespace simprec
