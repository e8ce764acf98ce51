// exp_fp32 over every float argument whose result is neither 0 nor inf: the batch form (the
// float fast path's exp) against exp_of (MPFR where libm's double result is undecided), one
// binade at a time on 2 worker threads. Also the site-by-site path's exp at an fp32
// nearest-even site, libm's double exp rounded once to float, against the same: on this C
// library it is correctly rounded for every float argument, so both paths of the fp32 preset
// compute the same P.
#include <gtest/gtest.h>

#include <atomic>
#include <bit>
#include <cmath>
#include <thread>
#include <vector>

#include "emulation/elementary.hpp"

namespace {

using namespace simprec;

constexpr size_t kBinade = size_t{1} << 23;

TEST(ExpFp32Heavy, EveryFloatArgumentAgreesWithExpOf) {
  // Binades of |x| from 2^-25 to 2^6 (|x| < 128), both signs. Below 2^-25, exp(x) is within
  // 2^-25 of 1 and rounds to 1: checked on every argument too, without MPFR.
  struct Binade {
    uint32_t first;
    bool tiny;
  };
  std::vector<Binade> binades;
  for (const uint32_t sign : {0u, 0x80000000u}) {
    for (uint32_t field = 0; field < 127 - 25; ++field)
      binades.push_back({sign | (field << 23), true});
    for (uint32_t field = 127 - 25; field < 127 + 7; ++field) {
      binades.push_back({sign | (field << 23), false});
    }
  }
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

}  // namespace
