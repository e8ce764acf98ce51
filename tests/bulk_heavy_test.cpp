// Every one of the 2^32 float inputs converted to bf16, fp16, e4m3fn and e5m2 in every
// deterministic mode through the bulk API, as encodings (round_to_bits<float, uint16_t>) and as
// values (round_to_values<float>), against the per-binade exact-double reference
// oracle::float_binade_reference (itself checked against MPFR in bulk_test); a value against
// its reference encoding's exact value. NaN and infinity inputs against the format's definition.
// Runs on 2 worker threads, each calling the bulk API with threads = 1.
#include <gtest/gtest.h>

#include <atomic>
#include <bit>
#include <chrono>
#include <cstdio>
#include <iterator>
#include <mutex>
#include <thread>
#include <vector>

#include "emulation/bulk.hpp"
#include "emulation/round.hpp"
#include "tests/mpfr_oracle.hpp"

namespace {

using namespace simprec;

constexpr size_t kBinade = size_t{1} << 23;

// One test per sign (2^31 floats each), so that each half reports on its own.
class BulkHeavy : public ::testing::TestWithParam<bool> {};

TEST_P(BulkHeavy, AllFloatsOfOneSignToBf16Fp16E4m3fnE5m2EveryMode) {
  const bool negative = GetParam();
  const Format targets[] = {formats::bf16, formats::fp16, formats::e4m3fn, formats::e5m2};
  // The float bits of each encoding's exact value (every one of these formats fits a float).
  std::vector<uint32_t> value_bits[std::size(targets)];
  for (size_t t = 0; t < std::size(targets); ++t) {
    value_bits[t].resize(size_t{1} << targets[t].width());
    for (size_t e = 0; e < value_bits[t].size(); ++e) {
      value_bits[t][e] = std::bit_cast<uint32_t>(static_cast<float>(decode(targets[t], e)));
    }
  }
  std::atomic<int> next{0};
  std::mutex mutex;
  oracle::Mismatches bad;
  uint64_t checked = 0;
  const auto start = std::chrono::steady_clock::now();
  auto worker = [&] {
    std::vector<float> in(kBinade), values(kBinade);
    std::vector<uint16_t> got(kBinade), want(kBinade);
    oracle::Mismatches local;
    uint64_t local_checked = 0;
    for (int field; (field = next.fetch_add(1)) < 256;) {
      for (size_t i = 0; i < kBinade; ++i) {
        in[i] =
            std::bit_cast<float>((negative ? 0x80000000u : 0u) |
                                 (static_cast<uint32_t>(field) << 23) | static_cast<uint32_t>(i));
      }
      for (size_t t = 0; t < std::size(targets); ++t) {
        const Format& f = targets[t];
        const oracle::Spec s = oracle::spec_of(f);
        for (RoundingMode m : oracle::kModes) {
          round_to_bits<float, uint16_t>(in, got, BulkRounding{f, Rounding{m}, {}, 0, 1});
          round_to_values<float>(in, values, BulkRounding{f, Rounding{m}, {}, 0, 1});
          if (field == 255) {  // infinity (fraction 0) and NaNs
            want[0] = static_cast<uint16_t>(oracle::infinity_bits(s, negative));
            for (size_t i = 1; i < kBinade; ++i) want[i] = static_cast<uint16_t>(s.nan_bits);
          } else {
            oracle::float_binade_reference(s, m, negative, field, want.data());
          }
          // A straight-line count first; the loop that names each mismatch runs only if any.
          const uint32_t* expected_values = value_bits[t].data();
          size_t wrong = 0;
          for (size_t i = 0; i < kBinade; ++i) {
            wrong +=
                static_cast<size_t>(got[i] != want[i]) |
                static_cast<size_t>(std::bit_cast<uint32_t>(values[i]) != expected_values[want[i]]);
          }
          for (size_t i = 0; wrong > 0 && i < kBinade; ++i) {
            if (got[i] != want[i]) {
              local.add(f.name() + " " + oracle::mode_name(m) +
                        " x=" + oracle::hex(std::bit_cast<uint32_t>(in[i])) + ": expected " +
                        oracle::hex(want[i]) + " got " + oracle::hex(got[i]));
            }
            if (std::bit_cast<uint32_t>(values[i]) != value_bits[t][want[i]]) {
              local.add(f.name() + " " + oracle::mode_name(m) +
                        " value x=" + oracle::hex(std::bit_cast<uint32_t>(in[i])) + ": expected " +
                        oracle::hex(value_bits[t][want[i]]) + " got " +
                        oracle::hex(std::bit_cast<uint32_t>(values[i])));
            }
          }
          local_checked += kBinade;
        }
      }
      if (field % 64 == 63) {
        std::printf(
            "binade %d done after %.1f s\n", field,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        std::fflush(stdout);
      }
    }
    std::lock_guard lock(mutex);
    bad.merge(local);
    checked += local_checked;
  };
  std::thread t1(worker), t2(worker);
  t1.join();
  t2.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("checked %llu conversions in %.1f s\n", static_cast<unsigned long long>(checked),
              seconds);
  EXPECT_EQ(checked, (uint64_t{1} << 31) * 4 * 6);
  EXPECT_EQ(bad.count, 0u) << bad.report();
}

INSTANTIATE_TEST_SUITE_P(Signs, BulkHeavy, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Negative" : "Positive"; });

}  // namespace
