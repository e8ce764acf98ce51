// Conversions (the rounding kernel on exact inputs) against MPFR: every bf16 and fp16 encoding
// into every format (the OCP MX formats included) in every deterministic mode; random doubles into
// every format; double- rounding traps (double -> float -> 8-bit differs from double -> 8-bit, the
// library must round once); and a self-check of the oracle on values worked out by hand.
#include <gtest/gtest.h>

#include "tests/format_support.hpp"

#include <bit>
#include <cmath>
#include <random>
#include <vector>

#include "emulation/arithmetic.hpp"
#include "emulation/bulk.hpp"
#include "emulation/round.hpp"
#include "tests/mpfr_oracle.hpp"

namespace {

using namespace simprec;

using simprec::testing::with;

const std::vector<Format>& targets() {
  static const std::vector<Format> t = {
      formats::bf16, formats::fp16, formats::e4m3fn, formats::e5m2, formats::e4m3fnuz,
      formats::e5m2fnuz, formats::tf32, formats::fp32,
      // policy variants: saturation (as cvt.satfinite) and flush-to-zero
      with(formats::e4m3fn, OverflowPolicy::kSaturate),
      with(formats::e5m2, OverflowPolicy::kSaturate),
      with(formats::fp16, OverflowPolicy::kInfinity, SubnormalPolicy::kFlush),
      with(formats::e4m3fn, OverflowPolicy::kNan, SubnormalPolicy::kFlush),
      // OCP MX: no infinity and no NaN (saturating), and the exponent-only scale format
      formats::fp6_e2m3, formats::fp6_e3m2, formats::fp4_e2m1,
      with(formats::fp4_e2m1, OverflowPolicy::kSaturate, SubnormalPolicy::kFlush), formats::e8m0,
      with(formats::e8m0, OverflowPolicy::kSaturate)};
  return t;
}

// Oracle expectations for converting the value x into `to`.
void expect_conversion(oracle::Oracle& o, double x, uint64_t out[6]) {
  mpfr_t v;
  mpfr_init2(v, 64);
  mpfr_set_d(v, x, MPFR_RNDN);
  o.round_all([&](mpfr_ptr r, mpfr_rnd_t rnd) { return mpfr_set(r, v, rnd); }, out);
  mpfr_clear(v);
}

class FromSixteenBit : public ::testing::TestWithParam<Format> {};

TEST_P(FromSixteenBit, EveryEncodingToEveryFormatEveryMode) {
  const Format from = GetParam();
  const oracle::Spec fs = oracle::spec_of(from);
  oracle::Mismatches bad;
  uint64_t checked = 0;
  for (const Format& to : targets()) {
    oracle::Oracle o(to);
    std::vector<RoundingContext> ctx;
    for (RoundingMode m : oracle::kModes) ctx.emplace_back(to, Rounding{m});
    for (uint64_t a = 0; a < 65536; ++a) {
      uint64_t expected[6];
      expect_conversion(o, oracle::decode(fs, a), expected);
      for (int i = 0; i < 6; ++i) {
        const uint64_t got = convert(from, a, ctx[i]);
        ++checked;
        if (got != expected[i]) {
          bad.add(from.name() + " " + oracle::hex(a) + " -> " + to.name() + " " +
                  oracle::mode_name(oracle::kModes[i]) + ": expected " + oracle::hex(expected[i]) +
                  " got " + oracle::hex(got));
        }
      }
    }
  }
  EXPECT_EQ(checked, 65536u * 6 * targets().size());
  EXPECT_EQ(bad.count, 0u) << bad.report();
}

INSTANTIATE_TEST_SUITE_P(Formats, FromSixteenBit, ::testing::Values(formats::bf16, formats::fp16),
                         [](const auto& info) { return info.param.name(); });

// Random doubles of every magnitude (and near each target's interesting places) into every
// format, through RoundingContext::round(double) and Unrounded from_double.
TEST(Conversion, RandomDoublesIntoEveryFormat) {
  std::mt19937_64 rng(77);
  oracle::Mismatches bad;
  std::vector<Format> all = targets();
  all.push_back(formats::fp64);
  all.push_back(parse_format("e3m2"));
  all.push_back(parse_format("e6m9"));
  for (const Format& to : all) {
    oracle::Oracle o(to);
    const auto& s = o.spec();
    std::vector<RoundingContext> ctx;
    for (RoundingMode m : oracle::kModes) ctx.emplace_back(to, Rounding{m});
    for (int i = 0; i < 30000; ++i) {
      double x;
      if (i % 3 == 0) {
        x = std::bit_cast<double>(rng());  // any double, NaN and inf included
      } else {
        // Near the format's range: a random significand at an exponent from below the smallest
        // subnormal to above the largest finite value.
        const int lo = s.emin - s.m - 3, hi = s.emax + 2;
        const int e = lo + static_cast<int>(rng() % static_cast<uint64_t>(hi - lo + 1));
        const double frac = static_cast<double>(rng() >> 11) * 0x1p-53;
        x = std::ldexp(1.0 + frac, e) * ((rng() & 1) ? -1 : 1);
      }
      uint64_t expected[6];
      expect_conversion(o, x, expected);
      for (int k = 0; k < 6; ++k) {
        const uint64_t got = ctx[k].round(x);
        if (got != expected[k]) {
          bad.add(std::to_string(x) + " (" + oracle::hex(std::bit_cast<uint64_t>(x)) + ") -> " +
                  to.name() + " " + oracle::mode_name(oracle::kModes[k]) + ": expected " +
                  oracle::hex(expected[k]) + " got " + oracle::hex(got));
        }
      }
    }
  }
  EXPECT_EQ(bad.count, 0u) << bad.report();
}

// Double-rounding traps: x = (midpoint of two neighbours in the 8/16-bit target) + a tiny bit,
// so small that double -> float lands exactly on the midpoint; the float then rounds to even,
// while x rounds up. The library must round x once (and the same for "- tiny").
TEST(Conversion, DoubleRoundingTraps) {
  oracle::Mismatches bad;
  int traps = 0;
  for (const Format& to : {formats::e4m3fn, formats::e5m2, formats::bf16, formats::fp16,
                           formats::e4m3fnuz, formats::e5m2fnuz}) {
    oracle::Oracle o(to);
    const auto& s = o.spec();
    RoundingContext direct(to);
    RoundingContext via_float_ctx(to);
    for (uint64_t lo = 0; lo < s.max_bits; ++lo) {
      const double a = oracle::decode(s, lo), b = oracle::decode(s, lo + 1);
      const double mid = (a + b) / 2;  // exact
      if (mid == 0) continue;
      for (double dir : {1.0, -1.0}) {
        // A nudge below float's half ulp at mid but representable in double.
        const double x = mid + dir * std::ldexp(std::fabs(mid), -40);
        const float f = static_cast<float>(x);
        if (static_cast<double>(f) != mid) continue;  // not a trap for this pair
        uint64_t expected[6];
        expect_conversion(o, x, expected);
        const uint64_t once = expected[0];
        const uint64_t twice = via_float_ctx.round(static_cast<double>(f));
        if (once != twice) ++traps;  // a real trap: rounding twice gives another answer
        const uint64_t got_scalar = direct.round(x);
        // Through the bulk API (vectorised path) from double, and convert() from fp64 bits.
        uint64_t got_bulk = 0;
        const double in[1] = {x};
        round_to_bits<double, uint64_t>(std::span<const double>(in, 1),
                                        std::span<uint64_t>(&got_bulk, 1),
                                        BulkRounding{to, {}, {}, 0, 1});
        const uint64_t got_convert = convert(formats::fp64, std::bit_cast<uint64_t>(x), direct);
        for (uint64_t got : {got_scalar, got_bulk, got_convert}) {
          if (got != once) {
            bad.add(to.name() + " x=" + oracle::hex(std::bit_cast<uint64_t>(x)) + ": expected " +
                    oracle::hex(once) + " got " + oracle::hex(got));
          }
        }
      }
    }
  }
  EXPECT_GT(traps, 500);
  EXPECT_EQ(bad.count, 0u) << bad.report();
}

// The oracle itself on cases worked out by hand (so that a bug shared by oracle and library
// through a common misunderstanding shows up here).
TEST(Oracle, HandWorkedCases) {
  auto r = [](const Format& f, RoundingMode m, double x) {
    oracle::Oracle o(f);
    uint64_t out[6];
    expect_conversion(o, x, out);
    for (int i = 0; i < 6; ++i) {
      if (oracle::kModes[i] == m) return out[i];
    }
    return uint64_t{999};
  };
  using M = RoundingMode;
  // e4m3fn around 448 (0x7e): 464 is the tie between 448 and (unrepresentable) 480.
  EXPECT_EQ(r(formats::e4m3fn, M::kNearestEven, 464), 0x7eu);
  EXPECT_EQ(r(formats::e4m3fn, M::kNearestAway, 464), 0x7fu);  // away -> 480 -> overflow: NaN
  EXPECT_EQ(r(formats::e4m3fn, M::kNearestEven, 465), 0x7fu);
  EXPECT_EQ(r(formats::e4m3fn, M::kTowardZero, 1e9), 0x7eu);
  EXPECT_EQ(r(formats::e4m3fn, M::kOdd, 449), 0x7eu);  // rto never overflows to NaN
  EXPECT_EQ(r(formats::e4m3fn, M::kUp, 449), 0x7fu);   // up beyond max: "infinity" = NaN
  EXPECT_EQ(r(formats::e4m3fn, M::kDown, -449), 0x7fu);
  EXPECT_EQ(r(formats::e4m3fn, M::kDown, 449), 0x7eu);
  EXPECT_EQ(r(formats::e4m3fn, M::kUp, -449), 0xfeu);
  EXPECT_EQ(r(with(formats::e4m3fn, OverflowPolicy::kSaturate), M::kUp, 1e9), 0x7eu);
  // 1 + 2^-4 (half an ulp of 1 in e4m3): ties.
  EXPECT_EQ(r(formats::e4m3fn, M::kNearestEven, 1.0625), 0x38u);
  EXPECT_EQ(r(formats::e4m3fn, M::kNearestAway, 1.0625), 0x39u);
  EXPECT_EQ(r(formats::e4m3fn, M::kOdd, 1.0625), 0x39u);
  EXPECT_EQ(r(formats::e4m3fn, M::kOdd, 1.0), 0x38u);
  EXPECT_EQ(r(formats::e4m3fn, M::kOdd, 1.125 + 0.01), 0x39u);  // 1.125 is odd already
  EXPECT_EQ(r(formats::e4m3fn, M::kNearestAway, -1.0625), 0xb9u);
  // Subnormals: e4m3fn min subnormal 2^-9.
  EXPECT_EQ(r(formats::e4m3fn, M::kNearestEven, 0x1p-10), 0x00u);  // tie -> 0 (even)
  EXPECT_EQ(r(formats::e4m3fn, M::kNearestAway, 0x1p-10), 0x01u);
  EXPECT_EQ(r(formats::e4m3fn, M::kOdd, 0x1p-30), 0x01u);
  EXPECT_EQ(r(formats::e4m3fn, M::kUp, 0x1p-300), 0x01u);
  EXPECT_EQ(r(formats::e4m3fn, M::kUp, -0x1p-300), 0x80u);
  EXPECT_EQ(r(formats::e4m3fn, M::kNearestEven, 3 * 0x1p-10), 0x02u);  // 1.5 quanta -> 2
  EXPECT_EQ(r(formats::e4m3fnuz, M::kNearestEven, -0x1p-30), 0x00u);   // no -0
  EXPECT_EQ(r(with(formats::e4m3fn, OverflowPolicy::kNan, SubnormalPolicy::kFlush), M::kUp, 0x1p-8),
            0x00u);  // flushed even in rup
  EXPECT_EQ(r(formats::fp16, M::kNearestEven, 65520), 0x7c00u);
  EXPECT_EQ(r(formats::fp16, M::kNearestEven, 65519.99), 0x7bffu);
  EXPECT_EQ(r(formats::fp16, M::kNearestAway, 65520), 0x7c00u);
  EXPECT_EQ(r(formats::fp16, M::kOdd, 1e9), 0x7bffu);
  EXPECT_EQ(r(formats::bf16, M::kNearestEven, std::nan("")), 0x7fc0u);
  EXPECT_EQ(r(formats::e5m2, M::kTowardZero, -INFINITY), 0xfcu);
  EXPECT_EQ(r(formats::e4m3fn, M::kTowardZero, INFINITY), 0x7fu);
  EXPECT_EQ(r(formats::e4m3fnuz, M::kNearestEven, -0.0), 0x00u);
}

// Through the format conversion API for values from the C++ side: unrounded_from_float.
TEST(Conversion, UnroundedFromFloatIsExact) {
  std::mt19937 rng(5);
  for (int i = 0; i < 100000; ++i) {
    const float f = std::bit_cast<float>(static_cast<uint32_t>(rng()));
    if (std::isnan(f)) continue;
    RoundingContext ctx(formats::fp32);
    EXPECT_EQ(round_to_format(formats::fp32, unrounded_from_float(f), {}),
              std::bit_cast<uint32_t>(f));
  }
}

}  // namespace
