// exp_fp32 and exp2_fp32 over every float argument whose result is neither 0 nor inf: the batch
// forms (the float fast path's exp and exp2) against exp_of / exp2_of (MPFR where libm's double
// result is undecided), one binade at a time on 2 worker threads. Also the site-by-site path's
// exp and exp2 at an fp32 nearest-even site, libm's double result rounded once to float, against
// the same: on this C library both are correctly rounded for every float argument, so both
// paths of the fp32 and fa2 presets compute the same P.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <mutex>
#include <thread>
#include <vector>

#include "emulation/elementary.hpp"

namespace {

using namespace simprec;

constexpr size_t kBinade = size_t{1} << 23;

// The float binades of both signs with exponent field below `end`: those below 2^-25 `tiny`.
struct Binade {
  uint32_t first;
  bool tiny;
};
std::vector<Binade> binades_below(uint32_t end) {
  std::vector<Binade> binades;
  for (const uint32_t sign : {0u, 0x80000000u}) {
    for (uint32_t field = 0; field < end; ++field) {
      binades.push_back({sign | (field << 23), field < 127 - 25});
    }
  }
  return binades;
}

TEST(ExpFp32Heavy, EveryFloatArgumentAgreesWithExpOf) {
  // Binades of |x| from 2^-25 to 2^6 (|x| < 128), both signs. Below 2^-25, exp(x) is within
  // 2^-25 of 1 and rounds to 1: checked on every argument too, without MPFR.
  const std::vector<Binade> binades = binades_below(127 + 7);
  std::atomic<size_t> next{0};
  std::atomic<uint64_t> bad_batch{0}, bad_libm{0}, checked{0};
  const auto worker = [&] {
    std::vector<float> x(kBinade), y(kBinade);
    RoundingContext ctx(formats::fp32, Rounding{});
    for (size_t b = next++; b < binades.size(); b = next++) {
      for (size_t i = 0; i < kBinade; ++i) {
        x[i] = std::bit_cast<float>(binades[b].first + static_cast<uint32_t>(i));
      }
      exp_fp32(x.data(), y.data(), kBinade);
      uint64_t batch = 0, libm = 0, count = 0;
      for (size_t i = 0; i < kBinade; ++i) {
        if (std::fabs(x[i]) > 104.0f) break;  // 0 or inf from here on
        ++count;
        const uint32_t got = std::bit_cast<uint32_t>(y[i]);
        const uint32_t libm_bits =
            std::bit_cast<uint32_t>(static_cast<float>(std::exp(static_cast<double>(x[i]))));
        if (binades[b].tiny) {
          batch += got != std::bit_cast<uint32_t>(1.0f);
          libm += libm_bits != std::bit_cast<uint32_t>(1.0f);
          continue;
        }
        const auto expected = static_cast<uint32_t>(exp_of(ctx, x[i]));
        batch += got != expected;
        libm += libm_bits != expected;
      }
      bad_batch += batch;
      bad_libm += libm;
      checked += count;
    }
  };
  std::thread t1(worker), t2(worker);
  t1.join();
  t2.join();
  EXPECT_GT(checked.load(), 2'000'000'000u);
  EXPECT_EQ(bad_batch.load(), 0u);
  EXPECT_EQ(bad_libm.load(), 0u);
}

// exp2_fp32 against exp2_of on every float argument; and libm's double exp2 rounded to float
// against exp2_of, which it misses on exactly two arguments with this C library (why the
// emulation never rounds a libm double again).
TEST(Exp2Fp32Heavy, EveryFloatArgumentAgreesWithExp2Of) {
  // Binades of |x| from 2^-25 to 2^7 (|x| < 256; the results are 0 from -150 down and inf from
  // 128 up), both signs. Below 2^-25, 2^x is within 2^-25 of 1 and rounds to 1.
  const std::vector<Binade> binades = binades_below(127 + 8);
  std::atomic<size_t> next{0};
  std::atomic<uint64_t> bad_batch{0}, checked{0};
  std::mutex libm_misses_mutex;
  std::vector<uint32_t> libm_misses;
  const auto worker = [&] {
    std::vector<float> x(kBinade), y(kBinade);
    RoundingContext ctx(formats::fp32, Rounding{});
    for (size_t b = next++; b < binades.size(); b = next++) {
      for (size_t i = 0; i < kBinade; ++i) {
        x[i] = std::bit_cast<float>(binades[b].first + static_cast<uint32_t>(i));
      }
      exp2_fp32(x.data(), y.data(), kBinade);
      uint64_t batch = 0, count = 0;
      for (size_t i = 0; i < kBinade; ++i) {
        if (x[i] >= 128.0f || x[i] <= -150.0f) break;  // inf or 0 from here on
        ++count;
        const uint32_t got = std::bit_cast<uint32_t>(y[i]);
        const uint32_t libm_bits =
            std::bit_cast<uint32_t>(static_cast<float>(std::exp2(static_cast<double>(x[i]))));
        const uint32_t expected = binades[b].tiny ? std::bit_cast<uint32_t>(1.0f)
                                                  : static_cast<uint32_t>(exp2_of(ctx, x[i]));
        batch += got != expected;
        if (libm_bits != expected) {
          std::lock_guard lock(libm_misses_mutex);
          libm_misses.push_back(std::bit_cast<uint32_t>(x[i]));
        }
      }
      bad_batch += batch;
      checked += count;
    }
  };
  std::thread t1(worker), t2(worker);
  t1.join();
  t2.join();
  EXPECT_GT(checked.load(), 2'000'000'000u);
  EXPECT_EQ(bad_batch.load(), 0u);
  std::sort(libm_misses.begin(), libm_misses.end());
  // 0x1.853a6ep-9 and -0x1.e7526ep-6 (glibc 2.36).
  EXPECT_EQ(libm_misses, (std::vector<uint32_t>{0x3b429d37u, 0xbcf3a937u}));
}

}  // namespace
