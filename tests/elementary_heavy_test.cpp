// exp_fp32 and exp2_fp32 over every float argument whose result is neither 0 nor inf: the batch
// forms (the float fast path's exp and exp2) against exp_of / exp2_of (MPFR where libm's double
// result is undecided), one binade at a time on 2 worker threads. Also libm's double exp and
// exp2 rounded once to float against the same: exp is correctly rounded on every float argument
// with this C library, exp2 is not (two arguments), which is why the emulation never rounds a
// libm double again.
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

// What one sweep found: how many arguments it checked, how many the batch form got wrong, and
// the arguments whose libm double, rounded once to float, is not the correctly rounded result.
struct Sweep {
  uint64_t checked = 0, bad_batch = 0;
  std::vector<uint32_t> libm_misses;  // sorted
};

// Every float of `binades` up to the first whose result is 0 or inf (`in_range` false; within a
// binade the results are monotone): `batch` (the batch form) and `libm` (a double function)
// rounded to float, against `exact` (exp_of or exp2_of). Tiny binades round to exactly 1.
template <class Batch, class Libm, class Exact, class InRange>
Sweep sweep(const std::vector<Binade>& binades, Batch batch, Libm libm, Exact exact,
            InRange in_range) {
  std::atomic<size_t> next{0};
  std::atomic<uint64_t> bad_batch{0}, checked{0};
  std::mutex misses_mutex;
  Sweep result;
  const auto worker = [&] {
    std::vector<float> x(kBinade), y(kBinade);
    RoundingContext ctx(formats::fp32, Rounding{});
    for (size_t b = next++; b < binades.size(); b = next++) {
      for (size_t i = 0; i < kBinade; ++i) {
        x[i] = std::bit_cast<float>(binades[b].first + static_cast<uint32_t>(i));
      }
      batch(x.data(), y.data(), kBinade);
      uint64_t bad = 0, count = 0;
      for (size_t i = 0; i < kBinade; ++i) {
        if (!in_range(x[i])) break;  // 0 or inf from here on
        ++count;
        const uint32_t got = std::bit_cast<uint32_t>(y[i]);
        const uint32_t libm_bits =
            std::bit_cast<uint32_t>(static_cast<float>(libm(static_cast<double>(x[i]))));
        const uint32_t expected = binades[b].tiny ? std::bit_cast<uint32_t>(1.0f)
                                                  : static_cast<uint32_t>(exact(ctx, x[i]));
        bad += got != expected;
        if (libm_bits != expected) {
          std::lock_guard lock(misses_mutex);
          result.libm_misses.push_back(std::bit_cast<uint32_t>(x[i]));
        }
      }
      bad_batch += bad;
      checked += count;
    }
  };
  std::thread t1(worker), t2(worker);
  t1.join();
  t2.join();
  result.checked = checked.load();
  result.bad_batch = bad_batch.load();
  std::sort(result.libm_misses.begin(), result.libm_misses.end());
  return result;
}

TEST(ExpFp32Heavy, EveryFloatArgumentAgreesWithExpOf) {
  // Binades of |x| from 2^-25 to 2^6 (|x| < 128), both signs. Below 2^-25, exp(x) is within
  // 2^-25 of 1 and rounds to 1: checked on every argument too, without MPFR.
  const Sweep s = sweep(
      binades_below(127 + 7), [](const float* x, float* y, size_t n) { exp_fp32(x, y, n); },
      [](double x) { return std::exp(x); }, exp_of, [](float x) { return std::fabs(x) <= 104.0f; });
  EXPECT_GT(s.checked, 2'000'000'000u);
  EXPECT_EQ(s.bad_batch, 0u);
  EXPECT_EQ(s.libm_misses.size(), 0u);
}

// exp2_fp32 against exp2_of on every float argument; and libm's double exp2 rounded to float
// against exp2_of, which it misses on exactly two arguments with this C library (why the
// emulation never rounds a libm double again).
TEST(Exp2Fp32Heavy, EveryFloatArgumentAgreesWithExp2Of) {
  // Binades of |x| from 2^-25 to 2^7 (|x| < 256; the results are 0 from -150 down and inf from
  // 128 up), both signs. Below 2^-25, 2^x is within 2^-25 of 1 and rounds to 1.
  const Sweep s = sweep(
      binades_below(127 + 8), [](const float* x, float* y, size_t n) { exp2_fp32(x, y, n); },
      [](double x) { return std::exp2(x); }, exp2_of,
      [](float x) { return x < 128.0f && x > -150.0f; });
  EXPECT_GT(s.checked, 2'000'000'000u);
  EXPECT_EQ(s.bad_batch, 0u);
  // 0x1.853a6ep-9 and -0x1.e7526ep-6 (glibc 2.36).
  EXPECT_EQ(s.libm_misses, (std::vector<uint32_t>{0x3b429d37u, 0xbcf3a937u}));
}

}  // namespace
